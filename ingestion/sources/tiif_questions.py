"""TIIF-Bench's concepts as the bundle's prompts and questions: which questions are existence
questions, the parents derived from them, each question's capability and text target, and the
report rows of the rules applied. The rules, in words, are in `ingestion.sources.tiif_release`'s
docstring; the seeds they read are described in seeds/_seeds.yml (`tiif_dimension_map`,
`tiif_entity_nouns`)."""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass
from pathlib import Path

from ingestion.bundle import Problem
from ingestion.paths import SEEDS_DIR
from ingestion.sources.attribution import (
    DEFAULT_CUE_WORDS,
    attribute_en,
    capability_source,
    existence_kind,
    participle_after_noun,
    read_cue_words,
    word_forms,
    wordnet_capability,
)
from ingestion.sources.release_common import DirtyRow

DEFAULT_DIMENSION_MAP = SEEDS_DIR / "tiif_dimension_map.csv"
DEFAULT_ENTITY_NOUNS = SEEDS_DIR / "tiif_entity_nouns.csv"
# Where a noun the list lacks goes (as DSG's whole entities do, seeds/dsg_category_map.csv),
# reported as `entity_noun_unlisted`.
FALLBACK_ENTITY = "man_made"
NEGATED = "logical_constraints"  # a question whose compliant answer is "no"
FORMS = ("short", "long")  # a concept's two prompts
SOURCE_PREFIX = "tiif-testmini"


def _words_of(listed: str) -> frozenset[str]:
    return frozenset(listed.split())


# -- existence questions -----------------------------------------------------------------------

_SUFFIX = re.compile(r"\s*answer with yes or no\.?\s*$", re.IGNORECASE)
_FRAME = r"(?:image|scene|picture|painting|photo|photograph|room)"
_ARTICLE = r"(?:(?:a|an|any|some|another|the|this)\s+)?"
_EXISTENCE = (
    re.compile(r"^does this object exist \((?P<np>[^)]*)\)\s*\?$", re.IGNORECASE),
    re.compile(
        rf"^(?:is|are) there {_ARTICLE}(?P<np>.+?)\s+(?:in|on) (?:the|this) {_FRAME}\s*\?$",
        re.IGNORECASE,
    ),
    re.compile(
        rf"^(?:does|do) {_ARTICLE}(?P<np>.+?) exists?(?: in (?:the|this) {_FRAME})?\s*\?$",
        re.IGNORECASE,
    ),
)
# The noun phrase of an existence question ends before the first of these words: what follows
# says where the thing is or what it does ("a cat sitting on a mat", "a man in a smock"). Its
# head noun is the phrase's last word (commas only separate adjectives: "a smaller, older lamp").
_PHRASE_ENDS = _words_of(
    "in on at with without of near next behind under above below beside between to from by "
    "for like such that which who whose not wearing holding dressed sitting standing lying "
    "jumping running hanging splattering baking"
)
# "a pair of boots", "a group of people": the head is what follows "of".
_QUANTIFIERS = _words_of("pair group row stack set bunch couple collection pile herd flock")
_ARTICLES = _words_of("a an the some any")


def existence_phrase(text: str) -> str | None:
    """The noun phrase an existence question asks about ("Is there a red ball in the image?" ->
    "red ball"), or None when the question is not one."""
    bare = _SUFFIX.sub("", text).strip()
    for form in _EXISTENCE:
        match = form.match(bare)
        if match:
            return match.group("np")
    return None


def head_words(phrase: str) -> list[str]:
    """The phrase's words (lower case) up to the first word that ends it; after a quantifier
    ("a pair of ..."), the words after its "of"."""
    words = re.findall(r"[a-z][a-z'-]*", phrase.lower())
    kept: list[str] = []
    for at, word in enumerate(words):
        if word == "of" and kept and kept[-1] in _QUANTIFIERS:
            return head_words(" ".join(w for w in words[at + 1 :] if w not in _ARTICLES))
        if word in _PHRASE_ENDS or participle_after_noun(word, kept):
            break
        kept.append(word.removesuffix("'s"))
    return kept


