"""OneIG-Bench's questions, English and Chinese: which are existence questions and of what, and
the capability each gets by the written rules of `ingestion.sources.oneig_release`'s docstring.
The seeds they read are described in seeds/_seeds.yml (`oneig_category_map`,
`oneig_entity_nouns`, `oneig_cue_words`; English nouns also from `tiif_entity_nouns`)."""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass
from pathlib import Path

from ingestion.bundle import Problem
from ingestion.paths import SEEDS_DIR
from ingestion.sources.attribution import (
    DEFAULT_CUE_WORDS,
    LANGUAGES,
    attribute_en,
    attribute_zh,
    capability_source,
    existence_kind,
    participle_after_noun,
    read_cue_words,
    word_forms,
    wordnet_capability,
)
from ingestion.sources.tiif_questions import DEFAULT_ENTITY_NOUNS as TIIF_ENTITY_NOUNS
from ingestion.sources.tiif_questions import quoted_strings

DEFAULT_CATEGORY_MAP = SEEDS_DIR / "oneig_category_map.csv"
DEFAULT_ENTITY_NOUNS = SEEDS_DIR / "oneig_entity_nouns.csv"
FALLBACK_ENTITY = "man_made"  # an existence question whose noun no list has (as TIIF's)
FALLBACK_CAPABILITY = "state"  # a question no rule maps, reported as `capability_unmapped`
TEXT = "text_rendering"
COUNT = "quantification_comparison"
PART_WHOLE = "part_whole"
# The cue capabilities, tried in this order after the existence rule (the first that fires wins)
CUE_ORDER = (
    TEXT,
    "style",
    COUNT,
    "color",
    "shape",
    "material",
    "texture",
    "lighting",
    "spatial",
    "temporal_setting",
    "emotion_atmosphere",
    "interaction",
    PART_WHOLE,
    "state",
    "humans",
)


def _words_of(listed: str) -> frozenset[str]:
    return frozenset(listed.split())


# -- English -------------------------------------------------------------------------------------

_EN_ARTICLE = r"(?:(?:a|an|any|some|another|the|this|that|these|those)\s+)?"
_EN_FRAME = (
    r"(?:\s+(?:in|on|within)\s+(?:the|this)\s+"
    r"(?:image|scene|picture|painting|photo|photograph|illustration|artwork|frame))?"
)
_EN_EXISTENCE = (
    re.compile(rf"^(?:is|are) there {_EN_ARTICLE}(?P<np>.+?){_EN_FRAME}\s*\?$", re.I),
    re.compile(rf"^(?:does|do) {_EN_ARTICLE}(?P<np>.+?) exists?{_EN_FRAME}\s*\?$", re.I),
    re.compile(
        rf"^(?:is|are) {_EN_ARTICLE}(?P<np>.+?) "
        rf"(?:present|visible|depicted|shown|included|featured){_EN_FRAME}\s*\?$",
        re.I,
    ),
)
# A noun phrase ends before the first of these words ("a cat sitting on a mat", "a hat worn by
# the girl"); its head noun is its last word before them.
_EN_PHRASE_ENDS = _words_of(
    "in on at with without of near next behind under above below beside between to from by "
    "for like such that which who whose not wearing holding dressed sitting standing lying "
    "present depicted visible shown worn included involved featured held being coming there "
    "is are and or made covered filled surrounded hanging floating flying running walking"
)
_EN_QUANTIFIERS = _words_of("pair group row stack set bunch couple collection pile herd flock")
_EN_COUNT_WORDS = _words_of(
    "two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
    "twenty several multiple many numerous few dozen dozens hundreds countless both single "
    "only exactly just more fewer"
)
_EN_POSSESSION = re.compile(r"^(?:does|do|did)\s+.+?\s+(?:have|has|possess)\b", re.I)
# "Is the cup on the table?": a thing placed in, on or at another is a spatial relation
_EN_LOCATIVE = re.compile(
    r"^(?:is|are)\s+(?:the|a|an)\s+[^?]+?\s+(?:in|on|at|inside|among|amid|amidst|within|atop|"
    r"onto|into)\s+(?:the|a|an|his|her|their|its)\s+[^?]+\?$",
    re.I,
)
# With a quoted string, these also say that the question is about rendered text ("Does the sign
# read "OPEN"?"): the quoted-text rule, beside the text_rendering cue words of the seed.
_QUOTE_CUES = {
    "en": _words_of("read reads say says saying spell spells number word words title label sign"),
    "zh": frozenset("写显示号码字句标喊说"),
}
_DOUBLE_QUOTED = re.compile(r"\"([^\"]+)\"|“([^”]+)”|「([^」]+)」|『([^』]+)』")


