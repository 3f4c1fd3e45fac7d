"""A Davidsonian Scene Graph release (Cho et al., ICLR 2024) as an evidence bundle (CONTRACTS.md).

Input: the questions CSV (`item_id`, `text`, `keywords`, `proposition_id`, `dependency`,
`category_broad`, `category_detailed`, `question_natural_language`), one answers CSV per judge
(`t2i_model`, `item_id`, `question_id`, `answer`; the judge is the file name less `_dsg`:
`pali17b_dsg.csv` -> `pali17b`) and, optionally, the human Likert ratings CSV (`t2i_model`,
`item_id`, `worker_id`, `answer`).

One prompt per questions `item_id` (language `en`, source the questions file's stem), one question
`q<proposition_id>` per row, its capability from seeds/dsg_category_map.csv. Answers match
questions on (`item_id`, `question_id` = `proposition_id`). The release's answers for TIFA160 use
DSG-1k's `tifa160_<n>` items, not tifa160-dev-anns.csv's (`coco_...`, other questions), so their
questions file is dsg-1k-anns.csv (or its `tifa160_` rows). The ratings file becomes the bundle's
`ratings` table (CONTRACTS "Additions"): one row per (item, model, worker), `rater_id` the worker
id, `rating` the answer as a number, `scale` `likert_1_5` (the release's 1-5 consistency Likert
scale, README of the release).

Dirty rows, each reported as file:line: reason, where line is the CSV's 1-based physical line on
which the row starts, the header being line 1. The default mode repairs by these rules; `strict`
refuses with every problem listed:
- `parent_in_words`: a `dependency` token that is not a number (`"5, right"`): the token is
  dropped, the numeric parents kept;
- `self_loop`: a question listed as its own parent: that parent is dropped;
- `missing_parent`: a parent id that is no question of the item: dropped;
- `cycle`: edges are added child by child in id order, parents in listed order; an edge whose
  parent is already reachable from the child would close a cycle and is dropped;
- `answer_not_yes_no`: an answer that is neither yes nor no (after trimming and lower-casing)
  becomes a null answer, a missing judgment, never a "no";
- `unknown_question`: an answer to an item or question the questions file lacks: dropped;
- `duplicate_answer`: a second answer of one judge to one question of one image: dropped;
- `duplicate_question`: a second row with an item's `proposition_id`: dropped (the first wins);
- `rating_not_on_scale`: a rating that is not a whole number from 1 to 5: dropped (a human rating
  cannot be repaired, and no rating is guessed);
- `unknown_rated_item`: a rating of an item the questions file lacks: dropped;
- `duplicate_rating`: a second rating of one worker for one image: dropped (the first wins).
Answers and ratings of a `dsg_prompt_split` none of whose rows match the questions file (the
answers files hold TIFA160 and DSG-1k together) are out of scope: skipped and counted, not dirty.
Every repair and drop is written to the bundle's `conversion_report` table (file, line, class,
action, reason), which the importer loads like any other, so the marts show what was lost.

`convert_release_root` reads a release folder laid out as the release's repository is
(`qct2i import-release dsg --root DIR`): the questions `dsg/data/dsg-1k-anns.csv`, every
`vqa_answers_release/<judge>_dsg.csv`, and `dsg/data/tifa160-likert-anns.csv` where present.
"""

from __future__ import annotations

import csv
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from ingestion.bundle import Problem
from ingestion.bundle.format import is_safe_id
from ingestion.paths import SEEDS_DIR
from ingestion.sources.release_common import (
    REPORT_FILE,
    Conversion,
    DirtyRow,
    ReleaseError,
    break_cycles,
    listed_parents,
    refuse_unless_empty,
    write_conversion,
)

__all__ = [
    "DIRTY_CLASSES",
    "REPORT_FILE",
    "Conversion",
    "DirtyRow",
    "DsgReleaseError",
    "category_key",
    "convert_release",
    "convert_release_root",
    "item_split",
    "judge_id_of",
    "read_category_map",
    "read_csv_rows",
    "release_files",
]

