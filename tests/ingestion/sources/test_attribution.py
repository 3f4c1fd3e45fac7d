"""Attribution accuracy on the labelled set (tests/worlds/attribution_labels.jsonl: 476 questions
of the project's own wording in TIIF-Bench's and OneIG-Bench's forms, each labelled by hand with a
reason, docs/attribution.md's conventions), attributed as the converters attribute them: TIIF's
`concept_questions` and OneIG's `map_question`.

Issue 32 asks for 90 % overall and 80 % for every capability with 10 or more questions. The set
is the rules' development set (they were improved against it: 74.4 % before, 98.9 % after the
third round), so it guards against regressions; the figure users meet is the blind-labelled
sample of the real releases in bench/RESULTS.md ("Attribution"). A rule planted wrong (say
"holding" read as spatial) drops interaction below its floor. The questions by hand below are
invented, one or more per rule of docs/attribution.md's third round, each worked by hand from
its conventions.
"""

from __future__ import annotations

import json
from collections import Counter

import pytest

from ingestion.bundle.load import default_capabilities
from ingestion.paths import PROJECT_ROOT
from ingestion.sources import oneig_questions, tiif_questions
from ingestion.sources.attribution import attribute_en, attribute_zh

pytestmark = pytest.mark.unit

LABELS = PROJECT_ROOT / "tests/worlds/attribution_labels.jsonl"
OVERALL_FLOOR = 0.90  # the issue's; measured 471 of 476
CAPABILITY_FLOOR = 0.80  # the issue's, for every capability with 10 or more questions


@pytest.fixture(scope="module")
def attributed() -> list[tuple[dict, str]]:
    capabilities = default_capabilities()
    oneig, problems = oneig_questions.read_rules(capabilities)
    tiif, tiif_problems = tiif_questions.read_rules(capabilities)
    assert problems == tiif_problems == []
    rows = [json.loads(line) for line in LABELS.read_text(encoding="utf-8").splitlines()]
    found = []
    for row in rows:
        if row["release"] == "tiif":
            (question,) = tiif_questions.concept_questions(
                row["category"], [row["question"]], [row["compliant"]], tiif
            )
            found.append((row, question.capability))
        else:
            category = oneig.categories[row["category"]]
            mapped = oneig_questions.map_question(row["question"], row["language"], category, oneig)
            found.append((row, mapped.capability))
    return found


@pytest.fixture(scope="module")
def oneig_rules() -> oneig_questions.QuestionRules:
    return oneig_questions.read_rules(default_capabilities())[0]


def test_the_labelled_set_covers_every_capability_in_both_languages(attributed):
    """The set is what the issue asks for: 400+ questions, every capability, both languages."""
    counts = Counter((row["capability"], row["language"]) for row, _ in attributed)
    assert len(attributed) >= 400
    for capability in default_capabilities():
        assert counts[(capability, "en")] >= 4 and counts[(capability, "zh")] >= 4, capability


def test_attribution_accuracy_holds_its_floors(attributed):
    right, total = Counter(), Counter()
    for row, capability in attributed:
        total[row["capability"]] += 1
        right[row["capability"]] += capability == row["capability"]
    for capability in sorted(total, key=lambda c: right[c] / total[c]):
        print(f"{capability:30} {right[capability]:3}/{total[capability]:3}")
    overall = sum(right.values()) / sum(total.values())
    print(f"overall {sum(right.values())}/{sum(total.values())} = {overall:.1%}")
    assert overall >= OVERALL_FLOOR
    for capability in total:
        if total[capability] >= 10:
            assert right[capability] / total[capability] >= CAPABILITY_FLOOR, capability


