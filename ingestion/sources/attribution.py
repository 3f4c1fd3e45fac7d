"""A question's capability by its core predicate (METHOD 13a, docs/attribution.md): the part of
the question after its subject, read for the one requirement a compliant answer asserts. The
converters of TIIF-Bench and OneIG-Bench try their release's own forms first (quoted text,
existence, TIIF's logic statements) and then this; it never reads the category a release filed
the prompt under.

Existence questions first say what kind of thing is there (`existence_kind`: an absence, a
part, text, light, a place in the frame, a named thing), then WordNet's nouns stand in for the
noun lists of seeds/ (`wordnet_capability`). Any other question is split into its subject ("the
girl's hair", 少女的头发) and its predicate ("grey", 是灰色的); the predicate's form and words
decide (`attribute_en`, `attribute_zh`: the order of their checks is docs/attribution.md's), the
cue lists of `seeds/oneig_cue_words.csv` read on the predicate only, so a word of the subject
("Is the red car parked?") never does. Where nothing fires, the form's default: an attribute of
one thing is its condition (`state`), a whole-image quality `emotion_atmosphere`. Each answer
names the rule that gave it (`capability_source` = `rule:<name>`); None means the question has
no form read here.
"""

from __future__ import annotations

import csv
import re
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from ingestion.bundle import Problem
from ingestion.paths import SEEDS_DIR

DEFAULT_CUE_WORDS = SEEDS_DIR / "oneig_cue_words.csv"
LANGUAGES = ("en", "zh")
TEXT = "text_rendering"
COUNT = "quantification_comparison"

# What the cue seed may name: the attributes, relations and whole-image qualities a predicate
# names, and `humans` (a kind of person: "Is the woman young?")
CUE_CAPABILITIES = (
    TEXT,
    "style",
    COUNT,
    "interaction",
    "spatial",
    "color",
    "shape",
    "material",
    "texture",
    "lighting",
    "temporal_setting",
    "state",
    "emotion_atmosphere",
    "part_whole",
    "humans",
)


@dataclass(frozen=True)
class Attribution:
    capability: str
    rule: str  # the rule's name: `capability_source` is `rule:<name>`


def _words_of(listed: str) -> frozenset[str]:
    return frozenset(listed.split())


Cues = dict[str, dict[str, frozenset[str]]]  # language -> capability -> cue words


