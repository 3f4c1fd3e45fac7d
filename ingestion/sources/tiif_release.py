"""A TIIF-Bench release (GitHub `A113N-W3I/TIIF-Bench`, its testmini subset) as an evidence bundle
(CONTRACTS.md).

Input, relative to the release folder `root`:
- `data/testmini_prompts/<dimension>_prompts.jsonl`: one prompt per line (`short_description`,
  `long_description`);
- `data/testmini_eval_prompts/<dimension>_eval_prompts.jsonl`: line i holds the yes/no questions
  of prompts line i (`yn_question_list`) and a compliant image's answer to each
  (`yn_answer_list`: "yes", or "no" for a question such as a negation);
- `eval-results/testmini_subset_eval_results/testmini_subset_eval_results_<JUDGE>/<GENERATOR>/
  <dimension>/<short|long>/<i>.json`: one judge's answers (`model_pred`) to the questions of one
  generator's image of one prompt, with `attribute`, `desc`, `jsonl_file`, `line_idx`,
  `questions` and `gt_answers`;
- `data/test_prompts/<dimension>_prompts.jsonl` (optional): the full test set. A result's `<i>`
  and `line_idx` count the lines of the full test set's file, of which testmini is a subset (the
  first lines for most dimensions, scattered lines for `style` and `real_world`): result `<i>`
  answers the testmini prompt whose short and long descriptions are those of test line `i`.
  Without this file, `<i>` is the testmini line.

Ids as the release has them: a generator's id is its folder name, a judge's id (and
`judge_model`) the folder's `<JUDGE>` (`GPT-4o`, `QwenVL`); either, unsafe (`is_safe_id`), is
refused. One concept per (dimension, `<i>`), `tiif-<dimension>-<i>` with every character that is
not safe in an id (the `+` of `action+color`) written `_`; two prompts per concept,
`<concept>-short` and `<concept>-long` (the two descriptions, trimmed), language `en`, source
`tiif-testmini/<dimension>`. The questions of the eval prompt line, trimmed, are `q1`, `q2`, ...
under both prompts of the concept, with the same parents, capability and text target.

Target-yes: a stored answer says whether the image complies. A question whose compliant answer
is "no" (compliant answers are read trimmed and in any case) stores "yes" where the judge said
"no" and "no" where it said "yes". Every such question is recorded in the report as
`turned_to_target_yes`, one row per bundle question (so a concept's question counts twice, once
per prompt), whatever the number of judgments turned.

Parents (TIIF gives none), by this rule: an existence question ("Is there a/an/any ... in the
image?", "Are there ... in the scene?", "Does a ... exist?", "Does this object exist (...)?"; the
frame may be the image, scene, picture, painting, photo or room) is a root; its object is the
head noun of its noun phrase (the phrase's last word before the first word such as "in", "on",
"with", "wearing" or "sitting"; after "a pair/group/row of", what follows "of"). Every
other question gets as parents the existence questions of its prompt, in order, whose object it
names as a word (plurals read as their singulars: cups, berries, boxes, people). Only an object
a compliant image shows is a parent: an existence question answered "no" by a compliant image
(a negation: "Is there a cat?" under "the bed is empty") gates nothing. A question naming no
object stays a root. Edges run from existence questions to other questions only, so there is no
self-loop and no cycle, and every chain is one edge long. Every edge is recorded in the report as
`derived_parent`, one row per bundle edge.

Capabilities, by the first rule that applies (`seeds/tiif_dimension_map.csv` and
`seeds/tiif_entity_nouns.csv`, described in seeds/_seeds.yml):
1. a question whose compliant answer is "no" tests a negation: `logical_constraints`;
2. an existence question: its noun's capability in the entity noun list (the last two words of
   the phrase, then the head noun, singular); a noun the list lacks, or an existence question
   naming none, gets `man_made` (as DSG's whole entities do) and is reported as
   `entity_noun_unlisted`: what no rule maps, by count and example;
3. a question stating its dimension's own logic ("Does the image present a comparison logic:
   ...", "Is the number of ..."): the dimension's capability;
4. the dimension's cue capabilities, in order, the first whose cue the question names
   (`spatial`: a word such as left, right, top, behind, front, near, hidden; `color`: a color as
   the predicate, "Is the cup blue?", "... white in color?"; `texture`: a material or texture
   word, "made of", wooden, metallic, fluffy; `lighting`: lighting, lit, shadow, glow; `style`:
   style, aesthetic, illustration, cinematic; `text_rendering`: a quoted string): a compound
   dimension `a+b` takes `b`'s capability where its cue fires;
5. the dimension's capability.
A `text_rendering` question with exactly one quoted string has it as its `text_target`. TIIF's
text questions are judged yes/no and the bundle has no transcriptions, so the warehouse scores
Text Content from these judgments (METHOD 3's fallback; the leaderboard says so). A dimension the
map lacks is refused.

Dirty rows, each reported as file:line: reason (file relative to `root`; a result file's line is
1, where its object starts; a missing result's, the eval prompt line it would answer). The
default mode repairs by these rules; `strict` refuses with every problem listed:
- `missing_result`: no result file of a judge for a generator's prompt: no judgment is stored for
  that image (missing evidence, never a "no");
- `unknown_result`: a file under the results that answers no testmini prompt (an unknown
  dimension or form folder, a name not `<i>.json`, an `<i>` no testmini prompt has): dropped;
- `duplicate_result`: a second file for one judge, generator and prompt (`07.json` beside
  `7.json`): dropped, the first in name order wins;
- `malformed_result`: a result that is not a JSON object with the keys above, or whose
  `questions` is not a list of strings: dropped;
- `result_mismatch`: a result whose `attribute`, `desc`, `jsonl_file` or `line_idx` contradicts
  its path: dropped (which of the two is right cannot be told);
- `question_mismatch`: a result whose questions (trimmed) are not its eval prompt line's: dropped
  (its answers are to other questions);
- `compliant_answer_mismatch`: a result whose `gt_answers` differ from its eval prompt line's
  compliant answers: the eval prompt line's are used;
- `answer_count_mismatch`: `model_pred` not a list with one answer per question: every answer of
  the result is stored null (the answers cannot be paired with the questions);
- `answer_not_yes_no`: an answer that is neither yes nor no (after trimming and lower-casing):
  stored null, a missing judgment, never a "no";
- `entity_noun_unlisted`: rule 2 above.
A file of `data/` that cannot be read, a line that is not a JSON object with the keys above,
question and answer lists of different lengths, a compliant answer neither yes nor no, prompt and
eval prompt files of different lengths, a testmini prompt the test file lacks, or ids that are
unsafe or collide, are refused in either mode. Every repair, drop and rule applied is written to
the bundle's `conversion_report` table (file, line, class, action, reason). The rules applied
(`turned_to_target_yes`, `derived_parent`) are not dirt: `strict` refuses neither, and their
action is `repaired` (a report row's action is `repaired` or `dropped`, and the answer or
question is kept after the stated rule).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from ingestion.bundle import Problem
from ingestion.bundle.format import is_safe_id
from ingestion.bundle.load import default_capabilities
from ingestion.sources.release_common import (
    Conversion,
    DirtyRow,
    ReleaseError,
    refuse_unless_empty,
    write_conversion,
)
from ingestion.sources.tiif_questions import (
    DEFAULT_DIMENSION_MAP,
    DEFAULT_ENTITY_NOUNS,
    FORMS,
    Concept,
    QuestionRules,
    concept_questions,
    question_tables,
    read_rules,
)

PROMPTS_DIR = Path("data/testmini_prompts")
EVAL_DIR = Path("data/testmini_eval_prompts")
TEST_PROMPTS_DIR = Path("data/test_prompts")
RESULTS_DIR = Path("eval-results/testmini_subset_eval_results")
JUDGE_PREFIX = "testmini_subset_eval_results_"
DIRTY_CLASSES = (
    "missing_result",
    "unknown_result",
    "duplicate_result",
    "malformed_result",
    "result_mismatch",
    "question_mismatch",
    "compliant_answer_mismatch",
    "answer_count_mismatch",
    "answer_not_yes_no",
    "entity_noun_unlisted",
)
APPLIED_CLASSES = ("turned_to_target_yes", "derived_parent")
RESULT_KEYS = ("attribute", "desc", "jsonl_file", "line_idx", "questions", "gt_answers")
_UNSAFE_CHARACTER = re.compile(r"[^A-Za-z0-9._-]")
_RESULT_NAME = re.compile(r"[0-9]+\.json")


class TiifReleaseError(ReleaseError):
    """The release cannot be converted (or, strict, has dirty rows); lists every problem."""

    release = "TIIF-Bench release"


def _answer(value: object) -> str | None:
    """The answer "yes" or "no" (trimmed, in any case), else None."""
    if not isinstance(value, str):
        return None
    answer = value.strip().lower()
    return answer if answer in ("yes", "no") else None


# --------------------------------------------------------------------------------------------------
# The benchmark: prompts and eval prompts
# --------------------------------------------------------------------------------------------------


def _read_jsonl(root: Path, rel: Path, problems: list[Problem]) -> list[tuple[int, dict]]:
    """The objects of a JSON Lines file with their 1-based lines (blank lines skipped)."""
    try:
        text = (root / rel).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        problems.append(Problem(rel.as_posix(), None, f"cannot read: {error}"))
        return []
    rows = []
    for line, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            value = json.loads(raw)
        except json.JSONDecodeError as error:
            problems.append(Problem(rel.as_posix(), line, f"not JSON: {error.msg}"))
            continue
        if not isinstance(value, dict):
            problems.append(Problem(rel.as_posix(), line, "not a JSON object"))
            continue
        rows.append((line, value))
    return rows


def _strings(value: object) -> bool:
    return isinstance(value, list) and all(isinstance(item, str) for item in value)


def _prompt_problem(row: dict) -> str | None:
    for key in ("short_description", "long_description"):
        if not isinstance(row.get(key), str) or not row[key].strip():
            return f"no {key}"
    return None


def _eval_problem(row: dict) -> str | None:
    questions, answers = row.get("yn_question_list"), row.get("yn_answer_list")
    if not _strings(questions) or not questions:
        return "yn_question_list is not a list of questions"
    if not _strings(answers) or len(answers) != len(questions):
        return "yn_answer_list is not one answer per question"
    if any(_answer(a) is None for a in answers):
        return "a compliant answer (yn_answer_list) is neither yes nor no"
    if any(not q.strip() for q in questions):
        return "an empty question"
    return None


def _read_dimension(root: Path, dimension: str, problems: list[Problem]):
    """The (line, prompt) and (line, eval prompt) pairs of a dimension, paired line by line."""
    prompts_rel = PROMPTS_DIR / f"{dimension}_prompts.jsonl"
    eval_rel = EVAL_DIR / f"{dimension}_eval_prompts.jsonl"
    prompts = _read_jsonl(root, prompts_rel, problems)
    evals = _read_jsonl(root, eval_rel, problems) if (root / eval_rel).is_file() else None
    if evals is None:
        problems.append(Problem(eval_rel.as_posix(), None, "no eval prompts for these prompts"))
        return []
    if len(prompts) != len(evals):
        reason = f"{len(evals)} eval prompts for the {len(prompts)} prompts of {prompts_rel}"
        problems.append(Problem(eval_rel.as_posix(), None, reason))
        return []
    pairs, valid = [], True
    for (p_line, prompt), (e_line, evaluation) in zip(prompts, evals, strict=True):
        for rel, line, reason in (
            (prompts_rel, p_line, _prompt_problem(prompt)),
            (eval_rel, e_line, _eval_problem(evaluation)),
        ):
            if reason:
                problems.append(Problem(rel.as_posix(), line, reason))
                valid = False
        pairs.append(((p_line, prompt), (e_line, evaluation)))
    return pairs if valid else []


def _descriptions(prompt: dict) -> tuple[str, str]:
    return prompt["short_description"].strip(), prompt["long_description"].strip()


def _result_indices(root: Path, dimension: str, pairs, problems) -> list[int | None]:
    """The `<i>` of the results that answer each testmini prompt: its line in the full test
    set's prompts file where the release has one, else its own (0-based); None where it cannot
    be told (a problem)."""
    test_rel = TEST_PROMPTS_DIR / f"{dimension}_prompts.jsonl"
    if not (root / test_rel).is_file():
        return list(range(len(pairs)))
    line_of: dict[tuple[str, str], int] = {}
    for line, prompt in _read_jsonl(root, test_rel, problems):
        if _prompt_problem(prompt) is None:
            line_of.setdefault(_descriptions(prompt), line - 1)
    prompts_rel = (PROMPTS_DIR / f"{dimension}_prompts.jsonl").as_posix()
    indices: list[int | None] = []
    for (p_line, prompt), _ in pairs:
        index = line_of.get(_descriptions(prompt))
        if index is None or index in indices:
            how = "is not" if index is None else "is twice"
            reason = f"this prompt {how} in {test_rel.as_posix()}: its results cannot be placed"
            problems.append(Problem(prompts_rel, p_line, reason))
            index = None
        indices.append(index)
    return indices


def safe_dimension(dimension: str) -> str:
    return _UNSAFE_CHARACTER.sub("_", dimension)


def _concepts(root: Path, rules: QuestionRules, problems: list[Problem]) -> list[Concept]:
    folder = root / PROMPTS_DIR
    if not folder.is_dir():
        problems.append(Problem(PROMPTS_DIR.as_posix(), None, "no prompts folder here"))
        return []
    dimensions = sorted(
        p.name.removesuffix("_prompts.jsonl") for p in folder.glob("*_prompts.jsonl")
    )
    concepts, named = [], {}
    for dimension in dimensions:
        if dimension not in rules.dimensions:
            reason = f"dimension {dimension!r} is not in seeds/tiif_dimension_map.csv"
            problems.append(
                Problem((PROMPTS_DIR / f"{dimension}_prompts.jsonl").as_posix(), None, reason)
            )
            continue
        safe = safe_dimension(dimension)
        if named.setdefault(safe, dimension) != dimension:
            reason = f"dimensions {named[safe]!r} and {dimension!r} both make the id part {safe!r}"
            problems.append(Problem(PROMPTS_DIR.as_posix(), None, reason))
            continue
        pairs = _read_dimension(root, dimension, problems)
        indices = _result_indices(root, dimension, pairs, problems)
        eval_rel = (EVAL_DIR / f"{dimension}_eval_prompts.jsonl").as_posix()
        for index, ((_, prompt), (e_line, evaluation)) in zip(indices, pairs, strict=True):
            if index is None:
                continue
            texts = [q.strip() for q in evaluation["yn_question_list"]]
            compliant = [_answer(a) for a in evaluation["yn_answer_list"]]
            concept_id = f"tiif-{safe}-{index}"
            if not is_safe_id(f"{concept_id}-short"):
                problems.append(Problem(eval_rel, e_line, f"id {concept_id!r} is not safe"))
                continue
            concepts.append(
                Concept(
                    dimension,
                    index,
                    concept_id,
                    eval_rel,
                    e_line,
                    dict(zip(FORMS, _descriptions(prompt), strict=True)),
                    concept_questions(dimension, texts, compliant, rules),
                )
            )
    return concepts


# --------------------------------------------------------------------------------------------------
# The judges' results
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Place:
    """Where a result belongs: which judge answered about which generator's image of what."""

    judge: str
    generator: str
    concept: Concept
    form: str