@pytest.mark.parametrize(
    ("text", "capability"),
    [
        # the subject's colour word never decides: the predicate does
        ("Is the red car parked on the street?", "state"),  # its own posture, a place beside
        ("Are the chairs blue in color?", "color"),
        # possession: worn or held is interaction, a part part_whole, a quality of it state
        ("Does the character have a jacket?", "interaction"),
        ("Does the girl have cat ears?", "part_whole"),
        ("Does the girl have long hair?", "state"),
        # a person's emotion is her state, a scene's mood its atmosphere
        ("Is the woman happy?", "state"),
        ("Is the scene gloomy?", "emotion_atmosphere"),
        ("Is the boy made of fabric?", "material"),
        ("Is the man holding an umbrella?", "interaction"),
        # a posture with a place: an animal's posture, a thing's position (convention 3)
        ("Is the dog lying on the rug?", "state"),
        ("Is the lamp standing beside the sofa?", "spatial"),
        ("Is the vase left of the clock?", "spatial"),
        ("Does the curtain hide the window?", "spatial"),  # occlusion is where, not an action
        ("Is the scene set at night?", "temporal_setting"),  # "set" with a time stays a time
        ("Is the man elderly?", "state"),  # an age is a condition, as 男子年长吗
        ("Is the statue lifelike?", "style"),  # the rendering, whatever the subject
        ("Is the room bathed in warm light?", "lighting"),
        ("Is the poster blank?", "logical_constraints"),  # an absence
        ("Is the old barn desolate?", "emotion_atmosphere"),  # what a thing conveys
        ("Is the waiter behind the bar cheerful?", "state"),  # the person's, not the bar's
        ("Is the print in the style of old woodcut prints?", "style"),  # "prints" no adjective
        ("Is this a pencil sketch?", "style"),  # what the whole image is: a medium
        ("Is this a rainy autumn evening?", "temporal_setting"),
        ("Is this scene gloomy?", "emotion_atmosphere"),  # no article: read by its predicate
        ("Is the cherry tree in full bloom?", "state"),  # a condition, not a place
        ("Is her hand on her hip?", "state"),  # the body's own pose
        ("Is the valley forested?", "natural_scenes"),
        ("Does the statue symbolize freedom?", "emotion_atmosphere"),  # what it conveys
        ("Does the rug have stripes?", "texture"),  # a surface pattern, no part
        ("Do the twins have genuine smiles?", "state"),  # realism words need a scene owner
        ("Is the scarf black and white?", "color"),  # a thing's colours, not a rendering
        ("Is the lamp vintage?", "style"),  # a look, as 复古 (not an era)
        ("Is the coat light blue?", "color"),  # a shade, not light
        ("Is the boy's hair styled in a quiff?", "state"),  # a hairstyle, not a rendering
        ("Is the pendant in the shape of a star?", "shape"),  # not a place
        ("Is the image high resolution?", "style"),  # the image's, whatever the split
        ("Is the dog sitting on the Moon?", "state"),  # the Moon is no named landmark
        ("Are the rivers drawn in the correct order?", "scientific_cultural_knowledge"),
        ("Are the whale's fins massive?", "quantification_comparison"),  # as 巨大
        ("Does the mural reflect local culture?", "scientific_cultural_knowledge"),  # not light
        ("Does the woman have dyed hair?", "state"),  # a quality of the part
        ("Is she holding a lantern?", "interaction"),  # a pronoun is the whole subject
        ("Is the helmet gleaming?", "lighting"),
        ("Is the clock antique?", "style"),  # a look, as vintage
        ("Does the painting capture a quiet moment?", "emotion_atmosphere"),  # no action
        ("Does the background include a traditional pagoda?", "scientific_cultural_knowledge"),
        ("Does the soldier have a rifle?", "interaction"),  # a person's artifact: held
        ("Does the girl have her eyes closed?", "state"),  # the part's condition
        ("Does the scene have warm colors?", "color"),
        ("Does the image show a person?", "humans"),  # not WordNet's first sense, a body
        ("Is the chef slicing fresh carrots?", "interaction"),  # a verb on a bare noun
        ("Are the hills stunning green?", "color"),  # an -ing adjective, then a colour
        ("Is the knight female?", "humans"),  # a kind of person (WordNet's person)
        ("Is the fox amidst the reeds?", "spatial"),
        ("Does the boy have multicolored hair?", "color"),
        ("Is this an animated film still?", "style"),
        ("Is the poster's aesthetic bold and minimal?", "style"),  # the subject names a style
        ("Does the cake look festive?", "emotion_atmosphere"),  # a mood, not a custom
        ("Do the pirates have wicked grins?", "state"),  # an expression owned
        ("Does the boy have buzzed hair?", "state"),  # a quality of the part
        ("Is the tile pentagonal?", "shape"),
        ("Does the poster use muted tones?", "color"),  # the image's colours, no action
    ],
)
def test_english_predicates_by_hand(oneig_rules, text, capability):
    """The issue's spot-check failures, each worked by hand from docs/attribution.md."""
    cues = oneig_rules.cues["en"]
    assert attribute_en(text, cues).capability == capability


