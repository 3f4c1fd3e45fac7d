"""The simulator's vocabulary: entities, attributes, relations, semantics and text targets.

Each entry is an (English, Chinese) pair written as "en=zh; en=zh"; entity keys are the English
nouns. The replacement pools at the end are what a rendered-text error draws from (the same
script as the replaced character), and the characters OCR noise blocks are made of.
"""

from __future__ import annotations


def _pairs(text: str) -> tuple[tuple[str, str], ...]:
    return tuple(
        tuple(part.strip() for part in item.split("=")) for item in text.split(";") if item.strip()
    )


ENTITIES: dict[str, tuple[tuple[str, str], ...]] = {
    "humans": _pairs(
        "woman=女人; man=男人; child=孩子; chef=厨师; doctor=医生; astronaut=宇航员; old man=老人;"
        "girl=女孩; boy=男孩; firefighter=消防员; farmer=农民; dancer=舞者; musician=音乐家;"
        "teacher=老师; police officer=警察; student=学生"
    ),
    "animals": _pairs(
        "dog=狗; cat=猫; horse=马; bird=鸟; goldfish=金鱼; elephant=大象; tiger=老虎; rabbit=兔子;"
        "owl=猫头鹰; fox=狐狸; panda=熊猫; deer=鹿; cow=奶牛; butterfly=蝴蝶; turtle=乌龟;"
        "penguin=企鹅"
    ),
    "plants": _pairs(
        "tree=树; rose=玫瑰; sunflower=向日葵; cactus=仙人掌; bamboo=竹子; tulip=郁金香;"
        "fern=蕨类植物; lotus=荷花; maple tree=枫树; orchid=兰花; pine tree=松树; ivy=常春藤"
    ),
    "man_made": _pairs(
        "car=汽车; cup=杯子; chair=椅子; table=桌子; bicycle=自行车; lamp=台灯; book=书;"
        "clock=时钟; umbrella=雨伞; guitar=吉他; house=房子; bridge=桥; bottle=瓶子; vase=花瓶;"
        "laptop=笔记本电脑; boat=小船; kite=风筝; teapot=茶壶; hat=帽子; backpack=背包"
    ),
    "natural_scenes": _pairs(
        "mountain=山; beach=海滩; river=河流; forest=森林; desert=沙漠; waterfall=瀑布; lake=湖泊;"
        "snowfield=雪原; canyon=峡谷; meadow=草地; volcano=火山; island=岛屿"
    ),
}
# Entities that carry rendered text: roots of capability `TEXT_CARRIER_CAPABILITY`.
TEXT_CARRIER_CAPABILITY = "man_made"
TEXT_CARRIERS = _pairs(
    "sign=招牌; poster=海报; banner=横幅; storefront=店面; mug=马克杯; neon sign=霓虹灯牌;"
    "T-shirt=T恤; book cover=书的封面"
)
TEXT_CAPABILITY = "text_rendering"
# Latin and Chinese targets; 𠮷 (U+20BB7) and 𩸽 (U+29E3D) lie outside the BMP.
_TARGETS = (
    "OPEN|Cafe Luna|SALE 50%|EXIT|Hello World|NO PARKING|Happy Birthday|Fresh Bread|Bus Stop 42|"
    "STOP|Jazz Night|Book Club|OPEN 24H|Welcome|欢迎光临|福|新年快乐|禁止吸烟|出口|营业中|"
    "好好学习|茶馆|天天向上|平安喜乐|𠮷野家|𩸽定食"
)
TEXT_TARGETS = tuple(_TARGETS.split("|"))

# Attribute values: English predicate ("Is the dog {v}?"), Chinese ("狗是{v}的吗？").
ATTRIBUTES: dict[str, tuple[tuple[str, str], ...]] = {
    "color": _pairs(
        "red=红色; blue=蓝色; green=绿色; yellow=黄色; white=白色; black=黑色; brown=棕色;"
        "purple=紫色; orange=橙色; pink=粉色; gray=灰色; golden=金色"
    ),
    "shape": _pairs(
        "round=圆形; square=方形; triangular=三角形; oval=椭圆形; hexagonal=六边形;"
        "star-shaped=星形; cylindrical=圆柱形; heart-shaped=心形"
    ),
    "material": _pairs(
        "made of wood=木头做; made of glass=玻璃做; made of metal=金属做; made of stone=石头做;"
        "made of paper=纸做; made of ceramic=陶瓷做; made of plastic=塑料做; made of gold=黄金做"
    ),
    "texture": _pairs(
        "fluffy=毛茸茸; smooth=光滑; rough=粗糙; glossy=有光泽; wrinkled=皱巴巴; bumpy=凹凸不平;"
        "silky=丝滑; furry=多毛"
    ),
    "lighting": _pairs(
        "lit by candlelight=被烛光照亮; backlit=逆光; lit by neon light=被霓虹灯照亮;"
        "in shadow=在阴影中; lit by a spotlight=被聚光灯照亮; glowing in moonlight=在月光下发光"
    ),
    "state": _pairs(
        "sleeping=在睡觉; wet=湿; broken=破损; melting=在融化; running=在奔跑; open=打开;"
        "frozen=结冰; on fire=着火"
    ),
}

