"""Append import: add a bundle's evidence to what the warehouse holds (`qct2i import --append`).

Rows are matched on their table's natural key (`TableSpec.key`: prompt, question, model, image,
judge):
- a key the warehouse does not hold is added (a second judge's answers to stored questions of
  stored images are new keys, not contradictions);
- a row equal to the stored one is a no-op, so importing the same bundle twice changes nothing;
- a row that differs from the stored one in any column contradicts it, and the whole bundle is
  refused with the file, line, key and both values, unless a slice to swap is named:
  - `--replace-model MODEL_ID`: in every table where the bundle carries that generator's rows,
    the stored rows of the generator (every judge's, for judgments: they judged the old images)
    are dropped and the bundle's take their place (a re-generated or re-judged model). Tables
    where the bundle has no rows of it keep the stored ones.
  - `--replace-judge JUDGE_ID`: the stored judgments of that judge are dropped and the bundle's
    take their place (a re-run or upgraded judge).
  Rows in both a named generator's and a named judge's slice are dropped once. A named generator
  or judge without rows in the bundle is refused: it would delete nothing, or read as "its new
  evidence is empty".

Prompts and questions describe the benchmark itself, so a stored prompt must come back the same:
the same text, concept, language and source, and the same questions with the same text,
capability, parents, entity and text target. A bundle may leave stored prompts out (it evaluates
a subset) and may add new prompts with their questions; it may not add or drop questions of a
stored prompt (that would change the prompt's graph under evidence judged on the old one).

Like the replacing import, an append is one transaction: refused, or failed while writing, it
leaves the raw tables exactly as they were.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc

from ingestion.bundle import LINE, BundleError, Problem, read_bundle
from ingestion.bundle.format import TABLES
from ingestion.bundle.problems import COMMAND_LINE
from ingestion.bundle.raw_tables import (
    create_raw_table,
    quoted,
    raw_columns,
    raw_transaction,
    record_import,
    resort_raw_table,
)

MAX_PROBLEMS_PER_CHECK = 50  # a wrong bundle may contradict millions of rows; show the first ones
# The slices an append may swap: the column naming them, its command-line flag, what it names.
_SLICE_FLAGS = {"model_id": "--replace-model", "judge_id": "--replace-judge"}
_SLICE_NOUNS = {"model_id": "generator", "judge_id": "judge"}


def _tables_with(column: str) -> tuple[str, ...]:
    return tuple(name for name, spec in TABLES.items() if column in spec.column_names)


@dataclass(frozen=True)
class _Slice:
    """The stored rows of one generator or one judge, named on the command line to be swapped."""

    column: str  # a key of _SLICE_FLAGS
    value: str

    @property
    def flag(self) -> str:
        return f"{_SLICE_FLAGS[self.column]} {self.value}"


@dataclass
class AppendResult:
    """Rows added and rows dropped by `--replace-model` / `--replace-judge`, per table."""

    added: dict[str, int] = field(default_factory=dict)
    replaced: dict[str, int] = field(default_factory=dict)

    @property
    def changed(self) -> bool:
        return any(self.added.values()) or any(self.replaced.values())


def append_bundle(
    folder: Path,
    warehouse: Path,
    replace_models: Sequence[str] = (),
    capabilities: set[str] | None = None,
    replace_judges: Sequence[str] = (),
    image_roots: Sequence[Path] = (),
) -> AppendResult:
    """Validate the bundle on its own, then add it to the warehouse's raw tables in one
    transaction, or raise BundleError listing every contradiction with the stored evidence.
    `image_roots` as for `read_bundle`."""
    folder, warehouse = Path(folder), Path(warehouse)
    tables = read_bundle(folder, capabilities, with_lines=True, image_roots=image_roots)
    slices = [_Slice("model_id", model) for model in replace_models]
    slices += [_Slice("judge_id", judge) for judge in replace_judges]
    _refuse_unknown_replacements(folder, tables, slices)
    with raw_transaction(warehouse) as con:
        return _append(con, folder, tables, slices)


def _refuse_unknown_replacements(folder, tables, slices: Sequence[_Slice]) -> None:
    """`--replace-model M` swaps M's evidence for the bundle's (`--replace-judge J` likewise): a
    bundle without M would silently delete nothing or, worse, be read as M's new evidence being
    empty."""
    problems = []
    for named in slices:
        if not any(_rows_of(tables[name], named) for name in _tables_with(named.column)):
            noun = _SLICE_NOUNS[named.column]
            reason = f"{named.flag}: the bundle holds no rows of this {noun}"
            problems.append(Problem(COMMAND_LINE, None, reason))
    if problems:
        raise BundleError(folder, problems)


def _rows_of(table: pa.Table, named: _Slice) -> int:
    return table.num_rows and pc.sum(pc.equal(table[named.column], named.value)).as_py()


def _append(con, folder: Path, tables: dict[str, pa.Table], slices) -> AppendResult:
    for name in TABLES:
        # a first append starts from empty tables; a stored table gains the contract's new columns
        create_raw_table(con, name, replace=False)
    result = AppendResult()
    for name in TABLES:
        result.replaced[name] = _drop_replaced_slices(con, name, tables[name], slices)
    for name, table in tables.items():
        con.register(f"bundle_{name}", table)
    problems = _question_set_problems(con, folder) + _unlisted_models(con, folder)
    for name in TABLES:
        problems += _contradictions(con, folder, name)
    if problems:
        raise BundleError(folder, problems)
    for name in TABLES:
        result.added[name] = _insert_new_rows(con, name)
        if result.added[name] or result.replaced.get(name):
            resort_raw_table(con, name)
    if result.changed:
        record_import(con, folder, "append", result.added, restart=False)
    return result


def _drop_replaced_slices(con, name: str, table: pa.Table, slices: Sequence[_Slice]) -> int:
    """Delete the stored rows of every named slice the bundle carries rows of in this table."""
    swapped = [
        named
        for named in slices
        if named.column in TABLES[name].column_names and _rows_of(table, named)
    ]
    if not swapped:
        return 0
    condition = " OR ".join(f'"{named.column}" = ?' for named in swapped)
    values = [named.value for named in swapped]
    return con.execute(f"DELETE FROM raw.{name} WHERE {condition}", values).fetchone()[0]


def _bundle_file(folder: Path, name: str) -> str:
    """The file a table was read from (the reader refuses a table present in both formats)."""
    jsonl = folder / f"{name}.jsonl"
    return jsonl.name if jsonl.exists() else f"{name}.parquet"


def _compared_columns(name: str) -> list[str]:
    spec = TABLES[name]
    return [column for column in spec.column_names if column not in spec.key]


def _contradictions(con, folder: Path, name: str) -> list[Problem]:
    """Rows whose key is stored with other values: one problem per differing column."""
    spec, file = TABLES[name], _bundle_file(folder, name)
    compared = _compared_columns(name)
    differs = " OR ".join(f'b."{c}" IS DISTINCT FROM s."{c}"' for c in compared)
    pairs = ", ".join(f's."{c}", b."{c}"' for c in compared)
    rows = con.execute(
        f"SELECT b.{LINE}, {quoted(spec.key)}, {pairs} "
        f"FROM bundle_{name} b JOIN raw.{name} s USING ({quoted(spec.key)}) "
        f"WHERE {differs} ORDER BY b.{LINE} LIMIT {MAX_PROBLEMS_PER_CHECK + 1}"
    ).fetchall()
    problems = []
    for row in rows[:MAX_PROBLEMS_PER_CHECK]:
        line, key, values = row[0], row[1 : 1 + len(spec.key)], row[1 + len(spec.key) :]
        for column, stored, new in zip(compared, values[0::2], values[1::2], strict=True):
            if stored != new:
                problems.append(Problem(file, line, _contradiction(name, key, column, stored, new)))
    if len(rows) > MAX_PROBLEMS_PER_CHECK:
        shown = f"more rows contradict stored ones (the first {MAX_PROBLEMS_PER_CHECK} are listed)"
        problems.append(Problem(file, None, shown))
    return problems


def _contradiction(name: str, key: Iterable, column: str, stored, new) -> str:
    described = _describe_key(name, key)
    return (
        f"{described} contradicts the stored row: {column} is {stored!r} in the warehouse, "
        f"{new!r} in this bundle{_replace_hint(name)}"
    )


def _replace_hint(name: str) -> str:
    """The flags that could swap the slice a contradicting row of table `name` belongs to."""
    columns = [column for column in _SLICE_FLAGS if column in TABLES[name].column_names]
    if not columns:
        return ""
    flags = " or ".join(f"{_SLICE_FLAGS[c]} {c.upper()}" for c in columns)
    nouns = " or ".join(f"that {_SLICE_NOUNS[c]}'s" for c in columns)
    return f"; pass {flags} to replace {nouns} stored evidence"


def _describe_key(name: str, key: Iterable) -> str:
    parts = ", ".join(
        f"{column} {value!r}" for column, value in zip(TABLES[name].key, key, strict=True)
    )
    return f"{name.rstrip('s')} ({parts})"


def _question_set_problems(con, folder: Path) -> list[Problem]:
    """A stored prompt that the bundle carries must carry exactly its stored questions."""
    added = con.execute(
        f"""SELECT b.{LINE}, b.prompt_id, b.question_id FROM bundle_questions b
        SEMI JOIN raw.prompts USING (prompt_id)
        ANTI JOIN raw.questions USING (prompt_id, question_id)
        ORDER BY b.{LINE} LIMIT {MAX_PROBLEMS_PER_CHECK}"""
    ).fetchall()
    dropped = con.execute(
        f"""SELECT p.{LINE}, s.prompt_id, s.question_id FROM raw.questions s
        JOIN bundle_prompts p USING (prompt_id)
        ANTI JOIN bundle_questions USING (prompt_id, question_id)
        ORDER BY p.{LINE}, s.question_order LIMIT {MAX_PROBLEMS_PER_CHECK}"""
    ).fetchall()
    questions, prompts = _bundle_file(folder, "questions"), _bundle_file(folder, "prompts")
    return [
        Problem(
            questions,
            line,
            f"question {question!r} is new, but prompt {prompt!r} is stored with its questions; "
            "a stored prompt's questions cannot change (give the new version a new prompt_id)",
        )
        for line, prompt, question in added
    ] + [
        Problem(
            prompts,
            line,
            f"prompt {prompt!r} is stored with question {question!r}, which this bundle lacks; "
            "a stored prompt's questions cannot change",
        )
        for line, prompt, question in dropped
    ]


def _unlisted_models(con, folder: Path) -> list[Problem]:
    """Once the warehouse lists generators, every generator with evidence must be listed (the
    replacing import's rule, applied to the stored and the appended rows together)."""
    listed = "(SELECT model_id FROM raw.generators UNION SELECT model_id FROM bundle_generators)"
    problems = []
    for name in ("images", "judgments", "transcriptions"):
        rows = con.execute(
            f"""SELECT min(b.{LINE}), b.model_id FROM bundle_{name} b
            WHERE (SELECT count(*) FROM {listed}) > 0 AND b.model_id NOT IN {listed}
            GROUP BY b.model_id ORDER BY 1"""
        ).fetchall()
        file = _bundle_file(folder, name)
        problems += [
            Problem(
                file,
                line,
                f"model {model!r} is not listed in generators (the warehouse's "
                "or this bundle's); add its row to the bundle's generators file",
            )
            for line, model in rows
        ]
    return problems


def _insert_new_rows(con, name: str) -> int:
    spec = TABLES[name]
    columns = [column for column, _ in raw_columns(name)]
    return con.execute(
        f"INSERT INTO raw.{name} ({quoted(columns)}) SELECT {quoted(columns)} "
        f"FROM bundle_{name} ANTI JOIN raw.{name} USING ({quoted(spec.key)})"
    ).fetchone()[0]