def _judge_folders(root: Path, problems: list[Problem]) -> list[tuple[str, Path]]:
    folder = root / RESULTS_DIR
    if not folder.is_dir():
        problems.append(Problem(RESULTS_DIR.as_posix(), None, "no results folder here"))
        return []
    judges = []
    for path in sorted(p for p in folder.iterdir() if p.is_dir()):
        judge = path.name.removeprefix(JUDGE_PREFIX)
        rel = path.relative_to(root).as_posix()
        if not path.name.startswith(JUDGE_PREFIX) or not judge:
            problems.append(Problem(rel, None, f"not a judge folder ({JUDGE_PREFIX}<JUDGE>)"))
        elif not is_safe_id(judge):
            problems.append(Problem(rel, None, f"judge id {judge!r} is not a safe id"))
        else:
            judges.append((judge, path))
    return judges


def _generators(root: Path, judges, problems: list[Problem]) -> list[str]:
    """Every generator folder of any judge (a judge that lacks one misses its results)."""
    names = set()
    for _, folder in judges:
        for path in folder.iterdir():
            if path.is_dir() and not is_safe_id(path.name):
                reason = f"generator id {path.name!r} is not a safe id"
                problems.append(Problem(path.relative_to(root).as_posix(), None, reason))
            elif path.is_dir():
                names.add(path.name)
    return sorted(names)