def en_words(text: str) -> list[str]:
    """Lower-case words ("girl's" -> girl), a hyphenated word also as its parts."""
    words = []
    for word in re.findall(r"[a-z0-9][a-z0-9'-]*", text.lower()):
        word = word.removesuffix("'s").strip("'-")
        words.append(word)
        if "-" in word:
            words += [part for part in word.split("-") if part]
    return words


def en_existence(text: str) -> tuple[list[str], bool] | None:
    """(the head words of the noun phrase, whether it counts) of an English existence question
    ("Is there a red kite?" -> (["red", "kite"], False); "Are there four boys?" -> (["boys"],
    True): count words are left out of the head words), or None when the question is not one."""
    for form in _EN_EXISTENCE:
        match = form.match(text.strip())
        if match:
            words = re.findall(r"[a-z0-9][a-z0-9'-]*", match.group("np").lower())
            counts = bool(words) and (words[0] in _EN_COUNT_WORDS or words[0].isdigit())
            return _en_head_words(words), counts
    return None


def _en_head_words(words: list[str]) -> list[str]:
    kept: list[str] = []
    for at, word in enumerate(words):
        if word == "of" and kept and kept[-1] in _EN_QUANTIFIERS:
            rest = [w for w in words[at + 1 :] if w not in ("a", "an", "the", "some", "any")]
            return _en_head_words(rest)
        if word in _EN_PHRASE_ENDS or participle_after_noun(word, kept):
            break
        kept.append(word.removesuffix("'s"))
    return [w for w in kept if not w.isdigit() and w not in _EN_COUNT_WORDS] or kept


def en_noun_key(words: list[str], nouns: dict[str, str]) -> str | None:
    """The listed noun the head words name: the last two words, then the last, each also as a
    singular ("cups" -> cup); None when the list has neither."""
    for candidate in (" ".join(words[-2:]), words[-1]) if words else ():
        *first, last = candidate.split()
        for form in sorted(word_forms(last), key=len, reverse=True):
            key = " ".join([*first, form])
            if key in nouns:
                return key
    return None


def _en_cue(capability: str, text: str, words: list[str], cues: frozenset[str]) -> bool:
    """Whether the question names one of the cue words (as a word, exactly) or, for
    part_whole, has the possession form ("Does the girl have a tail?") or, for spatial, the
    locative form ("Is the cup on the table?")."""
    if capability == PART_WHOLE and _EN_POSSESSION.match(text.strip()):
        return True
    if capability == "spatial" and _EN_LOCATIVE.match(text.strip()):
        return True
    joined = f" {' '.join(words)} "
    return any((f" {cue} " in joined) if " " in cue else (cue in words) for cue in cues)


# -- Chinese -------------------------------------------------------------------------------------

_ZH_PLACE = (
    r"(?:这里|那里|这儿|那儿|这(?=有|是否有)|(?:在)?(?:这个|这张|这幅|该|整个)?(?:图|图片|图像|画面|画|场景|照片|背景|画作)"
    r"(?:中|里|上)?|[^有是在的，,？?]{1,6}?(?:里|中|内))?"
)
_ZH_EXISTENCE = (
    re.compile(
        rf"^{_ZH_PLACE}(?:是否有|是否存在|有没有|存不存在|存在|有)(?P<np>(?![吗呢][？?]$).+?)"
        r"(?:存在|在场|出现)?(?:吗|呢)?[？?]$"
    ),
    re.compile(
        r"^(?P<np>.+?)(?:是否存在|存在吗|是存在的吗|是否在场|在场吗|在吗|是否出现|出现了吗|出现吗|"
        r"(?:是否)?(?:出现)?在(?:画面|场景|图片|图像|照片|图)(?:中|里)(?:吗)?)[？?]$"
    ),
)
# "这是一个健身房吗？", "这里是一张照片吗？": what the whole image is (an existence question where
# its noun is listed or names a kind of its own; else its predicate is read)
_ZH_IDENTITY = re.compile(
    r"^(?:这|这里|这儿)(?:是否是|是不是|就是|是)(?:一[个张种幅座只位片间家条场]|个|张)?"
    r"(?P<np>.+?)(?:吗|呢)?[？?]$"
)
# The phrase ends before the first of these ("是否有女孩在跳舞" -> 女孩); its head follows its
# last 的.
_ZH_PHRASE_ENDS = re.compile(
    r"正在|在|位于|穿着|戴着|拿着|手持|从|被|和|与|或|及|并且|是|有|[，,、/（(]"
)
_ZH_NUMERAL = r"(?:[0-9]+|[两二三四五六七八九十百千几多数]+|好几)"
_ZH_CLASSIFIER = r"[个位只名条件对双张把辆座棵朵群片本支头匹块盏颗根扇套幅架艘间栋道种类]"
_ZH_COUNT = re.compile(rf"^(?:{_ZH_NUMERAL}{_ZH_CLASSIFIER}|只有|仅有|唯一|单独|独自)")
_ZH_ARTICLE = re.compile(rf"^(?:一{_ZH_CLASSIFIER}|一些|些|某)")
_ZH_POSSESSION = re.compile(
    r"^(?P<owner>.+?)(?:是否)?(?:具有|拥有|带有|有)(?P<part>.+?)(?:吗|呢)?[？?]$"
)
_ZH_LOCATIVE = re.compile(r"在[^？?吗]+?(?:上|里|中|内|下|旁|前|后|外|之间|边)")
_ZH_NOT_OWNER = re.compile(r"(?:只|所|没|仅|还|是否|这里|那里|图中|画面中|场景中|背景中)$")