def read_cue_words(
    capabilities: set[str], path: Path = DEFAULT_CUE_WORDS
) -> tuple[Cues, list[Problem]]:
    """The cue words per language and capability (lower case), and a problem for every row
    whose language is not en or zh, or whose capability no cue rule reads (`CUE_CAPABILITIES`)
    or the taxonomy lacks."""
    cues: dict[str, dict[str, set[str]]] = {language: defaultdict(set) for language in LANGUAGES}
    problems = []
    with path.open(newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        for row in reader:
            language, capability = (
                (row["language"] or "").strip(),
                (row["capability"] or "").strip(),
            )
            if language not in cues or capability not in CUE_CAPABILITIES:
                reason = f"{language}/{capability} is no cue rule's language/capability"
                problems.append(Problem(path.name, reader.line_num, reason))
            elif capability not in capabilities:
                problems.append(
                    Problem(path.name, reader.line_num, f"{capability!r} is no capability")
                )
            else:
                cues[language][capability].add((row["cue"] or "").strip().lower())
    frozen = {
        lang: {cap: frozenset(words) for cap, words in by.items()} for lang, by in cues.items()
    }
    return frozen, problems


# The rules that only fall back: their questions count as attributed by default.
FALLBACK_RULES = {
    "category": "default:{category}",  # OneIG's category map
    "dimension": "default:{category}",  # TIIF's dimension map
    "capability_unmapped": "default:unmapped",
    "entity_noun_unlisted": "default:entity_noun_unlisted",
}


def capability_source(rule: str, category: str) -> str:
    """`rule:<name>`, or `default:...` for a fallback rule."""
    fallback = FALLBACK_RULES.get(rule)
    return fallback.format(category=category) if fallback else f"rule:{rule}"


# -- existence: what kind of thing is said to be there -------------------------------------------

WORDNET_NOUNS = Path(__file__).with_name("lexicons") / "wordnet_nouns.tsv"
_EN_NEGATION = _words_of("no not nothing none nobody without never empty free blank")
_EN_TEXT_THINGS = _words_of(
    "text texts writing words word letters lettering caption captions inscription slogan title "
    "headline font typography logo label labels handwriting signature number numbers digits "
    "note notes quote quotes annotation annotations paragraph paragraphs"
)
_EN_LIGHT_THINGS = _words_of(
    "shadow shadows glow glows light lights reflection reflections sunlight moonlight sunbeam "
    "sunbeams beam beams highlight highlights halo sparkle sparkles lighting illumination rays"
)
_ZH_NEGATION = re.compile(
    r"(?<!有)没有|(?<!有)没(?!有)|空无|空荡|(?<!天)空的|(?<!天)空着|无人|无一|不含"
)
_ZH_TEXT_THINGS = ("文字", "字样", "字母", "标语", "标题", "题字", "签名", "数字", "字")
_ZH_LIGHT_THINGS = tuple(
    ["影子", "阴影", "光晕", "光芒", "光线", "灯光", "阳光", "月光", "倒影", "反光", "光"]
)
# A capitalised word past the first, not in capitals throughout ("ID"), names a particular
# person, place or work: only world knowledge can judge it (docs/attribution.md, 1 and 8)
_PROPER_NAME = re.compile(
    r"(?<=[\s(])(?!I\b)(?:[A-Z][a-z]+(?:\s+(?:of\s+|de\s+)?[A-Z][a-z]+)+|(?<=the\s)[A-Z][a-z]+)"
)
_NATIONALITY = re.compile(r"^[A-Z][a-z]+(?:an|ese|ish|ch|i)$")


def proper_name(text: str) -> bool:
    unquoted = re.sub(r"'[^']*'|\"[^\"]*\"|“[^”]*”", "", text).split(" Answer with")[0]
    unquoted = re.sub(r"\bthe (?:Moon|Sun|Earth|Sky)\b", "the thing", unquoted)  # common nouns
    return any(
        not all(_NATIONALITY.match(word) for word in name.group(0).split() if word[0].isupper())
        for name in _PROPER_NAME.finditer(unquoted)
    )


def existence_kind(text: str, head: str, phrase: str, language: str) -> Attribution | None:
    """The capability of an existence question whose thing is not an entity of its own: an
    absence, a part, text, light or a named thing (docs/attribution.md, 1 and 7); None when it
    is an entity (the noun lists decide)."""
    if language == "en":
        return _en_existence_kind(text, head, phrase)
    if _ZH_NEGATION.search(text):
        return Attribution("logical_constraints", "existence_absence")
    if re.match(r"^(?:这|这里|这儿)(?:是否是|是不是|就是|是)", text) and (
        any(medium in text for medium in _ZH_MEDIA) or head.endswith("画")
    ):
        return Attribution("style", "existence_medium")  # 这里是一张照片吗？: the medium
    if any(head.endswith(part) for part in _ZH_EXISTING_PARTS) and not head.endswith(
        ("手", "人")  # 歌手, 对手: people
    ):
        return Attribution("part_whole", "existence_part")
    if any(head.endswith(thing) for thing in _ZH_TEXT_THINGS):
        return Attribution(TEXT, "existence_text")
    if any(head.endswith(thing) for thing in _ZH_LIGHT_THINGS):
        return Attribution("lighting", "existence_light")
    if any(word in head for word in _ZH_KNOWLEDGE):
        return Attribution("scientific_cultural_knowledge", "existence_named")
    if head.endswith("细节"):  # the level of detail: the rendering, as "Are there fine details?"
        return Attribution("style", "existence_medium")
    if head in ("背景", "前景"):  # a region of the frame, as "Is there a background?"
        return Attribution("spatial", "existence_placed")
    if any(word in head for word in ("色调", "配色", "颜色")):  # 大地色调的配色方案
        return Attribution("color", "existence_color")
    return None


def _en_existence_kind(text: str, head: str, phrase: str) -> Attribution | None:
    lowered = text.lower()
    words = phrase.lower().split()
    person = head in _EN_PEOPLE or wordnet_capability(word_forms(head)) == "humans"
    if set(words[:2]) & _EN_NEGATION:
        return Attribution("logical_constraints", "existence_absence")
    # "Is there a jacket that the girl is wearing?"; not "Are there people wearing hoodies?",
    # whose head is the people (convention 1: the rest modifies them)
    if _EN_WORN_FORM.search(lowered) and not person:
        return Attribution("interaction", "existence_worn_or_held")
    if head in ("background", "foreground", "backdrop") or _EN_FRAME_POSITION.search(lowered):
        return Attribution("spatial", "existence_placed")
    if head in _EN_BODY_PARTS or head.removesuffix("s") in _EN_BODY_PARTS:
        return Attribution("part_whole", "existence_part")
    named = words[: next((at for at, w in enumerate(words) if w in _EN_PREPOSITIONS), None)]
    if head in _EN_TEXT_THINGS or set(named) & _EN_TEXT_THINGS:  # "typography arranged ..."
        return Attribution(TEXT, "existence_text")
    if head in _EN_LIGHT_THINGS:
        return Attribution("lighting", "existence_light")
    if proper_name(text) or head in _EN_KNOWLEDGE_THINGS or set(words) & _EN_KNOWLEDGE:
        return Attribution("scientific_cultural_knowledge", "existence_named")
    if head in ("detail", "details") and set(words) & (_EN_LIGHT_THINGS | {"reflection"}):
        return Attribution("lighting", "existence_light")  # "reflection details": light's
    if head in _EN_MEDIA or head in ("detail", "details"):
        return Attribution("style", "existence_medium")  # "Is there a photograph?": the medium
    return _en_existence_placed(lowered, head)


# A medium of the whole image, and the words of a lifelike rendering (convention 6)
_EN_MEDIA = _words_of("photograph photography photo image illustration rendering render")
_EN_REALISM = _words_of(
    "realistic photorealistic photorealism lifelike true-to-life hyperrealistic hyper-realistic "
    "authentic genuine retro vintage antique"
)
_EN_KNOWLEDGE_THINGS = _words_of("folklore legend legends myth myths mythology tale tales fable")
# a place relative to another entity ("Is there bread on the table?"), not containment in the
# frame or a room ("in the image", "in the box": the entity is the requirement)
_EN_RELATIVE_PLACE = re.compile(
    r"\b(?:on top of|in front of|next to|on|under|underneath|beneath|behind|beside|above|below|"
    r"near|atop|between|against|along)\s+(?:the|a|an|his|her|its|their|some|two)\s+"
    r"(?P<object>[a-z' -]+?)(?=\s+(?:in|on|with|at|and)\b|[?.,]|$)"
)


def _en_existence_placed(lowered: str, head: str) -> Attribution | None:
    """ "Is there bread on the table?": where the thing is, relative to another one (convention
    3), unless it is worn by the person named there ("Are there earrings on the girl?")."""
    place = _EN_RELATIVE_PLACE.search(lowered.split(" answer with")[0])
    if place is None:
        return None
    placed_on = place["object"].split()[-1]
    worn = (head in _EN_WORN_OR_HELD or head.removesuffix("s") in _EN_WORN_OR_HELD) and not (
        head.startswith(("tattoo", "makeup"))
    )
    on_body = placed_on in _EN_BODY_PARTS or placed_on.removesuffix("s") in _EN_BODY_PARTS
    on_person = placed_on in _EN_PEOPLE or wordnet_capability(word_forms(placed_on)) == "humans"
    if (worn and (on_body or on_person)) or (
        on_person and wordnet_capability(word_forms(head)) == "man_made"
    ):  # "Are there earrings on the girl?", "Is there headgear on the knight?"
        return Attribution("interaction", "existence_worn_or_held")
    if on_person:  # "Is there a smile on the girl?": what she has, read as an entity
        return None
    if on_body:  # "Is there a tattoo on the arm?": a mark of the body
        return Attribution("part_whole", "existence_part")
    return Attribution("spatial", "existence_placed")


# the thing is worn or held by someone else ("a jacket worn by the girl", "a cup that she is
# holding"), not the wearer ("a teddy bear wearing a bow tie": the bear is the thing)
_EN_WORN_FORM = re.compile(
    r"\b(?:worn|held by|carried by)\b|\b(?:that|which)\b.*\b(?:wearing|holding|carrying)\b"
)
# a place in the frame, not relative to another entity ("Is there a window on the left?")
_EN_FRAME_POSITION = re.compile(
    r"\b(?:on|in|at|to) the (?:left|right|top|bottom|upper|lower|center|centre|middle|corner|"
    r"background|foreground)(?:\s+(?:side|corner|half|part|edge))?"
    r"(?=\s*(?:[?.,]|$|of the (?:image|picture|photo|frame|scene)|answer\b))"
)
_IRREGULAR_PLURALS = {
    "people": "person",
    "men": "man",
    "women": "woman",
    "children": "child",
    "feet": "foot",
    "teeth": "tooth",
    "geese": "goose",
    "mice": "mouse",
    "knives": "knife",
    "leaves": "leaf",
    "shelves": "shelf",
    "wolves": "wolf",
    "scarves": "scarf",
}


def word_forms(word: str) -> set[str]:
    """The word and what it is if it is a plural ("cups" -> cup, "berries" -> berry, "boxes" ->
    box, "people" -> person): two words name the same thing when their forms meet."""
    forms = {word}
    if word in _IRREGULAR_PLURALS:
        forms.add(_IRREGULAR_PLURALS[word])
    if len(word) > 3 and word.endswith("ies"):
        forms.add(word[:-3] + "y")
    if len(word) > 3 and word.endswith("es"):
        forms.add(word[:-2])
    if len(word) > 2 and word.endswith("s") and not word.endswith("ss"):
        forms.add(word[:-1])
    return forms


_wordnet: dict[str, str] = {}


def participle_after_noun(word: str, before: list[str]) -> bool:
    """Whether `word` is a verb's -ing form that follows its noun and so ends the noun phrase
    ("a character | sipping from a cup", "children | carrying kites"), not a modifier before
    its noun ("a glowing lantern") or a noun itself ("a painting")."""
    return (
        len(word) > 4
        and word.endswith("ing")
        and bool(before)
        and wordnet_capability(word_forms(before[-1])) is not None
        and wordnet_capability({word}) is None
    )


def wordnet_capability(forms: set[str]) -> str | None:
    """The entity capability WordNet's most frequent common sense gives one of the noun's forms
    (lexicons/wordnet_nouns.tsv), or None."""
    if not _wordnet:
        for line in WORDNET_NOUNS.read_text(encoding="utf-8").splitlines():
            if line and not line.startswith("#"):
                noun, capability = line.split("\t")
                _wordnet[noun] = capability
    for form in sorted(forms, key=len, reverse=True):
        if form in _wordnet:
            return _wordnet[form]
    return None


# -- English ---------------------------------------------------------------------------------------

_EN_DETERMINERS = _words_of(
    "the a an this that these those his her its their one each every all both some any my our "
    "your another other"
)
# The subject ends before the first of these (or before a word a cue list has, or an -ing/-ed
# verb): what follows is the predicate.
_EN_PREPOSITIONS = _words_of(
    "in on at with without of near next behind under above below beside besides between to from "
    "by for like inside outside atop against along across around among amid amidst through over "
    "onto "
    "into toward towards underneath beneath within upon"
)
_EN_SPATIAL_STARTS = _words_of(
    "in on at near next behind under above below beside between inside outside atop against amidst "
    "along across around among amid over onto into underneath beneath within upon positioned "
    "placed located situated"
)
_EN_LINKS = _words_of("is are was were be being been does do did has have had can")
_EN_SCENE_SUBJECTS = _words_of(
    "scene image picture photo photograph painting artwork illustration setting environment "
    "atmosphere mood ambiance ambience overall composition background foreground view "
    "it this world tone vibe feel feeling layout design composition perspective photos photographs "
    "backdrop scenery "
    "images pictures shot frame artwork"
)
_EN_PEOPLE = _words_of(
    "man men woman women girl girls boy boys person people child children kid kids lady ladies "
    "gentleman character characters he she they individual individuals figure figures baby "
    "couple family student students worker model athlete player players soldier hero heroine"
)
_EN_ACTION_VERBS = _words_of(
    "hold holding holds carry carrying carries hug hugging embrace embracing ride riding rides "
    "wear wearing wears worn dressed eat eating eats drink drinking drinks sip sipping feed "
    "feeding play playing plays touch touching touches look looking looks watch watching "
    "read reading reads push pushing pull pulling throw throwing catch catching kick kicking "
    "chase chasing pet petting kiss kissing grab grabbing lift lifting use using uses wield "
    "wielding swing swinging cut cutting cook cooking pour pouring paint painting draw drawing "
    "write writing hit hitting shake shaking fight fighting lead leading walk walking follow "
    "following face facing greet greeting serve serving offer offering handing hand give giving "
    "drive driving fly flying sail sailing climb climbing sweep sweeping clean cleaning brush "
    "brushing comb combing point pointing aim aiming shoot shooting spike spiking dribble "
    "dribbling talk talking speaking interact interacting help helping support supporting "
    "protect protecting guard guarding attack attacking bite biting tie tying open opening "
    "adorned accompanied surrounded covered filled decorated topped held"
)
_EN_AGES = _words_of("young younger old older elderly aged middle-aged teenage adult")
_EN_COMPARATIVES = re.compile(
    r"\b(?:than|more|fewer|less|most|least|same\s+(?:size|height|number|amount|length)|"
    r"as\s+\w+\s+as|number\s+of|exactly|twice|\w+est)\b"
)
_EN_NOT_SUPERLATIVE = _words_of(
    "best rest forest chest west interest test nest guest crest vest quest contest honest modest "
    "harvest manifest dressed pressed blessed request suggest invest protest dust east least most "
    "breast priest arrest digest"
)
_EN_POSSESSIVE = re.compile(
    r"^(?:does|do|did)\s+(?P<subject>.+?)\s+(?:have|has|possess)\s+(?P<object>.+)$"
)
_EN_DOES = re.compile(r"^(?:does|do|did)\s+(?P<rest>.+)$")
_EN_IS = re.compile(r"^(?:is|are|was|were)\s+(?P<rest>.+)$")
_EN_BODY_PARTS = _words_of(
    "hair hairs eye eyes ear ears nose mouth lip lips teeth tooth tongue face faces head heads "
    "neck shoulder shoulders arm arms hand hands finger fingers nail nails leg legs knee knees "
    "foot feet toe toes tail tails wing wings horn horns antler antlers paw paws claw claws "
    "fur feather feathers beak fin fins scale scales mane whisker whiskers skin beard mustache "
    "moustache eyebrow eyebrows eyelash eyelashes cheek cheeks chin forehead body torso back "
    "belly chest wheel wheels handle handles roof window windows door doors leaf leaves petal "
    "petals branch branches trunk stem stems root roots screen keyboard lid lids button buttons "
    "strap straps sleeve sleeves collar pocket pockets sole heel blade blades engine spout base "
    "frame legs spine hoof hooves snout trunk shell chimney chimneys balcony porch keys breast "
    "breasts brow brows navel lash lashes mole moles bruise bruises hip hips waist wrist wrists "
    "ankle ankles elbow elbows lap"
)
_EN_WORN_OR_HELD = _words_of(
    "hat hats cap caps helmet helmets glasses sunglasses goggles mask masks scarf scarves tie "
    "jacket jackets coat coats shirt shirts dress dresses skirt skirts pants trousers jeans "
    "shorts shoe shoes boot boots sneakers sandals glove gloves sock socks uniform uniforms "
    "outfit outfits costume costumes suit suits robe robes cloak cape vest sweater hoodie "
    "kimono armor armour earring earrings necklace necklaces ring rings bracelet bracelets "
    "watch crown tiara backpack bag bags purse handbag umbrella sword swords weapon weapons gun "
    "guns staff wand book books phone cup mug bottle flower flowers bouquet ribbon bow bows "
    "headband headphones badge tattoo tattoos makeup jewelry jewellery accessory accessories "
    "collar leash belt apron gown blouse tshirt t-shirt veil hairpin hairband clothing clothes "
    "attire garment garments tuxedo stethoscope camera microphone guitar violin racket bat "
    "ball torch lantern basket shield spear bow arrow"
)


def _en_tokens(text: str) -> list[str]:
    words = []
    for word in re.findall(r"[a-z0-9][a-z0-9'-]*", text.lower()):
        word = word.removesuffix("'s").removesuffix("'").strip("-")
        if word:
            words.append(word)
    return words


def _en_cue_words(cues: dict[str, frozenset[str]], capability: str) -> frozenset[str]:
    return cues.get(capability, frozenset())


def _en_has_cue(words: list[str], listed: frozenset[str]) -> bool:
    joined = f" {' '.join(words)} "
    for cue in listed:
        if " " in cue:
            if f" {cue} " in joined:
                return True
        elif cue in words:
            return True
    return any("-" in word and any(p in listed for p in word.split("-")) for word in words)


_EN_POSTURES = _words_of(
    "sitting standing lying kneeling squatting crouching leaning resting perched hanging floating "
    "hovering sleeping waiting posing"
)
_EN_SOME_OF = _words_of("any one some all each both either most several")
_EN_BREAKING_CUES = ("color", "shape", "material", "texture", "lighting", "state")
_EN_ENDS_ATTRIBUTE = _words_of("and or but color colored colour coloured")


def _en_split(words: list[str], cues: dict[str, frozenset[str]]) -> tuple[list[str], list[str]]:
    """(subject, predicate) of the words after "is/are": the subject is a determiner's noun
    phrase ("the girl's long hair") up to the first preposition, verb form, link or cue word."""
    if not words:
        return [], []
    if len(words) > 3 and words[1:3] == ["of", "the"] and words[0] in _EN_SOME_OF:
        words = words[2:]  # "any of the girls smiling": the girls
    cue_words = frozenset().union(
        *(words for capability, words in cues.items() if capability in _EN_BREAKING_CUES)
    )
    at = 0
    if words[0] in ("he", "she", "they", "it") and len(words) > 1:
        return words[:1], words[1:]  # a pronoun is the whole subject ("Is he holding ...?")
    if words[0] in _EN_DETERMINERS or words[0] == "there":
        at = 1
    start = at
    while at < len(words):
        word = words[at]
        if at > start and (
            word in _EN_PREPOSITIONS
            or word in _EN_LINKS
            or word in _EN_DETERMINERS
            or word in ("not", "made", "than", "set", "depicted", "shown", "seen")
            or (word.endswith("ing") and len(word) > 4)
            or (word.endswith("ed") and len(word) > 4)
        ):
            break
        # an attribute word ends the subject where nothing of a noun phrase follows it ("Are
        # the chairs blue in color?"), not before its noun ("the big red ball")
        if (
            at > start
            and word in cue_words
            and (at + 1 >= len(words) or words[at + 1] in _EN_PREPOSITIONS | _EN_ENDS_ATTRIBUTE)
        ):
            break
        at += 1
    if at >= len(words):  # "Is the sky starry?": the last word is the predicate
        at = max(len(words) - 1, min(start, len(words) - 1))
        if at == 0:
            return [], words
    rest = words[at:]
    mood_words = cues.get("emotion_atmosphere", frozenset())
    if (  # "the waiter behind the bar | cheerful": the place picks the subject out
        len(rest) >= 4
        and rest[0] in _EN_PREPOSITIONS
        and rest[-1] in cue_words | mood_words
        and rest[-2] not in _EN_DETERMINERS | _EN_PREPOSITIONS
        and wordnet_capability(word_forms(rest[-1])) is None  # an adjective, not "prints"
    ):
        return words[: len(words) - 1], rest[-1:]
    return words[:at], rest


_EN_DOES_VERBS = _words_of(
    "look looks appear appears seem seems create creates evoke evokes convey conveys show shows "
    "feature features depict depicts contain contains include includes exude exudes capture "
    "captures reflect reflects cast casts give gives add adds emphasize emphasizes suggest "
    "suggests resemble resembles display displays feel feels symbolize symbolizes symbolise "
    "symbolises embody embodies"
)


def _en_split_does(words: list[str]) -> tuple[list[str], list[str]]:
    """(subject, predicate) of the words after "does/do": the predicate starts at the verb, the
    first known verb after the subject's first word, else the word before the first article."""
    first_verb = 2 if words[:1] and words[0] in _EN_DETERMINERS else 1  # "the painting" a noun
    for at in range(first_verb, len(words)):
        if words[at] in _EN_ACTION_VERBS or words[at] in _EN_DOES_VERBS:
            return words[:at], words[at:]
    for at in range(2, len(words)):
        if words[at] in _EN_OBJECT_STARTS | _EN_PREPOSITIONS:
            return words[: at - 1], words[at - 1 :]
    return words[:-1], words[-1:]


_EN_FRAME_TAIL = re.compile(
    r"\s+(?:in|on|within)\s+(?:the|this)\s+(?:generated\s+)?(?:image|picture|photo|photograph|"
    r"scene|painting|illustration|artwork|frame)$"
)


def attribute_en(text: str, cues: dict[str, frozenset[str]]) -> Attribution | None:
    """The capability of an English question that is not an existence question the converter
    read, by its predicate; None when the question has neither an "is/are" nor a "does/do"
    form."""
    bare = re.sub(r"\s*answer with yes or no\.?\s*$", "", text.strip(), flags=re.I)
    lowered = _EN_FRAME_TAIL.sub("", bare.lower().rstrip(" ?.!"))
    tokens = set(_en_tokens(lowered))
    if tokens & _EN_CORRECTNESS and not tokens & (_EN_TEXT_THINGS | {"spelled", "spelling"}):
        # "Are the planets in the correct order?": a fact only knowledge can check
        return Attribution("scientific_cultural_knowledge", "predicate_knowledge")
    there = re.match(r"^(?:is|are)\s+there\s+(?P<phrase>.+)$", lowered)
    if there:
        return _en_there(text, _en_tokens(there["phrase"]), cues)
    presence = _EN_PRESENCE.match(lowered)
    if presence:
        return _en_there(text, _en_tokens(presence["phrase"]), cues)
    shown = _EN_SHOWN.match(lowered)
    if shown:
        return _en_shown(text, _en_tokens(shown["phrase"]), cues)
    possession = _EN_POSSESSIVE.match(lowered)
    if possession:
        owned = _en_tokens(possession["object"])
        return _en_possession(_en_tokens(possession["subject"]), owned, cues)
    identity = _EN_IDENTITY.match(lowered)
    if identity:
        found = _en_identity(text, _en_tokens(identity["phrase"]), cues)
        if found is not None:
            return found
    does = _EN_DOES.match(lowered)
    is_form = _EN_IS.match(lowered)
    if not does and not is_form:
        return None
    rest = _en_tokens((does or is_form)["rest"])
    subject, predicate = _en_split(rest, cues) if is_form else _en_split_does(rest)
    if does and predicate and predicate[0] in _EN_SEEMING:
        predicate = predicate[1:]
    styled_or_dated = _en_has_cue(predicate, cues.get("style", frozenset())) or _EN_ERA.search(
        " ".join(predicate)
    )
    if not styled_or_dated and _en_named_in_predicate(bare, subject):
        return Attribution("scientific_cultural_knowledge", "predicate_named")
    return _en_predicate(subject, predicate, cues, is_form is not None)


_EN_PRESENCE = re.compile(
    r"^(?:is|are)\s+(?P<phrase>.+?)\s+(?:present|visible|shown|depicted|included|featured)\b"
)
_EN_SHOWN = re.compile(
    r"^(?:does|do)\s+(?:the|this)\s+(?:image|picture|photo|scene|painting|illustration)\s+"
    r"(?:show|shows|depict|depicts|include|includes|feature|features|contain|contains|display)"
    r"\s+(?P<phrase>.+)$"
)


# "Is this an anime illustration?", "Is this digital art?": what the whole image is
_EN_IDENTITY = re.compile(r"^is this (?P<phrase>(?:an? )?.+)$")
_EN_GENRES = _words_of("art shoot photoshoot genre")


def _en_identity(text: str, phrase: list[str], cues) -> Attribution | None:
    """The medium or genre it names (style), a time (temporal_setting), else the thing it names,
    read as an existence question; None where the phrase is no noun phrase ("Is this scene
    gloomy?", read by its predicate)."""
    if not phrase:
        return None
    if phrase[0] in ("a", "an"):
        phrase = phrase[1:]
    elif not (_en_has_cue(phrase[-1:], cues.get("style", frozenset())) or phrase[-1] in _EN_GENRES):
        return None
    words = set(phrase)
    if words & (_EN_MEDIA | _EN_GENRES | _EN_REALISM) or _en_has_cue(
        phrase, cues.get("style", frozenset())
    ):
        return Attribution("style", "identity_medium")
    if _en_has_cue(phrase, cues.get("temporal_setting", frozenset())):
        return Attribution("temporal_setting", "identity_time")
    return _en_there(text, phrase, cues)


def _en_shown(text: str, phrase: list[str], cues) -> Attribution | None:
    """ "Does the image show an early winter morning?": a whole-image quality the phrase names,
    else what the phrase says is there."""
    head = phrase[-1:] if phrase else []
    for capability in ("temporal_setting", "style", "lighting"):
        if _en_has_cue(head, cues.get(capability, frozenset())):
            return Attribution(capability, f"shown_{capability}")
    if set(phrase) & _EN_MOOD_WORDS:
        return Attribution("emotion_atmosphere", "shown_mood")
    return _en_there(text, phrase, cues)


_EN_PRESENT = _words_of("present visible shown depicted included featured there")
_EN_SEEMING = _words_of("look looks appear appears seem seems")


def _en_named_in_predicate(text: str, subject: list[str]) -> bool:
    """A proper name past the subject ("Is the bridge the Golden Gate Bridge?")."""
    if not proper_name(text):
        return False
    names = {
        word.lower()
        for m in _PROPER_NAME.finditer(text.split(" Answer with")[0])
        for word in m.group(0).split()
    }
    return not names <= set(subject)


def _en_there(text: str, phrase: list[str], cues) -> Attribution | None:
    """ "Is there ... on the table?" where the converter read no existence question: what the
    phrase says is there (its head: the words before a preposition or verb)."""
    head_words = []
    for word in phrase:
        if (
            word in _EN_PREPOSITIONS
            or word in _EN_ACTION_VERBS
            or word in _EN_POSTURES
            or participle_after_noun(word, head_words)
        ):
            break
        head_words.append(word)
    while head_words and head_words[-1] in _EN_PRESENT:  # "Are there notes visible?"
        head_words.pop()
    if not head_words:
        return None
    if set(head_words) & _EN_TEXT_THINGS and not set(head_words[-1:]) & _EN_TEXT_THINGS:
        # "Is there sans-serif typography positioned in the corner?": the phrase runs on
        return Attribution(TEXT, "existence_text")
    counting = _COUNT_WORDS | _words_of("exactly only more fewer")
    if set(head_words[:2]) & counting or any(w.isdigit() for w in head_words[:2]):
        return Attribution(COUNT, "existence_count")
    kind = existence_kind(text, head_words[-1], " ".join(head_words), "en")
    if kind is not None:
        return kind
    if word_forms(head_words[-1]) & _EN_PEOPLE:  # WordNet's "person" is first a body
        return Attribution("humans", "entity_noun_wordnet")
    entity = wordnet_capability(word_forms(head_words[-1]))
    return Attribution(entity, "entity_noun_wordnet") if entity else None


def _en_possession(subject, owned, cues) -> Attribution:
    """ "Does the girl have a tail?": a body part or component is part_whole; what is worn or
    held, interaction; a quality of it ("long hair", "blue eyes"), the quality's capability."""
    head = owned[-1] if owned else ""
    modifiers = owned[:-1]
    if set(owned) & _EN_REALISM and subject[-1:] and subject[-1] in _EN_SCENE_SUBJECTS:
        # "Does the photo have true-to-life detail?" (not "Do the men have genuine smiles?")
        return Attribution("style", "possession_style")
    if head in _EN_ATTRIBUTE_ENDINGS:  # "Does the scene have dynamic colors?"
        return Attribution(_EN_ATTRIBUTE_ENDINGS[head], "possession_attribute")
    if head in _en_cue_words(cues, "texture"):  # "Does the pavement have stripes?": its surface
        return Attribution("texture", "possession_texture")
    if head in _EN_WORN_OR_HELD or head.removesuffix("s") in _EN_WORN_OR_HELD:
        return Attribution("interaction", "possession_worn_or_held")
    for capability in ("style", "lighting", "temporal_setting"):
        if head in _en_cue_words(cues, capability):
            return Attribution(capability, f"possession_{capability}")
    if head in ("feel", "feeling", "mood", "atmosphere", "vibe", "ambiance", "ambience", "tone"):
        return Attribution("emotion_atmosphere", "possession_mood")
    for capability in ("color", "shape", "material", "texture", "lighting"):
        if _en_has_cue(modifiers, _en_cue_words(cues, capability)):
            return Attribution(capability, f"possession_{capability}")
    if _en_comparative(owned):
        return Attribution(COUNT, "possession_count")
    if head in _EN_HAIRSTYLES or head.removesuffix("s") in _EN_HAIRSTYLES:
        return Attribution("state", "possession_quality")
    if head in _EN_LIGHT_THINGS:
        return Attribution("lighting", "possession_lighting")
    if head in _EN_BODY_PARTS or head.removesuffix("s") in _EN_BODY_PARTS:
        if set(modifiers) & _EN_PART_QUALITIES:  # "long hair": the part's condition
            return Attribution("state", "possession_quality")
        return Attribution("part_whole", "possession_part")
    if head in _EN_WORN_OR_HELD or head.removesuffix("s") in _EN_WORN_OR_HELD:
        return Attribution("interaction", "possession_worn_or_held")
    if _en_has_cue(owned, _en_cue_words(cues, TEXT)):
        return Attribution(TEXT, "possession_text")
    if _en_has_cue(owned, _en_cue_words(cues, "emotion_atmosphere")):
        return Attribution("state", "possession_expression")
    if head in _EN_EXPRESSIONS or head.removesuffix("s") in _EN_EXPRESSIONS:
        return Attribution("state", "possession_expression")  # "mischievous grins"
    if head in _en_cue_words(cues, "state"):  # "have her mouth closed": the part's condition
        return Attribution("state", "possession_quality")
    if _en_animate(_en_subject_nouns(subject)) and wordnet_capability(word_forms(head)) == (
        "man_made"
    ):  # "Does the soldier have a revolver?": held or carried
        return Attribution("interaction", "possession_worn_or_held")
    return Attribution("part_whole", "possession")


_EN_HAIRSTYLES = _words_of(
    "ponytail ponytails braid braids pigtail pigtails tails bun buns bangs fringe curls "
    "hairstyle dreadlocks mohawk updo"
)
_EN_PART_QUALITIES = _words_of(
    "long short curly straight wavy messy braided tousled spiky thick thin big small large tiny "
    "sharp closed open bare wet styled dyed curled slicked neat tidy buzzed shaved cropped"
)
# What only world knowledge can judge (METHOD 13a): customs, festivals, history, landmarks
_EN_KNOWLEDGE = _words_of(
    "traditional tradition cultural culture custom customs festival historical "
    "historic history landmark famous iconic ancient heritage ritual ceremonial folk dynasty"
)
# a part that exists only as a part (convention 1): of a body, 长发 and 手臂 as much as 尾巴
_ZH_EXISTING_PARTS = _words_of(
    "尾巴 翅膀 眼睛 耳朵 头发 角 爪子 面孔 脸 长发 短发 卷发 金发 黑发 白发 秀发 直发 手臂 胳膊 "
    "胸部 嘴巴 嘴唇 眼眸 鼻子 肩膀 腰部 大腿 小腿 双腿 双脚 脚踝 脖子 颈部 背部 手指 指甲 眉毛 "
    "睫毛 额头 下巴 脸颊 膝盖 脚趾"
)
_ZH_LANDMARKS = ("长城", "故宫", "天坛", "兵马俑", "颐和园", "布达拉宫", "外滩", "西湖")  # 在故宫里
_ZH_KNOWLEDGE = tuple(
    [
        "长城",
        "兵马俑",
        "天坛",
        "故宫",
        "舞龙",
        "舞狮",
        "皮影",
        "剪纸",
        "京剧",
        "书法",
        "旗袍秀",
        "传统",
        "习俗",
        "文化",
        "节日",
        "民俗",
        "历史",
        "古迹",
        "名胜",
        "地标",
        "著名",
        "朝代",
        "王朝",
        "礼仪",
        "仪式",
        "非遗",
        "京剧",
        "书法",
        "春节",
        "中秋",
        "端午",
        "元宵",
        "清明",
        "重阳",
        "七夕",
        "婚礼",
        "典礼",
        "庆典",
        "庙会",
        "奥运",
        "冬奥",
        "青花",
        "文物",
    ]
)


def _en_comparative(words: list[str]) -> bool:
    joined = " ".join(words)
    match = _EN_COMPARATIVES.search(joined)
    if not match:
        return False
    word = match.group(0)
    return not (word.endswith("est") and word in _EN_NOT_SUPERLATIVE)


# A subject that names an attribute ("Is the lighting soft?", "Is the style anime?") is about it.
_EN_ATTRIBUTE_SUBJECTS = {
    "color": "color",
    "colors": "color",
    "colour": "color",
    "hue": "color",
    "palette": "color",
    "shape": "shape",
    "outline": "shape",
    "silhouette": "shape",
    "form": "shape",
    "material": "material",
    "fabric": "material",
    "texture": "texture",
    "pattern": "texture",
    "lighting": "lighting",
    "light": "lighting",
    "illumination": "lighting",
    "shadow": "lighting",
    "sunlight": "lighting",
    "moonlight": "lighting",
    "shadows": "lighting",
    "glow": "lighting",
    "style": "style",
    "artstyle": "style",
    "aesthetic": "style",
    "aesthetics": "style",
    "medium": "style",
    "rendering": "style",
    "mood": "emotion_atmosphere",
    "atmosphere": "emotion_atmosphere",
    "ambiance": "emotion_atmosphere",
    "ambience": "emotion_atmosphere",
    "vibe": "emotion_atmosphere",
    "expression": "state",
    "expressions": "state",
    "pose": "state",
    "posture": "state",
    "hairstyle": "state",
    "season": "temporal_setting",
    "time": "temporal_setting",
    "era": "temporal_setting",
    "text": TEXT,
    "font": TEXT,
    "title": TEXT,
    "caption": TEXT,
    "lettering": TEXT,
    "number": COUNT,
    "count": COUNT,
    "size": COUNT,
}
_EN_OBJECT_STARTS = _words_of("the a an his her its their this that these those some")


_EN_ATTRIBUTE_ENDINGS = {
    "shape": "shape", "shaped": "shape", "outline": "shape",
    "color": "color", "colour": "color", "colors": "color", "colours": "color", "tones": "color",
    "tone": "color", "hues": "color", "hue": "color",
    "texture": "texture", "textures": "texture", "material": "material",
}  # fmt: skip
_EN_STYLE_PHRASES = re.compile(
    r"\b(?:blurred|blurry|bokeh|monochrome|grayscale|greyscale|sepia|black and white|"
    r"out of focus|depth of field|close-up|wide-angle|long exposure|in focus)\b"
)
_EN_MOOD_WORDS = _words_of(
    "atmosphere atmospheric mood moody feel feels feeling vibe ambiance ambience convey conveys "
    "evoke evokes exude exudes aura symbolize symbolizes symbolise symbolises embody embodies"
)
_EN_SCENERY = _words_of("forested wooded scenic coastal mountainous hilly")
_EN_WEATHER = _words_of(
    "raining rain rainy snowing snow snowy foggy fog misty mist stormy storm cloudy overcast"
)
_EN_LIGHT_VERBS = _words_of(
    "cast casts casting emit emits emitting glow glows glowing shine shines shining "
    "illuminate illuminates illuminating reflect reflects reflecting lit backlit gleaming gleam "
    "gleams glistening glisten shimmering shimmer twinkling"
)
_EN_MATERIAL_FORM = re.compile(
    r"\b(?:made|crafted|carved|woven|built|constructed|formed|sculpted|knitted) "
    r"(?:of|from|out of)\b"
)
_EN_ERA = re.compile(r"\b(?:1[0-9]|20)[0-9]0s\b|\bcentury\b|\bera\b|\bvictorian\b")
_EN_CORRECTNESS = _words_of("correct correctly accurate accurately scientifically historically")


def _en_action_later(predicate: list[str]) -> bool:
    """ "in the gray coat reading a newspaper": an action on something past a first phrase."""
    for at, word in enumerate(predicate[1:-1], 1):
        if word.endswith("ing") and len(word) > 4 and word not in _EN_POSTURES:
            return predicate[at + 1] in _EN_OBJECT_STARTS
    return False


_EN_STATE_NOUNS = _words_of(
    "bloom blossom pose poses posture stance motion flight mid-air midair action disarray "
    "tatters ruins flames bloom"
)
_EN_SIZES = _words_of("huge giant gigantic enormous massive colossal tiny minuscule oversized")
_EN_SHADES = _words_of("light dark pale bright deep")
_EN_EXPRESSIONS = _words_of(
    "smile smiles expression expressions gaze grin grins face faces eyes look"
)
_EN_PLACING = _words_of(
    "sitting standing lying resting perched hanging leaning kneeling squatting crouching "
    "placed set positioned located situated propped stacked"
)
_EN_RELATIVE_POSITION = re.compile(
    r"\b(?:(?:left|right|north|south|east|west|ahead|outside|inside|atop|in front|on top) of|"
    r"alongside|on the same|on opposite|on either side|hidden (?:by|behind|under)|"
    r"(?:hid|hide|hides|hiding|occlude|occludes|occluding|occluded|overlap|overlaps|overlapping|"
    r"overlook|overlooks|overlooking|obscure|obscures|obscuring|obscured)\b)"
)


def _en_subject_nouns(subject: list[str]) -> list[str]:
    """The subject's words up to its first preposition, less determiners: its last is the head
    ("the woman behind the counter" -> woman; "one of the characters" -> characters)."""
    words = [word for word in subject if word not in _EN_DETERMINERS]
    if words[:2] and words[0] == "one" and words[1:2] == ["of"]:
        words = words[2:]
    for at, word in enumerate(words):
        if at and word in _EN_PREPOSITIONS:
            return words[:at]
    return words


def _en_animate(nouns: list[str]) -> bool:
    """A person or an animal, or a person's expression ("Is the smile confident?")."""
    return bool(nouns) and (
        nouns[-1] in _EN_PEOPLE
        or nouns[-1] in _EN_EXPRESSIONS
        or wordnet_capability(word_forms(nouns[-1])) in ("humans", "animals")
    )


def _en_relation(subject: list[str], predicate: list[str], said: str) -> Attribution | None:
    """Where a thing is (convention 3): relative to another ("left of the can", "hidden by the
    tree", "hiding the small bear") is spatial; a posture with a place is the posture of a person
    or an animal (state) but only the position of a thing ("Is the book resting on a table?",
    which has no posture of its own)."""
    if _EN_RELATIVE_POSITION.search(" ".join([*subject, said])):
        return Attribution("spatial", "predicate_relative_place")
    first = predicate[0] if predicate else ""
    if first == "in" and predicate[-1] in _EN_STATE_NOUNS:  # "in full bloom", "in a pose"
        return Attribution("state", "predicate_state")
    nouns = _en_subject_nouns(subject)
    if (  # "Is the hair over one eye?", "Is her hand on her hip?": the body's own pose
        first in _EN_SPATIAL_STARTS
        and nouns[-1:]
        and nouns[-1] in _EN_BODY_PARTS
        and (
            predicate[-1] in _EN_BODY_PARTS
            or wordnet_capability(word_forms(predicate[-1])) == "part_whole"
        )
    ):
        return Attribution("state", "predicate_posture")
    if first in _EN_PLACING and len(predicate) > 1 and predicate[1] in _EN_SPATIAL_STARTS:
        if first == "set" and predicate[1] in ("in", "at", "during"):
            return None  # "set in spring": a time, read later
        if _en_animate(nouns) or predicate[-2:] in (["its", "side"], ["its", "back"]):
            return Attribution("state", "predicate_posture")
        return Attribution("spatial", "predicate_place")
    return None


def _en_predicate(subject, predicate, cues, is_form: bool) -> Attribution:
    nouns = _en_subject_nouns(subject)
    scene = not nouns or nouns[-1] in _EN_SCENE_SUBJECTS
    person = bool(nouns) and (
        nouns[-1] in _EN_PEOPLE or wordnet_capability(word_forms(nouns[-1])) == "humans"
    )
    said = " ".join(predicate)
    whole = " ".join([*subject, *predicate])
    if set(subject[1:] + predicate) & _EN_NEGATION or "free of" in whole:
        return Attribution("logical_constraints", "predicate_negation")
    if (
        subject[-1:]
        and subject[-1] in _EN_SHADES
        and _en_has_cue(predicate, cues.get("color", frozenset()))
    ):
        return Attribution("color", "predicate_color")  # "Is the dress light yellow?"
    if "shape" in predicate and ("of" in predicate or "form" in predicate):
        return Attribution("shape", "predicate_attribute_noun")  # "in the shape of a teardrop"
    # "Is the painting style X?", "Is the poster's aesthetic bold?"
    if set(subject[-4:]) & {"style", "aesthetic", "aesthetics"} and predicate[:1] != ["in"]:
        return Attribution("style", "attribute_subject")
    if subject and subject[-1] in _EN_ATTRIBUTE_SUBJECTS:
        return Attribution(_EN_ATTRIBUTE_SUBJECTS[subject[-1]], "attribute_subject")
    if nouns and nouns[-1] in _EN_LIGHT_THINGS:
        return Attribution("lighting", "attribute_subject")
    if predicate and predicate[-1] in _EN_ATTRIBUTE_ENDINGS:  # "in diamond shape", "in tones"
        return Attribution(_EN_ATTRIBUTE_ENDINGS[predicate[-1]], "predicate_attribute_noun")
    if len(predicate) > 2 and predicate[-1] in ("hand", "hands") and predicate[0] == "in":
        return Attribution("interaction", "predicate_held")  # "in the character's hand"
    if _EN_MATERIAL_FORM.search(whole):
        return Attribution("material", "predicate_material")
    if set(predicate) & _EN_CORRECTNESS:
        return Attribution("scientific_cultural_knowledge", "predicate_knowledge")
    rendering = _EN_STYLE_PHRASES.search(said)
    if rendering and rendering.group(0) == "black and white" and not scene:
        rendering = None  # "Is the scarf black and white?": its colours
    if rendering or set(predicate) & _EN_REALISM or "true to life" in whole:
        return Attribution("style", "predicate_style")  # the rendering, whatever the subject
    if (  # "bathed in spring light", "under the sunlight"
        len(predicate) > 1
        and predicate[-1] in _EN_LIGHT_THINGS
        and (predicate[0] in _EN_PREPOSITIONS or predicate[0].endswith("ed"))
    ):
        return Attribution("lighting", "predicate_lighting")
    if set(predicate) & _EN_MOOD_WORDS:
        return Attribution("emotion_atmosphere", "predicate_mood")
    if set(predicate) & _EN_LIGHT_VERBS and not set(predicate) & _EN_KNOWLEDGE:
        return Attribution("lighting", "predicate_lighting")
    if set(predicate) & _EN_SCENERY:  # "Is the valley forested?": the natural scene it is
        return Attribution("natural_scenes", "predicate_scenery")
    if (nouns and nouns[-1] in _EN_WEATHER) or (
        subject[:1] == ["it"] and set(whole.split()[:3]) & _EN_WEATHER
    ):
        return Attribution("natural_scenes", "predicate_weather")
    if _EN_ERA.search(said):
        return Attribution("temporal_setting", "predicate_temporal")
    if person and _en_has_cue(predicate, _en_cue_words(cues, "humans")):
        if set(predicate[:2]) & _EN_AGES:  # "Is the woman young?": her condition, as 女子年轻吗
            return Attribution("state", "predicate_age")
        return Attribution("humans", "predicate_kind_of_person")
    relation = _en_relation(subject, predicate, said)
    if relation is not None:
        return relation
    if nouns[-1:] and nouns[-1] in ("hair", "hairstyle", "hairdo") and "styled" in predicate:
        return Attribution("state", "predicate_hairstyle")  # "styled in a bob": her hair
    if _en_has_cue(predicate, _en_cue_words(cues, TEXT)) or (
        _en_has_cue(subject, _en_cue_words(cues, TEXT)) and not predicate
    ):
        return Attribution(TEXT, "predicate_text")
    if _en_has_cue(predicate, _en_cue_words(cues, "style")) and (
        scene
        or "style" in predicate
        or "styled" in predicate
        or bool(set(nouns[:1]) & _EN_MEDIA)  # "Is the image high resolution?" (split at "high")
    ):
        return Attribution("style", "predicate_style")
    if predicate and predicate[-1] in _EN_SIZES and len(predicate) <= 2:  # "massive": as 巨大
        return Attribution(COUNT, "predicate_size")
    if _en_comparative(predicate) or _en_has_cue(predicate[:2], _COUNT_WORDS):
        return Attribution(COUNT, "predicate_comparison")
    first = predicate[0] if predicate else ""
    verb_object = len(predicate) > 1 and predicate[1] not in _EN_PREPOSITIONS
    if scene and not is_form:  # "Does the artwork capture a moment of ...?": no action
        shown = (
            _en_there(" ".join(predicate[1:]), predicate[1:], cues)
            if (first in _EN_PRESENCE_VERBS)
            else None
        )  # "Does the background include a pagoda?": what is there
        return shown or _en_scene_quality(predicate, cues)
    if (
        (first.endswith("ing") or not is_form)
        and len(predicate) > 1
        and predicate[1] in _EN_OBJECT_STARTS
        and not _en_has_cue(predicate, _en_cue_words(cues, "emotion_atmosphere"))
    ):
        return Attribution("interaction", "predicate_action")
    if not is_form and first in _EN_ACTION_VERBS and verb_object:
        return Attribution("interaction", "predicate_action")
    if first in _EN_ACTION_VERBS and (
        verb_object or first in ("wearing", "holding", "dressed", "wears", "holds")
    ):
        return Attribution("interaction", "predicate_action")
    if (  # "Is the man examining trading charts?": a verb on a thing, no article
        is_form
        and first.endswith("ing")
        and len(first) > 4
        and first not in _EN_POSTURES
        and not _en_has_cue(predicate[:1], _en_cue_words(cues, "state"))
        and len(predicate) > 1
        and predicate[1] not in _EN_PREPOSITIONS
        and wordnet_capability(word_forms(predicate[-1])) not in (None, "part_whole")
        and not any(  # "stunning pink": an attribute after an -ing adjective
            _en_has_cue(predicate[1:], _en_cue_words(cues, capability))
            for capability in _EN_BREAKING_CUES
        )
    ):
        return Attribution("interaction", "predicate_action")
    if is_form and _en_action_later(predicate):
        return Attribution("interaction", "predicate_action")
    if (
        first.endswith("ing")
        and first not in _EN_POSTURES
        and len(predicate) > 2
        and predicate[1] in ("at", "with", "to")
        and predicate[2] in _EN_OBJECT_STARTS
    ):
        return Attribution("interaction", "predicate_action")
    if (
        len(predicate) > 2
        and predicate[1] in ("with", "at", "to", "on")
        and first
        in (
            "looking",
            "playing",
            "talking",
            "interacting",
            "dressed",
            "covered",
            "filled",
            "decorated",
            "surrounded",
            "adorned",
            "topped",
            "accompanied",
        )
    ):
        return Attribution("interaction", "predicate_action")
    if (
        person
        and first == "in"
        and len(predicate) <= 4
        and (
            predicate[-1] in _EN_WORN_OR_HELD or predicate[-1].removesuffix("s") in _EN_WORN_OR_HELD
        )
        and not _en_has_cue(predicate, _en_cue_words(cues, "temporal_setting"))
    ):
        return Attribution("interaction", "predicate_worn")
    if _en_has_cue(predicate, _en_cue_words(cues, "temporal_setting")) and (
        scene or first in ("set", "in", "at", "during")
    ):
        return Attribution("temporal_setting", "predicate_temporal")
    placed = first in _EN_SPATIAL_STARTS or (
        _en_has_cue(predicate, _en_cue_words(cues, "spatial")) and first in _EN_PREPOSITIONS
    )
    at_a_time = first in ("in", "at", "during") and _en_has_cue(
        predicate, _en_cue_words(cues, "temporal_setting")
    )
    if placed and not at_a_time:
        return Attribution("spatial", "predicate_place")
    if set(predicate) & _EN_KNOWLEDGE:
        return Attribution("scientific_cultural_knowledge", "predicate_knowledge")
    if first == "made" or "material" in predicate:
        return Attribution("material", "predicate_material")
    for capability in ("color", "shape", "material", "texture", "lighting", "temporal_setting"):
        if _en_has_cue(predicate, _en_cue_words(cues, capability)):
            return Attribution(capability, f"predicate_{capability}")
    if _en_has_cue(predicate, _en_cue_words(cues, "emotion_atmosphere")):
        # a person's (or her face's) feeling is her state; a thing's, what it conveys
        if person or _en_animate(nouns) or set(nouns) & _EN_BODY_PARTS:
            return Attribution("state", "predicate_expression")
        return Attribution("emotion_atmosphere", "predicate_mood")
    if _en_has_cue(predicate, _en_cue_words(cues, "state")):
        return Attribution("state", "predicate_state")
    if _en_has_cue(predicate, _en_cue_words(cues, "spatial")):
        return Attribution("spatial", "predicate_place")
    if _en_has_cue(predicate, _en_cue_words(cues, "interaction")):
        return Attribution("interaction", "predicate_action")
    if _en_has_cue(predicate, _en_cue_words(cues, "part_whole")):
        return Attribution("part_whole", "predicate_part")
    if first in _EN_ACTION_VERBS:
        return Attribution("interaction", "predicate_action")
    if scene:
        return Attribution("emotion_atmosphere", "scene_quality")
    return Attribution("state", "condition")


_EN_PRESENCE_VERBS = _words_of(
    "show shows feature features depict depicts contain contains include includes display displays"
)


def _en_scene_quality(predicate: list[str], cues) -> Attribution:
    """What the whole image shows or conveys, read by its cue words; else its mood."""
    for word in predicate:  # "Does the image use soft earthy tones?": its colours
        if word in _EN_ATTRIBUTE_ENDINGS:
            return Attribution(_EN_ATTRIBUTE_ENDINGS[word], "predicate_attribute_noun")
    for capability in ("style", "lighting", "temporal_setting", "color", TEXT):
        if _en_has_cue(predicate, _en_cue_words(cues, capability)):
            return Attribution(capability, f"predicate_{capability}")
    return Attribution("emotion_atmosphere", "scene_quality")


_COUNT_WORDS = _words_of(
    "two three four five six seven eight nine ten eleven twelve several multiple many numerous "
    "few dozen single pair both"
)


# -- Chinese ---------------------------------------------------------------------------------------

# The subject ends at the first of these (是/在/被/有 ...); the predicate is what follows.
_ZH_SPLIT = re.compile(
    r"是否|是不是|是|正在|在|被|有没有|有|看起来|看上去|显得|呈现|呈|充满|带着|穿着|戴着|拿着|手持|身穿|位于"
)
_ZH_SCENE = re.compile(
    r"(?:画面|场景|氛围|气氛|环境|整体|图像|图片|照片|画作|作品|背景|这|它|整个|色调|基调|风景|景色)$"
)
_ZH_PEOPLE = re.compile(
    r"(?:[一二三四五六七八九十\d]|人|色|物|男|女|孩|子|生|员|手|者|们|他|她|儿|娘|士|师|家|客|众|友|主|爷|奶|妈|爸|姐|妹|哥|弟)$"
)
_ZH_ACTIONS = _words_of(
    "拿着 握着 抱着 拥抱 牵着 看着 注视 看向 望着 凝视 骑 穿着 身穿 穿 戴着 "
    "戴 玩 吃 喝 品尝 弹奏 弹着 推着 扔 踢 挥舞 拉着 举着 提着 背着 扛着 "
    "捧着 端着 抓着 抚摸 亲吻 喂 追逐 扣杀 投篮 射箭 划船 驾驶 演奏 放风筝 放鞭炮 放烟花 "
    "敲打 书写 阅读 使用 操作 递给 指着 指向 挽着 搂着 依偎 遛 扮演 表演 "
    "击打 咬着 叼着 衔着 骑着 乘坐 携带 佩戴 披着 裹着 系着 手持 手里拿 "
    "手中拿 握住 拿起 抱起 喝着 吃着 玩着 看书 弹琴 打伞 撑伞 打篮球 踢球 "
    "打球 跳舞 对视 交谈 牵手 握手 享用 操控 操纵 控制 欣赏 观赏 观看 指点 侵蚀 对决 手举 "
    "织出 编织 写"
)
_ZH_PLACE = re.compile(
    r"在[^？?吗呢]*(?:旁边|之间|附近|周围|上面|下面|里面|外面|前面|后面|身边|身上|怀里|上方|下方|"
    r"前方|后方|左边|右边|左侧|右侧|中间|中央|对面|边缘|边上|中心|顶端|尽头|深处|一侧|两侧|四周|表面|内部|外部|上空|"
    r"上|里|中|内|下|旁|前|后|外|边|顶|底|侧|角|面)"
)
_ZH_POSTURES = ("坐", "站", "躺", "跪", "蹲", "趴", "停", "靠", "立")  # not 放/挂: placed, hung
_ZH_PLACE_WORDS = _words_of(
    "左边 右边 左侧 右侧 上方 下方 旁边 前面 前方 后面 后方 背后 身后 中间 "
    "中央 之间 角落 顶部 底部 上面 下面 附近 周围 远处 近处 背景中 背景里 "
    "前景 位于 对面 里面 外面 内部 身边 脚下 头顶"
)
_ZH_COUNTS = re.compile(
    r"(?:[0-9]+|[两二三四五六七八九十百几多]+)[个位只名条件对双张把辆座棵朵群片本支头匹块盏颗根扇套幅架艘间栋道]"
    r"|比.+(?:多|少|大|小|高|矮|长|短|更)|最(?:大|小|高|矮|长|短|多|少)|一样(?:大|高|多)|数量"
)
_ZH_BODY_PARTS = _words_of(
    "头发 发 眼睛 眼 耳朵 耳 鼻子 嘴 嘴唇 牙 舌 脸 头 脖子 肩 手臂 胳膊 "
    "手 手指 指甲 腿 膝 脚 尾巴 尾 翅膀 翼 角 爪 毛 羽毛 鳞 鬃 胡须 胡子 "
    "皮肤 眉 睫毛 脸颊 下巴 额头 身体 背 肚子 轮子 车轮 把手 屋顶 窗 门 "
    "叶子 叶 花瓣 树枝 枝 树干 茎 根 屏幕 盖 按钮 袖 领 口袋 鞋底 刀刃 "
    "底座 框 蹄 喙 壳 獠牙"
)
_ZH_WORN = _words_of(
    "帽 眼镜 墨镜 面具 口罩 围巾 领带 夹克 外套 大衣 衬衫 连衣裙 裙 裤 "
    "牛仔裤 短裤 鞋 靴 手套 袜 制服 服装 衣服 衣 装 西装 长袍 袍 斗篷 背心 "
    "毛衣 卫衣 和服 汉服 旗袍 盔甲 耳环 项链 戒指 手镯 手表 王冠 服饰 饰 "
    "背包 包 手提包 伞 剑 刀 武器 枪 杖 魔杖 书 手机 杯 瓶 花束 丝带 腰带 皮带 发夹 发卡 头巾 "
    "围裙 披肩 面纱 头饰 太空服 校服 礼服 工作服 运动服 西服 "
    "蝴蝶结 发带 耳机 徽章 纹身 妆 首饰 饰品"
)


_ZH_RELATIVE_PLACE = re.compile(
    r"环绕|围绕|围着|遮挡|挡住|遮住|盖住|重叠|聚在一起|排列|排成|并排|相邻|相对|临近|靠近|接近|紧挨|置于|"
    r"(?:是|为).{0,4}焦点"
)
_ZH_FRAME_SIDES = re.compile(
    r"(?:画面)?(?:左侧|右侧|左边|右边|上方|下方|中间|中央|左上|右上|左下|右下|角落)(?:的|中|里|上)?"
)
_ZH_SIZES = ("巨大", "巨型", "庞大", "硕大", "微小", "极小", "巨人般")
_ZH_OCCASION = re.compile(r"在[^？?吗]{0,8}(?:节|节日|庆典|婚礼|仪式|庙会|典礼)(?:上|里|中|期间)")


def _zh_form(subject: str, predicate: str) -> Attribution | None:
    """Forms that decide before the word lists: where a thing is relative to another or the
    frame (环绕着, 是焦点, 左侧是否有花), an occasion (在芦笙节上: a custom), what is worn or held
    (男士穿的是西装), a size (巨大: against the rest of the scene)."""
    if _ZH_RELATIVE_PLACE.search(predicate):
        return Attribution("spatial", "predicate_relative_place")
    if _ZH_FRAME_SIDES.fullmatch(subject) and predicate.startswith(("有", "是否有", "有没有")):
        return Attribution("spatial", "existence_placed")
    if _ZH_OCCASION.search(predicate) or any(name in predicate for name in _ZH_LANDMARKS):
        return Attribution("scientific_cultural_knowledge", "predicate_knowledge")
    if re.search(r"(?:穿|戴|拿|握|抱|背)(?:着)?的$", subject):
        return Attribution("interaction", "predicate_worn_or_held")
    if re.sub(r"[的吗呢？?]|规模|体型", "", predicate).endswith(_ZH_SIZES):  # not 迷你裙
        return Attribution(COUNT, "predicate_size")
    return None


def attribute_zh(text: str, cues: dict[str, frozenset[str]]) -> Attribution | None:
    """The capability of a Chinese question that is not an existence question, by its
    predicate (the words after 是/在/被/有 ...)."""
    bare = re.sub(r"(?:吗|呢)?[？?。!！]*$", "", text.strip())
    match = _ZH_SPLIT.search(bare)
    if match is None:  # no link word: the whole question is a predicate of an unknown subject
        subject, predicate = "?", bare
    else:
        subject, predicate = bare[: match.start()], bare[match.start() :]
    if not predicate:
        return None

    def has(capability: str, where: str = predicate) -> bool:
        return any(cue in where for cue in cues.get(capability, ()))

    scene = subject != "?" and (not subject or bool(_ZH_SCENE.search(subject)))
    person = bool(subject) and bool(_ZH_PEOPLE.search(subject))
    if _ZH_NEGATION.search(bare):
        return Attribution("logical_constraints", "predicate_negation")
    gaze = re.search(r"目光|眼神|视线", subject if subject != "?" else bare)
    if gaze and (subject != "?" or gaze.start() < 8):  # a gaze (not light): looking, or a state
        if re.search(r"看|望|注视|凝视|俯瞰|盯|投向", bare[gaze.end() :]):
            return Attribution("interaction", "predicate_action")
        return Attribution("state", "predicate_expression")
    # the subject's attribute noun, or one near the start of a question without a link word
    # (气氛热闹喜庆吗？ 画面氛围宁静吗？)
    head = subject if subject != "?" else bare[:6]
    for ending, capability in _ZH_ATTRIBUTE_SUBJECTS:
        if head.endswith(ending) or (subject == "?" and bare.startswith(ending)):
            return Attribution(capability, "attribute_subject")
    if subject == "?":
        for ending, capability in _ZH_ATTRIBUTE_SUBJECTS:
            if len(ending) > 1 and ending in head:
                return Attribution(capability, "attribute_subject")
    if _ZH_FEELING.search(bare):
        return Attribution("emotion_atmosphere", "predicate_mood")
    by_form = _zh_form(subject, predicate)
    if by_form is not None:
        return by_form
    if any(word in bare for word in _ZH_WEATHER):
        return Attribution("natural_scenes", "predicate_weather")
    if _ZH_MATERIAL_FORM.search(predicate):
        return Attribution("material", "predicate_material")
    if _ZH_LIGHT_FORM.search(predicate):
        return Attribution("lighting", "predicate_lighting")
    if any(word in predicate for word in (*_ZH_RENDERING, *_ZH_REALISM)) or any(
        word in subject for word in ("景深", "焦距", "虚化", "分辨率", "画质")
    ):  # 场景的景深是否很大: the rendering's
        return Attribution("style", "predicate_style")
    if has(TEXT) or ("字" in predicate and ("写" in predicate or "文字" in predicate)):
        return Attribution(TEXT, "predicate_text")
    if has("style") and (scene or "风格" in predicate):
        return Attribution("style", "predicate_style")
    if _ZH_COUNTS.search(predicate):
        return Attribution(COUNT, "predicate_comparison")
    owned = predicate.removeprefix("是否").removeprefix("有没有").removeprefix("有")
    if predicate.startswith(("有", "是否有", "有没有")) or (
        predicate.startswith("是否") and owned.startswith("有")
    ):
        return _zh_possession(owned.removeprefix("有"), cues)
    if any(verb in predicate for verb in _ZH_ACTIONS):
        return Attribution("interaction", "predicate_action")
    place = _ZH_PLACE.search(predicate)
    if place and has("temporal_setting", place.group(0)):
        return Attribution("temporal_setting", "predicate_temporal_setting")
    if place and re.search(r"身上|怀里|手里|手中", place.group(0)):
        return Attribution("interaction", "predicate_contact")  # 女孩靠在男孩身上
    if (place and subject.endswith(_ZH_POSTURES)) or re.search(
        r"(?:坐|站|躺|跪|蹲|趴)在", predicate
    ):
        return Attribution("state", "predicate_posture")  # 角色坐在长椅上: her posture
    if place and re.sub(r"[的了着吗呢]", "", predicate[place.end() :]):
        # 运动员在跑道上奔跑: one entity's own action, the place a circumstance
        return Attribution("state", "predicate_own_action")
    if place or any(word in predicate for word in _ZH_PLACE_WORDS):
        return Attribution("spatial", "predicate_place")
    if any(word in predicate for word in _ZH_KNOWLEDGE):
        return Attribution("scientific_cultural_knowledge", "predicate_knowledge")
    for capability in ("color", "shape", "material", "texture", "lighting", "temporal_setting"):
        if has(capability):
            return Attribution(capability, f"predicate_{capability}")
    if has("emotion_atmosphere"):
        # a person's (or her face's) feeling is her state; a place's or thing's, its mood
        if (
            person
            or re.search(
                r"笑|哭|泪|皱眉|脸红|害羞", predicate
            )  # a face's expression, a figurine's too
            or any(subject.endswith(part) for part in _ZH_BODY_PARTS | {"笑容", "眼神"})
        ):
            return Attribution("state", "predicate_expression")
        return Attribution("emotion_atmosphere", "predicate_mood")
    if has("state"):
        return Attribution("state", "predicate_state")
    if has("part_whole"):
        return Attribution("part_whole", "predicate_part")
    if scene:
        return Attribution("emotion_atmosphere", "scene_quality")
    return Attribution("state", "condition")


_ZH_FEELING = re.compile(r"(?:给人|让人|令人|使人).*(?:感|觉)|感觉|氛围|气氛")
_ZH_WEATHER = ("下雨", "下雪", "雨中", "雪中", "大雾", "雾气", "暴风雨", "雷雨", "细雨")
_ZH_MATERIAL_FORM = re.compile(r"(?:做|制|造|织|编|雕)(?:的|成|而成)|材质|用(?!于).{1,4}(?:做|制)")
_ZH_LIGHT_FORM = re.compile(
    r"(?:发出|散发|照|映|闪).{0,6}光|光.{0,4}(?:照|射|洒)|发亮|闪闪|闪耀|闪烁|发光|熠熠"
)
_ZH_MEDIA = (
    "照片",
    "摄影",
    "拍摄",
    "插画",
    "插图",
    "水彩",
    "素描",
    "漫画",
    "动漫",
    "真实感",
    "风格",
)
# a rendering like life, whatever the subject (景观是否生动逼真？)
_ZH_REALISM = ("逼真", "写实", "真实", "现实", "照片级", "复古")
_ZH_RENDERING = ("虚化", "模糊", "黑白", "景深", "特写", "广角", "焦点")
_ZH_ATTRIBUTE_SUBJECTS = tuple(
    (ending, capability)
    for capability, endings in (
        ("lighting", "光线 灯光 光照 光影 照明 阴影 影子 光 光辉 光芒 光晕"),
        ("color", "颜色 色调 色彩 配色 主色调 发色"),
        ("style", "风格 画风 艺术风格 画面风格"),
        ("emotion_atmosphere", "氛围 气氛 情调 基调"),
        ("material", "材质 材料 质地"),
        ("shape", "形状 外形 轮廓"),
        ("texture", "纹理 质感 表面 图案"),
        ("state", "表情 神情 神态 动作 姿势 姿态 发型 造型"),
        ("temporal_setting", "时间 季节 时代 年代 时节"),
        (TEXT, "文字 字体 标题 字样"),
        (COUNT, "大小 尺寸 数量 个数"),
    )
    for ending in endings.split()
)


_ZH_HAIRSTYLES = ("辫子", "马尾", "发髻", "刘海", "卷发", "双马尾", "丸子头", "发型", "造型")
_ZH_OWN_QUALITIES = ("姿态", "姿势", "表情", "神情", "气质", "神态")  # 女士有姿态吗: her state


def _zh_possession(owned: str, cues) -> Attribution:
    if owned.startswith(("戴", "穿", "拿", "抱", "握", "披")):  # 角色有戴花吗: worn or held
        return Attribution("interaction", "possession_worn_or_held")
    if any(owned.endswith(thing) for thing in _ZH_LIGHT_THINGS):
        return Attribution("lighting", "possession_lighting")
    if any(owned.endswith(style) for style in (*_ZH_HAIRSTYLES, *_ZH_OWN_QUALITIES)):
        return Attribution("state", "possession_quality")
    described = owned.rsplit("的", 1)[0] if "的" in owned else ""
    if described and any(cue in described for cue in cues.get("state", ())):
        return Attribution("state", "possession_quality")  # 燃烧的末端: its condition
    for capability in ("color", "shape", "material", "texture"):
        if any(cue in owned for cue in cues.get(capability, ())):
            return Attribution(capability, f"possession_{capability}")
    if owned in _ZH_BODY_PARTS or owned in ("大腿", "小腿", "手臂", "手指", "脚趾"):
        return Attribution("part_whole", "possession_part")
    if any(owned.endswith(part) for part in _ZH_BODY_PARTS):
        if re.search(r"长|短|卷|直|乱|大|小|浓|细|粗", owned[:-1]):
            return Attribution("state", "possession_quality")
        return Attribution("part_whole", "possession_part")
    if any(item in owned for item in _ZH_WORN):
        return Attribution("interaction", "possession_worn_or_held")
    if any(cue in owned for cue in cues.get("emotion_atmosphere", ())):
        return Attribution("state", "possession_expression")
    return Attribution("part_whole", "possession")