def _result_files(root: Path, judges, generators, concepts, dirty) -> dict[_Place, Path]:
    """Each result file at its place; every other file under the results reported."""
    places = {(c.dimension, form, c.index): (c, form) for c in concepts for form in FORMS}
    found: dict[_Place, Path] = {}
    for judge, folder in judges:
        for path in sorted(p for p in folder.rglob("*") if p.is_file()):
            rel = path.relative_to(folder).parts
            placed = None
            if len(rel) == 4 and rel[0] in generators and _RESULT_NAME.fullmatch(rel[3]):
                placed = places.get((rel[1], rel[2], int(rel[3].removesuffix(".json"))))
            where = path.relative_to(root).as_posix()
            if placed is None:
                reason = (
                    "answers no testmini prompt (<GENERATOR>/<dimension>/<short|long>/<i>.json)"
                )
                dirty.append(DirtyRow(where, 1, "unknown_result", "dropped", reason))
                continue
            place = _Place(judge, rel[0], *placed)
            if place in found:
                first = found[place].relative_to(root).as_posix()
                reason = f"a second result for the place of {first}; dropped (the first wins)"
                dirty.append(DirtyRow(where, 1, "duplicate_result", "dropped", reason))
                continue
            found[place] = path
    return found


def _judgments(root: Path, concepts, dirty, problems) -> list[dict]:
    judges = _judge_folders(root, problems)
    generators = _generators(root, judges, problems)
    found = _result_files(root, judges, generators, concepts, dirty)
    judgments = []
    for judge, folder in judges:
        for generator in generators:
            for concept in concepts:
                for form in FORMS:
                    place = _Place(judge, generator, concept, form)
                    path = found.get(place)
                    if path is None:
                        dirty.append(_missing(root, folder, place))
                        continue
                    judgments += _result_judgments(
                        path, path.relative_to(root).as_posix(), place, dirty
                    )
    return judgments