DEFAULT_CATEGORY_MAP = SEEDS_DIR / "dsg_category_map.csv"
DIRTY_CLASSES = (
    "parent_in_words",
    "self_loop",
    "missing_parent",
    "cycle",
    "answer_not_yes_no",
    "unknown_question",
    "duplicate_answer",
    "duplicate_question",
    "rating_not_on_scale",
    "unknown_rated_item",
    "duplicate_rating",
)
QUESTION_COLUMNS = (
    "item_id",
    "text",
    "keywords",
    "proposition_id",
    "dependency",
    "category_broad",
    "category_detailed",
    "question_natural_language",
)
ANSWER_COLUMNS = ("t2i_model", "item_id", "question_id", "answer")
RATING_COLUMNS = ("t2i_model", "item_id", "worker_id", "answer")
# The release's human ratings: "How consistent is the image with the text description?", 1-5.
RATING_SCALE = "likert_1_5"
RATING_VALUES = range(1, 6)
BLANK_CATEGORY = "-"


class DsgReleaseError(ReleaseError):
    """The release cannot be converted (or, strict, has dirty rows); lists every problem."""

    release = "DSG release"


@dataclass(frozen=True)
class _Row:
    file: str
    line: int
    values: dict[str, str]


def judge_id_of(path: Path) -> str:
    stem = path.stem
    return stem[: -len("_dsg")] if stem.endswith("_dsg") else stem


def read_category_map(seed: Path = DEFAULT_CATEGORY_MAP) -> dict[tuple[str, str], str]:
    with seed.open(newline="", encoding="utf-8") as handle:
        return {
            (row["category_broad"], row["category_detailed"]): row["capability"]
            for row in csv.DictReader(handle)
        }


def category_key(broad: str, detailed: str) -> tuple[str, str]:
    return broad.strip(), detailed.strip() or BLANK_CATEGORY


def read_csv_rows(path: Path, columns: Iterable[str]) -> list[_Row]:
    """The rows of a CSV with the physical line each starts on (header = line 1); quoted fields
    may span lines, so the line is tracked from the reader, not counted."""
    try:
        return _read_csv_rows(path, columns)
    except (OSError, UnicodeDecodeError, csv.Error) as error:
        raise DsgReleaseError([Problem(path.name, None, f"cannot read: {error}")]) from None


def _read_csv_rows(path: Path, columns: Iterable[str]) -> list[_Row]:
    with path.open(newline="", encoding="utf-8") as handle:
        reader = csv.reader(handle)
        header = next(reader, None)
        missing = [c for c in columns if header is None or c not in header]
        if missing:
            raise DsgReleaseError(
                [Problem(path.name, 1, f"missing column(s) {', '.join(missing)}")]
            )
        rows, start = [], reader.line_num + 1
        for record in reader:
            rows.append(_Row(path.name, start, dict(zip(header, record, strict=False))))
            start = reader.line_num + 1
        return rows


# --------------------------------------------------------------------------------------------------
# Questions and their parents
# --------------------------------------------------------------------------------------------------


def _listed_parents(row: _Row, ids: set[str], dirty: list[DirtyRow]) -> list[str]:
    """The row's numeric, existing, non-self parents in listed order; the rest reported."""
    child = row.values["proposition_id"].strip()
    tokens = row.values["dependency"].split(",")
    return listed_parents(child, tokens, ids, (row.file, row.line), dirty)


def _break_cycles(rows: list[_Row], listed: dict[str, list[str]], dirty: list[DirtyRow]):
    """Add edges child by child (id order), parents in listed order; drop an edge whose parent is
    already reachable from the child (it would close a cycle)."""
    where_of = {row.values["proposition_id"].strip(): (row.file, row.line) for row in rows}
    return break_cycles(listed, where_of, dirty)