# Relations: English ("Is the A {p} the B?"), Chinese clause with {a} and {b}.
RELATIONS: dict[str, tuple[tuple[str, str], ...]] = {
    "spatial": _pairs(
        "next to={a}在{b}旁边; on top of={a}在{b}上面; under={a}在{b}下面; behind={a}在{b}后面;"
        "in front of={a}在{b}前面; to the left of={a}在{b}左边; inside={a}在{b}里面"
    ),
    "interaction": _pairs(
        "holding={a}拿着{b}; looking at={a}看着{b}; touching={a}碰着{b}; chasing={a}在追{b};"
        "riding={a}骑着{b}; feeding={a}在喂{b}; pushing={a}在推{b}"
    ),
    "part_whole": _pairs(
        "attached to={a}固定在{b}上; part of={a}是{b}的一部分; hanging from={a}挂在{b}上;"
        "growing out of={a}从{b}里长出来"
    ),
    "quantification_comparison": _pairs(
        "larger than={a}比{b}大; smaller than={a}比{b}小; taller than={a}比{b}高;"
        "twice as big as={a}是{b}的两倍大"
    ),
}

# Semantics as a global root: ((en question, zh question, en phrase, zh phrase), values).
SEMANTICS_GLOBAL: dict[str, tuple[tuple[str, str, str, str], tuple[tuple[str, str], ...]]] = {
    "style": (
        ("Is the image in {v} style?", "图像是{v}风格吗？", "in {v} style", "{v}风格"),
        _pairs(
            "watercolor=水彩; oil painting=油画; pixel art=像素艺术; ukiyo-e=浮世绘;"
            "photorealistic=照片写实; ink wash=水墨画; cyberpunk=赛博朋克; 3D render=三维渲染"
        ),
    ),
    "temporal_setting": (
        ("Is the scene set {v}?", "场景设定在{v}吗？", "set {v}", "设定在{v}"),
        _pairs(
            "at night=夜晚; in winter=冬天; during the Tang dynasty=唐朝;"
            "in the 1920s=二十世纪二十年代; at sunrise=日出时分; in autumn=秋天"
        ),
    ),
    "emotion_atmosphere": (
        ("Does the scene feel {v}?", "场景的氛围是{v}的吗？", "with a {v} atmosphere", "氛围{v}"),
        _pairs("cozy=温馨; eerie=诡异; joyful=欢乐; melancholic=忧郁; tense=紧张; peaceful=宁静"),
    ),
    "scientific_cultural_knowledge": (
        (
            "Does the image correctly depict {v}?",
            "图像正确地描绘了{v}吗？",
            "showing {v}",
            "展现{v}",
        ),
        _pairs(
            "a lunar eclipse=月食; a rainbow with red on the outside=外圈为红色的彩虹;"
            "the Dragon Boat Festival=端午节; a DNA double helix=DNA双螺旋;"
            "a Peking opera mask=京剧脸谱; the phases of the moon=月相"
        ),
    ),
    "logical_constraints": (
        (
            "Does the image satisfy the constraint that {v}?",
            "图像满足“{v}”这一约束吗？",
            "where {v}",
            "其中{v}",
        ),
        _pairs(
            "no people appear=没有人出现; nothing is red=没有任何红色物体;"
            "exactly one light source is visible=只有一个可见光源;"
            "no object casts a shadow=没有物体投下影子"
        ),
    ),
}

# Semantics attached to an entity {e}: (en question, zh question, en phrase, zh phrase).
SEMANTICS_ON_ENTITY: dict[str, tuple[tuple[str, ...], ...]] = {
    cap: tuple(tuple(part.strip() for part in row.split("|")) for row in rows)
    for cap, rows in {
        "style": (
            "Is the {e} drawn in pixel-art style?|{e}是像素风格的吗？|the {e} drawn in pixel art|"
            "{e}为像素风格",
            "Is the {e} painted in ink-wash style?|{e}是水墨画风格的吗？|"
            "the {e} painted in ink wash|{e}为水墨画风格",
        ),
        "temporal_setting": (
            "Is the {e} shown in winter?|{e}处于冬天吗？|the {e} in winter|冬天的{e}",
            "Is the {e} shown at sunset?|{e}处于日落时分吗？|the {e} at sunset|日落时分的{e}",
        ),
        "emotion_atmosphere": (
            "Does the {e} look joyful?|{e}看起来很快乐吗？|the {e} looks joyful|{e}看起来很快乐",
            "Does the {e} look lonely?|{e}看起来很孤独吗？|the {e} looks lonely|{e}看起来很孤独",
        ),
        "scientific_cultural_knowledge": (
            "Does the {e} cast a shadow consistent with the light source?|"
            "{e}的影子与光源方向一致吗？|the {e} casts a physically correct shadow|"
            "{e}的影子符合物理规律",
            "Is the {e} reflected correctly in the water?|{e}在水中的倒影正确吗？|"
            "the {e} is reflected in the water|{e}倒映在水中",
        ),
        "logical_constraints": (
            "Is the {e} not touching the ground?|{e}没有接触地面吗？|"
            "the {e} does not touch the ground|{e}不接触地面",
            "Is there no other {e} in the image?|画面中没有其他{e}吗？|there is only one {e}|"
            "只有一个{e}",
        ),
    }.items()
}

# Replacement pools for rendered-text errors (same script as the replaced character).
_UPPER = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
_LOWER = "abcdefghijklmnopqrstuvwxyz"
_DIGITS = "0123456789"
_PUNCT = "!#&*+=?@~-_:;"
_CJK = (
    "的一是不了人我在有他这中大来上国个到说们为子和你地出道也时年得就那要下以生会自着去之过家"
    "学对可她里后小么心多天而能好都然没日于起还发成事只作当想看文无开手十用主行方又如前所本见经头"
)
_SPURIOUS = "|·•○◇"  # OCR noise blocks: characters no target uses