def _missing(root: Path, folder: Path, place: _Place) -> DirtyRow:
    concept = place.concept
    expected = folder / place.generator / concept.dimension / place.form / f"{concept.index}.json"
    reason = (
        f"no result of judge {place.judge} for {place.generator}'s image of "
        f"{concept.prompt_id(place.form)} ({expected.relative_to(root).as_posix()}); "
        "no judgment stored"
    )
    return DirtyRow(concept.eval_file, concept.eval_line, "missing_result", "dropped", reason)


def _read_result(path: Path, where: str, dirty: list[DirtyRow]) -> dict | None:
    try:
        result = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        reason = f"cannot be read as JSON ({error}); dropped"
        dirty.append(DirtyRow(where, 1, "malformed_result", "dropped", reason))
        return None
    missing = [key for key in RESULT_KEYS if not isinstance(result, dict) or key not in result]
    if missing or not _strings(result["questions"]):
        what = f"no {', '.join(missing)}" if missing else "questions is not a list of strings"
        dirty.append(DirtyRow(where, 1, "malformed_result", "dropped", f"{what}; dropped"))
        return None
    return result


def _contradiction(result: dict, place: _Place) -> str | None:
    concept = place.concept
    expected = {
        "attribute": concept.dimension,
        "desc": f"{place.form}_description",
        "jsonl_file": f"{concept.dimension}_eval_prompts.jsonl",
        "line_idx": concept.index,
    }
    wrong = [
        f"{key} {result[key]!r} (its path says {value!r})"
        for key, value in expected.items()
        if result[key] != value
    ]
    return "; ".join(wrong) or None