def _item_tables(rows, category_map, source, dirty, problems) -> tuple[dict, list[dict]]:
    """The prompt and the questions of one item."""
    rows = _first_of_each_id(rows, dirty)
    first = rows[0]
    item_id = first.values["item_id"]
    ids = {row.values["proposition_id"].strip() for row in rows}
    listed = {}
    for row in rows:
        pid = row.values["proposition_id"].strip()
        if not pid.isdigit():
            problems.append(Problem(row.file, row.line, f"proposition_id {pid!r} is not a number"))
            return {}, []
        listed[pid] = _listed_parents(row, ids, dirty)
    kept = _break_cycles(rows, listed, dirty)
    prompt = {
        "prompt_id": item_id,
        "concept_id": item_id,
        "language": "en",
        "source": source,
        "text": first.values["text"],
    }
    questions = []
    for row in sorted(rows, key=lambda r: int(r.values["proposition_id"])):
        pid = row.values["proposition_id"].strip()
        key = category_key(row.values["category_broad"], row.values["category_detailed"])
        if key not in category_map:
            reason = f"category {key[0]}/{key[1]} is not in seeds/dsg_category_map.csv"
            problems.append(Problem(row.file, row.line, reason))
        is_entity_root = key[0] == "entity" and not kept[pid]
        questions.append(
            {
                "prompt_id": item_id,
                "question_id": f"q{pid}",
                "text": row.values["question_natural_language"],
                "capability": category_map.get(key),
                "parents": [f"q{p}" for p in kept[pid]],
                "entity": row.values["keywords"].strip().lower() if is_entity_root else None,
                "text_target": None,
                # the release's own label (its category), mapped by seeds/dsg_category_map.csv
                "capability_source": f"release:{key[0]}/{key[1]}",
            }
        )
    return prompt, questions


def _first_of_each_id(rows: list[_Row], dirty: list[DirtyRow]) -> list[_Row]:
    kept: dict[str, _Row] = {}
    for row in rows:
        pid = row.values["proposition_id"].strip()
        if pid in kept:
            reason = f"question {pid} repeats line {kept[pid].line}; dropped (the first wins)"
            dirty.append(DirtyRow(row.file, row.line, "duplicate_question", "dropped", reason))
        else:
            kept[pid] = row
    return list(kept.values())


def item_split(item_id: str) -> str:
    """The prompt split of a DSG item: its id less the trailing `_<number>` (`tifa160_12` ->
    `tifa160`), the answers files' `dsg_prompt_split`."""
    head, _, number = item_id.rpartition("_")
    return head if head and number.isdigit() else item_id


def _rows_of_splits(path: Path, splits: Sequence[str], problems) -> list[_Row]:
    """The questions file's rows, only those of `splits` when any are named."""
    rows = read_csv_rows(path, QUESTION_COLUMNS)
    if not splits:
        return rows
    present = {item_split(row.values["item_id"] or "") for row in rows}
    for split in sorted(set(splits) - present):
        listed = ", ".join(sorted(present))
        problems.append(Problem(path.name, None, f"no item of split {split!r} (it has {listed})"))
    return [row for row in rows if item_split(row.values["item_id"] or "") in splits]


def _questions_tables(path: Path, category_map, dirty, problems, splits: Sequence[str] = ()):
    by_item: dict[str, list[_Row]] = defaultdict(list)
    for row in _rows_of_splits(path, splits, problems):
        item_id = row.values["item_id"]
        if not is_safe_id(item_id):
            problems.append(Problem(row.file, row.line, f"item_id {item_id!r} is not a safe id"))
            continue
        by_item[item_id].append(row)
    prompts, questions = [], []
    for rows in by_item.values():
        prompt, item_questions = _item_tables(rows, category_map, path.stem, dirty, problems)
        if prompt:
            prompts.append(prompt)
            questions += item_questions
    return prompts, questions


# --------------------------------------------------------------------------------------------------
# Answers
# --------------------------------------------------------------------------------------------------