def _words(text: str) -> list[str]:
    return [w.removesuffix("'s") for w in re.findall(r"[a-z][a-z']*", text.lower())]


# -- cues: what a question of a compound dimension names ---------------------------------------

_SPATIAL = _words_of(
    "left right top bottom above below under underneath beneath behind front near beside "
    "between side hidden hiding positioned edge corner over"
)
_COLORS = _words_of(
    "red orange yellow green blue purple violet pink brown black white gray grey gold golden "
    "silver beige turquoise navy teal cyan magenta maroon olive ivory"
)
_COLOR_WORDS = _words_of("color colored colour coloured")
_TEXTURE = _words_of(
    "made texture textured material wooden wood metallic metal fabric leather plastic rubber "
    "fluffy smooth rough furry silk velvet ceramic stone marble wool woolen cotton denim "
    "fabric-covered"
)
_LIGHTING = _words_of(
    "lighting lit shadow shadows shading glow glowing sunlight spotlight illuminated backlit"
)
_STYLE = _words_of(
    "style styled aesthetic aesthetics illustration cartoon cinematic realistic photorealistic "
    "render rendering rendered minimalist minimalistic"
)
_QUOTED = re.compile(r"(?<![A-Za-z])'([^']+)'(?![A-Za-z])|\"([^\"]+)\"|‘([^’]+)’|“([^”]+)”")


def quoted_strings(text: str) -> list[str]:
    return [next(g for g in match.groups() if g) for match in _QUOTED.finditer(text)]


def _names_color(text: str) -> bool:
    """A color as the predicate ("Is the cup blue?", "... white in color?", "the color of
    gold"), not as a name ("Is the yellow dog chasing the gold dog?")."""
    words = _words(_SUFFIX.sub("", text))
    return bool(set(words) & _COLOR_WORDS) or bool(words and words[-1] in _COLORS)


CUES = {
    "spatial": lambda text: bool(set(_words(text)) & _SPATIAL),
    "color": _names_color,
    "texture": lambda text: bool(set(re.findall(r"[a-z][a-z-]*", text.lower())) & _TEXTURE),
    "lighting": lambda text: bool(set(_words(text)) & _LIGHTING),
    "style": lambda text: bool(set(_words(text)) & _STYLE),
    "text_rendering": lambda text: bool(quoted_strings(text)),
}
# A question stating its dimension's own logic takes the dimension's capability, never a cue's.
_LOGIC_FORM = re.compile(r"^(?:does the image present an? \w+ logic|is the number of)\b", re.I)

# -- the seeds -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class DimensionRule:
    capability: str  # what a question no other rule maps gets
    cues: tuple[str, ...]  # capabilities tried first, in order, each when its cue fires


@dataclass(frozen=True)
class QuestionRules:
    dimensions: dict[str, DimensionRule]
    nouns: dict[str, str]  # entity noun (singular, may be two words) -> capability
    cues: dict[str, frozenset[str]]  # capability -> English cue words (attribution's)


def read_rules(
    capabilities: set[str],
    dimension_map: Path = DEFAULT_DIMENSION_MAP,
    entity_nouns: Path = DEFAULT_ENTITY_NOUNS,
    cue_words: Path = DEFAULT_CUE_WORDS,
) -> tuple[QuestionRules, list[Problem]]:
    """The two seeds, and a problem for every value that is no capability of `capabilities` or
    names a cue no code defines."""
    problems, dimensions, nouns = [], {}, {}
    for line, row in _seed_rows(dimension_map):
        cues = tuple(row["cue_capabilities"].split())
        dimensions[row["dimension"]] = DimensionRule(row["capability"], cues)
        for value in (row["capability"], *cues):
            if value not in capabilities:
                problems.append(Problem(dimension_map.name, line, f"{value!r} is no capability"))
        for cue in cues:
            if cue not in CUES:
                problems.append(Problem(dimension_map.name, line, f"no cue defined for {cue!r}"))
    for line, row in _seed_rows(entity_nouns):
        nouns[row["noun"]] = row["capability"]
        if row["capability"] not in capabilities:
            reason = f"{row['capability']!r} is no capability"
            problems.append(Problem(entity_nouns.name, line, reason))
    cues, cue_problems = read_cue_words(capabilities, cue_words)
    return QuestionRules(dimensions, nouns, cues["en"]), problems + cue_problems