def _result_judgments(path: Path, where: str, place: _Place, dirty: list[DirtyRow]) -> list[dict]:
    """The judgments of one result file, target-yes, its dirty rows reported."""
    result = _read_result(path, where, dirty)
    if result is None:
        return []
    concept = place.concept
    contradiction = _contradiction(result, place)
    if contradiction:
        dirty.append(DirtyRow(where, 1, "result_mismatch", "dropped", f"{contradiction}; dropped"))
        return []
    if [q.strip() for q in result["questions"]] != [q.text for q in concept.questions]:
        reason = f"its questions are not those of {concept.eval_file}:{concept.eval_line}; dropped"
        dirty.append(DirtyRow(where, 1, "question_mismatch", "dropped", reason))
        return []
    compliant = [q.compliant for q in concept.questions]
    gt = result["gt_answers"]
    if not isinstance(gt, list) or [_answer(a) for a in gt] != compliant:
        reason = (
            f"gt_answers {gt!r} differ from the eval prompt's {compliant}; the eval prompt's used"
        )
        dirty.append(DirtyRow(where, 1, "compliant_answer_mismatch", "repaired", reason))
    preds = result.get("model_pred")
    paired = isinstance(preds, list) and len(preds) == len(compliant)
    if not paired:
        count = len(preds) if isinstance(preds, list) else "no list of"
        reason = f"{count} answers to {len(compliant)} questions; every answer stored null"
        dirty.append(DirtyRow(where, 1, "answer_count_mismatch", "repaired", reason))
    judgments = []
    for at, question in enumerate(concept.questions):
        answer = _answer(preds[at]) if paired else None
        if paired and answer is None:
            # a judge's unparseable output is a missing judgment, never a "no"
            shown = preds[at][:40] if isinstance(preds[at], str) else preds[at]
            reason = (
                f"q{at + 1}: answer {shown!r} is neither yes nor no; stored as a missing answer"
            )
            dirty.append(DirtyRow(where, 1, "answer_not_yes_no", "repaired", reason))
        if answer is not None and question.compliant == "no":
            answer = "yes" if answer == "no" else "no"  # target-yes: "yes" = the image complies
        judgments.append(
            {
                "prompt_id": concept.prompt_id(place.form),
                "model_id": place.generator,
                "question_id": f"q{at + 1}",
                "answer": answer,
                "p_yes": None,
                "judge_id": place.judge,
                "judge_model": place.judge,
            }
        )
    return judgments


# --------------------------------------------------------------------------------------------------
# The conversion
# --------------------------------------------------------------------------------------------------


def convert_tiif(
    root: Path,
    out: Path,
    strict: bool = False,
    dimension_map: Path = DEFAULT_DIMENSION_MAP,
    entity_nouns: Path = DEFAULT_ENTITY_NOUNS,
) -> Conversion:
    """Write the release folder `root` as a JSONL bundle in `out` (which must be absent or
    empty), or raise TiifReleaseError listing every problem (and, `strict`, every dirty row);
    nothing is written then."""
    root, out = Path(root), Path(out)
    refuse_unless_empty(out, TiifReleaseError)
    dirty: list[DirtyRow] = []
    applied: list[DirtyRow] = []
    rules, problems = read_rules(default_capabilities(), dimension_map, entity_nouns)
    concepts = [] if problems else _concepts(root, rules, problems)
    prompts, questions = question_tables(concepts, dirty, applied)
    judgments = _judgments(root, concepts, dirty, problems)
    tables = {"prompts": prompts, "questions": questions, "judgments": judgments}
    return write_conversion(
        out, tables, dirty, problems, strict, TiifReleaseError, applied, dirty_classes=DIRTY_CLASSES
    )