def _judgments(path: Path, known: set[tuple[str, str]], dirty, problems) -> _Answers:
    judge_id = judge_id_of(path)
    if not is_safe_id(judge_id):
        problems.append(Problem(path.name, None, f"judge id {judge_id!r} is not a safe id"))
        return _Answers([], 0)
    judgments, seen = [], set()
    items = {prompt_id for prompt_id, _ in known}
    rows, out_of_scope = _rows_in_scope(path, ANSWER_COLUMNS, items, problems)
    for row in rows:
        v = row.values
        prompt_id = v["prompt_id"]
        question_id = f"q{v['question_id'].strip()}"
        if (prompt_id, question_id) not in known:
            reason = f"item {v['item_id']} question {v['question_id']} is not in the questions file"
            dirty.append(DirtyRow(row.file, row.line, "unknown_question", "dropped", reason))
            continue
        model_id = v["t2i_model"]
        if not is_safe_id(model_id):
            problems.append(Problem(row.file, row.line, f"t2i_model {model_id!r} is not a safe id"))
            continue
        key = (prompt_id, model_id, question_id)
        if key in seen:
            reason = f"second answer of {judge_id} to {'/'.join(key)}; dropped"
            dirty.append(DirtyRow(row.file, row.line, "duplicate_answer", "dropped", reason))
            continue
        seen.add(key)
        judgments.append(_judgment(row, prompt_id, question_id, judge_id, dirty))
    return _Answers(judgments, out_of_scope)


def _split(row: _Row) -> str | None:
    return row.values.get("dsg_prompt_split")


def _rows_in_scope(path: Path, columns, items: set[str], problems) -> tuple[list[_Row], int]:
    """The rows of an answers or ratings file whose prompt split has an item of the questions
    file (each with `prompt_id`, None for an item the questions file lacks), and how many rows
    of other splits were skipped."""
    rows = read_csv_rows(path, columns)
    for row in rows:
        row.values["prompt_id"] = row.values["item_id"] if row.values["item_id"] in items else None
    in_scope = {_split(row) for row in rows if row.values["prompt_id"] is not None}
    if rows and not in_scope:
        reason = "no row names an item of the questions file (is it the right questions file?)"
        problems.append(Problem(path.name, None, reason))
    kept = [row for row in rows if _split(row) in in_scope]
    return kept, len(rows) - len(kept)


@dataclass(frozen=True)
class _Answers:
    judgments: list[dict]
    out_of_scope: int


def _judgment(row: _Row, prompt_id: str, question_id: str, judge_id: str, dirty) -> dict:
    raw = row.values["answer"]
    answer = raw.strip().lower()
    if answer not in ("yes", "no"):
        # a judge's unparseable output is a missing judgment, never a "no"
        reason = f"answer {raw[:40]!r} is neither yes nor no; stored as a missing answer"
        dirty.append(DirtyRow(row.file, row.line, "answer_not_yes_no", "repaired", reason))
        answer = None
    return {
        "prompt_id": prompt_id,
        "model_id": row.values["t2i_model"],
        "question_id": question_id,
        "answer": answer,
        "p_yes": None,
        "judge_id": judge_id,
        "judge_model": judge_id,
    }


# --------------------------------------------------------------------------------------------------
# Human ratings (METHOD 15)
# --------------------------------------------------------------------------------------------------


def _ratings(path: Path, items: set[str], dirty, problems) -> tuple[list[dict], int]:
    """The `ratings` rows of the release's Likert file, and how many rows were out of scope."""
    ratings, seen = [], set()
    rows, out_of_scope = _rows_in_scope(path, RATING_COLUMNS, items, problems)
    for row in rows:
        v = row.values
        if v["prompt_id"] is None:
            reason = f"item {v['item_id']} is not in the questions file"
            dirty.append(DirtyRow(row.file, row.line, "unknown_rated_item", "dropped", reason))
            continue
        model_id, rater_id = v["t2i_model"], v["worker_id"].strip()
        unsafe = [
            f"{name} {value!r}"
            for name, value in (("t2i_model", model_id), ("worker_id", rater_id))
            if not is_safe_id(value)
        ]
        if unsafe:
            problems.append(Problem(row.file, row.line, f"{' and '.join(unsafe)} not a safe id"))
            continue
        rating = _rating_value(v["answer"])
        if rating is None:
            reason = f"rating {v['answer'][:40]!r} is not a whole number from 1 to 5; dropped"
            dirty.append(DirtyRow(row.file, row.line, "rating_not_on_scale", "dropped", reason))
            continue
        key = (v["prompt_id"], model_id, rater_id)
        if key in seen:
            reason = f"second rating of worker {rater_id} for {model_id}/{v['prompt_id']}; dropped"
            dirty.append(DirtyRow(row.file, row.line, "duplicate_rating", "dropped", reason))
            continue
        seen.add(key)
        ratings.append(
            {
                "prompt_id": v["prompt_id"],
                "model_id": model_id,
                "rater_id": rater_id,
                "rating": rating,
                "scale": RATING_SCALE,
            }
        )
    return ratings, out_of_scope