@pytest.mark.parametrize(
    ("text", "capability"),
    [
        ("运动员在球场上扣杀吗？", "interaction"),  # the action, not the place
        ("少女的头发是灰色的吗？", "color"),
        ("少女在微笑吗？", "state"),
        ("光线是否柔和？", "lighting"),
        ("歌手在吟唱吗？", "state"),  # was the Multilingualism default (knowledge)
        ("杯子在桌子上吗？", "spatial"),
        ("书放在架子上吗？", "spatial"),  # placed: a thing's position, no posture
        ("花瓶是否被鲜花环绕？", "spatial"),
        ("男孩穿的是蓝色外套吗？", "interaction"),  # what he wears, not its colour
        ("大象是巨大的吗？", "quantification_comparison"),  # a size against the scene
        ("女孩穿着迷你裙吗？", "interaction"),  # 迷你 names the skirt, not a size
        ("咖啡馆是否温馨？", "emotion_atmosphere"),  # a place's mood
        ("雕像在微笑吗？", "state"),  # a face's expression
        ("右侧是否有一棵树？", "spatial"),  # a place in the frame
        ("舞者在庙会上吗？", "scientific_cultural_knowledge"),  # an occasion, a custom
        ("景色是否逼真？", "style"),  # a lifelike rendering
        ("宝石在闪闪发亮吗？", "lighting"),  # its shine, not its own action
        ("篝火的光辉是否温暖？", "lighting"),  # the glow's quality, not a mood
        ("机器人是否在仓库内部？", "spatial"),  # 内部 is a place, not an action after it
        ("树叶散落在地面吗？", "spatial"),  # 地面 is a place
        ("小狗靠近篮子吗？", "spatial"),  # near another entity
        ("一家人在享用晚餐吗？", "interaction"),  # eating
        ("照片的景深是否很浅？", "style"),  # the rendering named in the subject
        ("苹果的大小是否一样？", "quantification_comparison"),  # a size comparison
        ("舞者有优雅的姿态吗？", "state"),  # her own pose, not a part
        ("男孩有一套校服吗？", "interaction"),  # worn
        ("游客是否在天坛前？", "scientific_cultural_knowledge"),  # a landmark, not a place
        ("花瓶是否置于窗台上？", "spatial"),  # placed
        ("少女有戴发卡吗？", "interaction"),  # 有戴: worn
        ("台灯是复古的吗？", "style"),  # vintage is a look, not an era
        ("少年的目光望向大海吗？", "interaction"),  # a gaze at something, not light
        ("蜡烛有燃烧的火焰吗？", "state"),  # the owned thing's condition
        ("骑士是否有腰带？", "interaction"),  # worn
        ("这个盒子是用于存放茶叶的吗？", "state"),  # 用于 is a use, not 用...制 a material
    ],
)
def test_chinese_predicates_by_hand(oneig_rules, text, capability):
    cues = oneig_rules.cues["zh"]
    assert attribute_zh(text, cues).capability == capability


@pytest.mark.parametrize(
    ("text", "capability"),
    [
        ("Are there children carrying kites?", "humans"),  # the people; the rest modifies them
        ("Is there a lamp on the desk?", "spatial"),  # placed relative to another entity
        ("Are there rings on the woman?", "interaction"),  # worn by the person named
        ("Is there a lamp on the left?", "spatial"),  # a place in the frame
        ("Is there a scar on the left arm?", "part_whole"),  # "left arm" is no frame position
        ("Is there a photograph?", "style"),  # the medium of the whole image
        ("Is there a backdrop?", "spatial"),  # a region of the frame, as a background
        ("Is there a robot wearing a cape?", "man_made"),  # the wearer is the thing asked for
        ("Is there a cape worn by the robot?", "interaction"),  # the thing worn
        ("Is there traditional pottery?", "scientific_cultural_knowledge"),
        ("Is there a plunger?", "man_made"),  # WordNet: the tool it heads, not a person
        ("Are there peaches?", "man_made"),  # fruit is food (convention 1), not a plant
        ("Are there eyebrows?", "part_whole"),  # a part of a body, not a person
        ("Is there a mole?", "part_whole"),
        ("Are there fine details?", "style"),  # the level of detail: the rendering
        ("Are there shadow details?", "lighting"),
        ("Is there a handwritten quote?", "text_rendering"),
        ("Is there bold typography arranged along the top?", "text_rendering"),  # runs on
    ],
)
def test_english_existence_by_hand(oneig_rules, text, capability):
    """Existence questions as OneIG's converter reads them (convention 1); guards the head
    noun against its modifiers, the place rules and the WordNet sense choice."""
    rules = oneig_rules
    category = rules.categories["General_Object"]
    assert oneig_questions.map_question(text, "en", category, rules).capability == capability


@pytest.mark.parametrize(
    ("text", "capability"),
    [
        ("这是一张照片吗？", "style"),  # what the whole image is: a medium
        ("这是一幅山水画吗？", "style"),
        ("这是一个厨房吗？", "man_made"),  # the noun list's room
        ("这是一场婚礼吗？", "scientific_cultural_knowledge"),  # a ceremony, a custom
        ("前景存在吗？", "spatial"),  # a region of the frame, as "Is there a foreground?"
        ("有橘子吗？", "man_made"),  # fruit is food (convention 1)
        ("是否有一位法官？", "humans"),  # 官: a kind of person (noun seed suffix)
        ("这有一把椅子吗？", "man_made"),  # 这有: an existence question
        ("有长发吗？", "part_whole"),  # a part exists only as a part (convention 1)
        ("是否有手臂？", "part_whole"),
        ("有沙发吗？", "man_made"),  # 沙发 is no hair
        ("画面中是否有丰富的细节？", "style"),  # as "Are there fine details?"
        ("是否有一位歌手？", "humans"),  # 手 ends a person here
    ],
)
def test_chinese_identity_and_existence_by_hand(oneig_rules, text, capability):
    """这是...吗 read as what the image is (where a rule or the noun list knows it), as OneIG's
    converter reads it; guards the identity form and the existence form whose noun ends in 存在."""
    rules = oneig_rules
    category = rules.categories["General_Object"]
    assert oneig_questions.map_question(text, "zh", category, rules).capability == capability