def zh_existence(text: str) -> tuple[str, bool] | None:
    """(the head of the noun phrase, whether it counts) of a Chinese existence question
    ("是否有一个女孩？" -> ("女孩", False); "有两个男孩吗？" -> ("男孩", True)), or None."""
    for form in _ZH_EXISTENCE:
        match = form.match(text.strip())
        if match:
            phrase = _ZH_PHRASE_ENDS.split(match.group("np"), maxsplit=1)[0].strip()
            counts = bool(_ZH_COUNT.match(phrase))
            phrase = _ZH_COUNT.sub("", phrase) if counts else _ZH_ARTICLE.sub("", phrase)
            head = phrase.rsplit("的", 1)[-1].removesuffix("们").strip()
            return head, counts
    return None


def zh_noun_key(head: str, nouns: dict[str, str]) -> str | None:
    """The longest listed noun the head ends with ("樱花树" -> 树 where 樱花树 is not listed)."""
    for start in range(len(head)):
        if head[start:] in nouns:
            return head[start:]
    return None


def _zh_cue(capability: str, text: str, cues: frozenset[str]) -> bool:
    if capability == PART_WHOLE:
        match = _ZH_POSSESSION.match(text.strip())
        if match and not _ZH_NOT_OWNER.search(match.group("owner")):
            return True
    if capability == "spatial" and _ZH_LOCATIVE.search(text):
        return True
    return any(cue in text for cue in cues)


# -- the seeds -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Category:
    name: str  # the prompts CSV's `category`
    id_part: str  # its part of the prompt and concept ids
    questions: str  # a Q_D file stem, `text_content` (scripts/text), or "" (none: skipped)
    capability: str  # a question's capability where no cue maps it; "" for none


@dataclass(frozen=True)
class QuestionRules:
    categories: dict[str, Category]
    nouns: dict[str, dict[str, str]]  # language -> noun -> capability
    cues: dict[str, dict[str, frozenset[str]]]  # language -> capability -> cue words


def read_rules(
    capabilities: set[str],
    category_map: Path = DEFAULT_CATEGORY_MAP,
    entity_nouns: Path = DEFAULT_ENTITY_NOUNS,
    cue_words: Path = DEFAULT_CUE_WORDS,
    english_nouns: Path = TIIF_ENTITY_NOUNS,
) -> tuple[QuestionRules, list[Problem]]:
    """The seeds, and a problem for every value that is no capability or language, a noun two
    lists give different capabilities, or a cue of a capability no cue rule tries."""
    problems: list[Problem] = []

    def known(path: Path, line: int, value: str) -> None:
        if value not in capabilities:
            problems.append(Problem(path.name, line, f"{value!r} is no capability"))

    categories = {}
    for line, row in _seed_rows(category_map):
        categories[row["category"]] = Category(
            row["category"], row["id_part"], row["questions"], row["capability"]
        )
        if row["capability"]:
            known(category_map, line, row["capability"])
    nouns: dict[str, dict[str, str]] = {language: {} for language in LANGUAGES}
    listed = [
        (english_nouns, line, {**row, "language": "en"}) for line, row in _seed_rows(english_nouns)
    ]
    listed += [(entity_nouns, line, row) for line, row in _seed_rows(entity_nouns)]
    for path, line, row in listed:
        language, noun, capability = row["language"], row["noun"], row["capability"]
        if language not in nouns:
            problems.append(Problem(path.name, line, f"language {language!r} is not en or zh"))
            continue
        known(path, line, capability)
        if nouns[language].setdefault(noun, capability) != capability:
            reason = f"noun {noun!r} is {nouns[language][noun]} in another list, here {capability}"
            problems.append(Problem(path.name, line, reason))
    frozen, cue_problems = read_cue_words(capabilities, cue_words)
    problems += cue_problems
    return QuestionRules(categories, nouns, frozen), problems