def _seed_rows(path: Path) -> list[tuple[int, dict[str, str]]]:
    with path.open(newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        return [(reader.line_num, row) for row in reader]


# -- one concept's questions ---------------------------------------------------------------------


@dataclass(frozen=True)
class Question:
    """One question of a concept (the same under its short and its long prompt)."""

    text: str  # trimmed
    compliant: str  # the answer of a compliant image, "yes" or "no"
    capability: str
    rule: str  # which rule gave the capability (see tiif_release's docstring)
    entity: str | None  # the noun of an existence question that must be answered yes
    parents: tuple[int, ...]  # 0-based positions of its parents in the concept's questions
    text_target: str | None


def concept_questions(
    dimension: str, texts: list[str], compliant: list[str], rules: QuestionRules
) -> list[Question]:
    """The questions of one eval prompt line, their capabilities and derived parents."""
    dimension_rule = rules.dimensions[dimension]
    shapes = [_existence(text, rules.nouns) for text in texts]
    # Only an object that must be present is a parent: "Is there a cat?" answered "no" by a
    # compliant image (a negation) gates nothing.
    roots = [
        (at, word_forms(head))
        for at, (head, _, _) in enumerate(shapes)
        if head is not None and compliant[at] == "yes"
    ]
    questions = []
    for at, text in enumerate(texts):
        entity = shapes[at][1]
        parents: tuple[int, ...] = ()
        if entity is None:  # existence questions are roots
            named = set().union(*(word_forms(w) for w in _words(text)))
            parents = tuple(root for root, forms in roots if forms & named)
        capability, rule = _capability(text, compliant[at], dimension_rule, rules, shapes[at])
        quoted = quoted_strings(text)
        target = quoted[0] if capability == "text_rendering" and len(quoted) == 1 else None
        questions.append(
            Question(
                text=text,
                compliant=compliant[at],
                capability=capability,
                rule=rule,
                entity=entity if compliant[at] == "yes" else None,
                parents=parents,
                text_target=target,
            )
        )
    return questions


def _existence(text: str, nouns: dict[str, str]) -> tuple[str | None, str | None, bool]:
    """(head noun, entity key, whether the noun list has it) of an existence question; (None,
    None, False) for any other question. An existence question naming no noun has the entity
    key "" and no head."""
    phrase = existence_phrase(text)
    if phrase is None:
        return None, None, False
    words = head_words(phrase)
    if not words:
        return None, "", False
    for candidate in (" ".join(words[-2:]), words[-1]):
        for form in sorted(word_forms(candidate.split()[-1]), key=len, reverse=True):
            key = " ".join([*candidate.split()[:-1], form])
            if key in nouns:
                return words[-1], key, True
    return words[-1], words[-1], False


def _capability(text, compliant, dimension_rule, rules, shape) -> tuple[str, str]:
    """(capability, the rule that gave it), the rules in their stated order."""
    _, entity, listed = shape
    if entity is not None:
        if compliant == "no":  # an object a compliant image lacks: an absence
            return NEGATED, "absence"
        if _counts(text):
            return "quantification_comparison", "existence_count"
        head = shape[0] or ""
        kind = existence_kind(text, head, existence_phrase(text) or "", "en")
        if kind is not None:
            return kind.capability, kind.rule
        if listed:
            return rules.nouns[entity], "entity_noun"
        found_in_wordnet = wordnet_capability(word_forms(head)) if head else None
        if found_in_wordnet is not None:
            return found_in_wordnet, "entity_noun_wordnet"
        return FALLBACK_ENTITY, "entity_noun_unlisted"
    if compliant == "no" and _THERE_IS.match(text):  # "Are there any leaves on the tree?"
        return NEGATED, "absence"
    if _LOGIC_FORM.match(text):
        return dimension_rule.capability, "logic_form"
    if CUES["text_rendering"](text):
        return "text_rendering", "quoted_text"
    by_predicate = attribute_en(_SUFFIX.sub("", text), rules.cues)
    if by_predicate is not None:
        return by_predicate.capability, by_predicate.rule
    return dimension_rule.capability, "dimension"


_THERE_IS = re.compile(r"^(?:is|are) there\b", re.I)
_COUNTING = _words_of(
    "two three four five six seven eight nine ten eleven twelve several multiple many numerous "
    "few dozen both single exactly only more fewer"
)


def _counts(text: str) -> bool:
    """An existence question that counts ("Are there three apples in the image?")."""
    phrase = existence_phrase(text) or ""
    words = re.findall(r"[a-z0-9]+", phrase.lower())
    return any(word.isdigit() or word in _COUNTING for word in words[:2])


# -- the bundle's prompts and questions -------------------------------------------------------


@dataclass(frozen=True, eq=False)  # one object per concept: equal and hashed as itself
class Concept:
    dimension: str
    index: int  # the `<i>` / `line_idx` of the results that answer it
    concept_id: str
    eval_file: str  # relative to the release folder
    eval_line: int
    descriptions: dict[str, str]  # form -> prompt text
    questions: list[Question]

    def prompt_id(self, form: str) -> str:
        return f"{self.concept_id}-{form}"


def question_tables(concepts: list[Concept], dirty: list[DirtyRow], applied: list[DirtyRow]):
    """The prompts and questions tables, and the report rows of the rules applied to them."""
    prompts, rows = [], []
    for concept in concepts:
        for form in FORMS:
            prompt_id = concept.prompt_id(form)
            prompts.append(
                {
                    "prompt_id": prompt_id,
                    "concept_id": concept.concept_id,
                    "language": "en",
                    "source": f"{SOURCE_PREFIX}/{concept.dimension}",
                    "text": concept.descriptions[form],
                }
            )
            for at, question in enumerate(concept.questions):
                rows.append(_question_row(concept, prompt_id, at, question, dirty, applied))
    return prompts, rows


def _question_row(concept, prompt_id, at, question: Question, dirty, applied) -> dict:
    where = (concept.eval_file, concept.eval_line)
    question_id = f"q{at + 1}"
    if question.compliant == "no":
        reason = (
            f"{prompt_id}/{question_id}: a compliant image answers no; every judge's answer is "
            "stored turned (yes = the judge said no)"
        )
        applied.append(DirtyRow(*where, "turned_to_target_yes", "repaired", reason))
    for parent in question.parents:
        noun = concept.questions[parent].entity
        reason = f"{prompt_id}/{question_id}: parent q{parent + 1}, the existence of {noun!r}"
        applied.append(DirtyRow(*where, "derived_parent", "repaired", reason))
    if question.rule == "entity_noun_unlisted":
        noun = question.entity or "(no noun)"
        reason = (
            f"{prompt_id}/{question_id}: noun {noun!r} is not in seeds/tiif_entity_nouns.csv; "
            "capability man_made (the fallback)"
        )
        dirty.append(DirtyRow(*where, "entity_noun_unlisted", "repaired", reason))
    return {
        "prompt_id": prompt_id,
        "question_id": question_id,
        "text": question.text,
        "capability": question.capability,
        "parents": [f"q{parent + 1}" for parent in question.parents],
        "entity": question.entity or None,
        "text_target": question.text_target,
        "capability_source": capability_source(question.rule, concept.dimension),
        "compliant_answer": question.compliant,
    }