def _rating_value(text: str) -> float | None:
    """The rating as a float when it is one of the scale's whole numbers (`4`, ` 4 `, `4.0`)."""
    try:
        value = float(text.strip())
    except ValueError:
        return None
    return value if value.is_integer() and int(value) in RATING_VALUES else None


# --------------------------------------------------------------------------------------------------
# The conversion
# --------------------------------------------------------------------------------------------------


def convert_release(
    questions: Path,
    answers: list[Path],
    out: Path,
    ratings: Path | None = None,
    strict: bool = False,
    category_map: Path = DEFAULT_CATEGORY_MAP,
    splits: Sequence[str] = (),
) -> Conversion:
    """Write the release as a JSONL bundle in `out` (which must be absent or empty), or raise
    DsgReleaseError listing every problem (and, `strict`, every dirty row); nothing is written
    then. `splits` keeps only the questions of those prompt splits (`item_split`), e.g.
    `["tifa160"]` for the five generators' subset of DSG-1k; their answers and ratings follow."""
    out = Path(out)
    refuse_unless_empty(out, DsgReleaseError)
    dirty: list[DirtyRow] = []
    problems: list[Problem] = []
    prompts, question_rows = _questions_tables(
        Path(questions), read_category_map(category_map), dirty, problems, splits
    )
    known = {(q["prompt_id"], q["question_id"]) for q in question_rows}
    judgments, out_of_scope = [], 0
    for path in answers:
        read = _judgments(Path(path), known, dirty, problems)
        judgments += read.judgments
        out_of_scope += read.out_of_scope
    tables = {"prompts": prompts, "questions": question_rows, "judgments": judgments}
    if ratings:
        items = {prompt["prompt_id"] for prompt in prompts}
        tables["ratings"], skipped = _ratings(Path(ratings), items, dirty, problems)
        out_of_scope += skipped
    return write_conversion(
        out,
        tables,
        dirty,
        problems,
        strict,
        DsgReleaseError,
        out_of_scope=out_of_scope,
        dirty_classes=DIRTY_CLASSES,
    )


# The files of a DSG release as its repository lays them out (`git clone
# https://github.com/j-min/DSG`), which `qct2i import-release dsg --root DIR` reads.
ROOT_QUESTIONS = Path("dsg/data/dsg-1k-anns.csv")
ROOT_ANSWERS = Path("vqa_answers_release")  # every `<judge>_dsg.csv` in it
ROOT_RATINGS = Path("dsg/data/tifa160-likert-anns.csv")  # optional


def release_files(root: Path) -> tuple[Path, list[Path], Path | None]:
    """The questions CSV, the answers CSVs and the ratings CSV (None if absent) of a DSG
    release folder, or DsgReleaseError naming what is missing."""
    root = Path(root)
    questions, ratings = root / ROOT_QUESTIONS, root / ROOT_RATINGS
    answers = sorted((root / ROOT_ANSWERS).glob("*_dsg.csv"))
    problems = []
    if not questions.is_file():
        problems.append(Problem(str(questions), None, "no DSG questions file here"))
    if not answers:
        where = str(root / ROOT_ANSWERS)
        problems.append(Problem(where, None, "no answers file (<judge>_dsg.csv) here"))
    if problems:
        raise DsgReleaseError(problems)
    return questions, answers, ratings if ratings.is_file() else None


def convert_release_root(root: Path, out: Path, strict: bool = False) -> Conversion:
    """`convert_release` of the release folder `root` (`release_files`): DSG-1k's questions,
    every judge's answers and, where present, the human ratings."""
    questions, answers, ratings = release_files(root)
    return convert_release(questions, answers, out, ratings, strict)