def _seed_rows(path: Path) -> list[tuple[int, dict[str, str]]]:
    with path.open(newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        return [(reader.line_num, {k: (v or "").strip() for k, v in row.items()}) for row in reader]


# -- one question ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Mapped:
    """A question's capability, the rule that gave it, and what the rule read."""

    capability: str
    rule: str  # quoted_text, existence_count, entity_noun, entity_noun_unlisted, cue_<capability>,
    # category, capability_unmapped
    entity: str | None = None  # the noun of an existence question
    text_target: str | None = None

    def source(self, category: str) -> str:
        """`capability_source` (docs/attribution.md): a fallback says so."""
        return capability_source(self.rule, category)


def map_question(text: str, language: str, category: Category, rules: QuestionRules) -> Mapped:
    """The capability of one question, by the first rule that applies (oneig_release's
    docstring, "Capabilities")."""
    nouns, cues = rules.nouns[language], rules.cues[language]
    words = en_words(text) if language == "en" else []

    def has_cue(capability: str) -> bool:
        listed = cues.get(capability, frozenset())
        if language == "en":
            return _en_cue(capability, text, words, listed)
        return _zh_cue(capability, text, listed)

    quoted = [s for s in _quoted(text, language) if s.strip()]
    said = set(words) if language == "en" else set(text)
    if quoted and (has_cue(TEXT) or said & _QUOTE_CUES[language]):
        return Mapped(TEXT, "quoted_text", text_target=quoted[0] if len(quoted) == 1 else None)
    existence = _existence(text, language, nouns)
    if existence is not None:
        return existence
    by_predicate = attribute_en(text, cues) if language == "en" else attribute_zh(text, cues)
    if by_predicate is not None:
        return Mapped(by_predicate.capability, by_predicate.rule)
    for capability in CUE_ORDER:
        if has_cue(capability):
            return Mapped(capability, f"cue_{capability}")
    if category.capability:
        return Mapped(category.capability, "category")
    return Mapped(FALLBACK_CAPABILITY, "capability_unmapped")


def _zh_identity(text: str, nouns: dict[str, str]) -> Mapped | None:
    """ "这是一个健身房吗？": the image is the thing named, where a rule or the noun list knows it;
    None leaves the question to its predicate ("这是白天吗？")."""
    match = _ZH_IDENTITY.match(text.strip())
    if match is None:
        return None
    head = match.group("np").rsplit("的", 1)[-1].strip()
    kind = existence_kind(text, head, head, "zh")
    if kind is not None:
        return Mapped(kind.capability, kind.rule)
    key = zh_noun_key(head, nouns)
    return Mapped(nouns[key], "entity_noun", entity=head) if key else None


def _quoted(text: str, language: str) -> list[str]:
    double = [next(g for g in m.groups() if g) for m in _DOUBLE_QUOTED.finditer(text)]
    return double or (quoted_strings(text) if language == "en" else [])


def _existence(text: str, language: str, nouns: dict[str, str]) -> Mapped | None:
    if language == "en":
        found = en_existence(text)
        if found is None:
            return None
        words, counts = found
        key, head = en_noun_key(words, nouns), (words[-1] if words else "")
    else:
        found_zh = zh_existence(text)
        if found_zh is None:
            return _zh_identity(text, nouns)
        head, counts = found_zh
        key = zh_noun_key(head, nouns)
    if counts:
        return Mapped(COUNT, "existence_count")
    phrase = " ".join(words) if language == "en" else head
    kind = existence_kind(text, head, phrase, language)
    if kind is not None:
        return Mapped(kind.capability, kind.rule)
    if key is None:
        found_in_wordnet = wordnet_capability(word_forms(head)) if language == "en" else None
        if found_in_wordnet is not None:
            return Mapped(found_in_wordnet, "entity_noun_wordnet", entity=head)
        return Mapped(FALLBACK_ENTITY, "entity_noun_unlisted", entity=head or None)
    # the entity: the listed English noun (singular); the Chinese phrase's head (女孩, whose
    # capability is that of its listed suffix 孩)
    return Mapped(nouns[key], "entity_noun", entity=key if language == "en" else head)
