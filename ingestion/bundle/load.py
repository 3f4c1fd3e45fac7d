"""The bundle's public entry points: `read_bundle` (every table, validated), `read_questions_file`
(one questions file on its own) and `load_bundle` (validated, then into the raw tables)."""

from __future__ import annotations

import csv
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import pyarrow as pa

from ingestion.bundle import raw_tables
from ingestion.bundle.checks import (
    checks_connection,
    meaning_checks,
    parent_problems,
    problems_of,
    run_checks,
    shape_checks,
)
from ingestion.bundle.format import QUESTION_ORDER, TABLES
from ingestion.bundle.image_paths import image_path_problems, image_root_problems
from ingestion.bundle.manifest import manifest_problems
from ingestion.bundle.problems import LINE, BundleError, Problem
from ingestion.bundle.read import ReadTable, read_jsonl, read_parquet, read_table
from ingestion.paths import SEEDS_DIR

DEFAULT_TAXONOMY_SEED = SEEDS_DIR / "capabilities.csv"


def default_capabilities(seed: Path = DEFAULT_TAXONOMY_SEED) -> set[str]:
    """The capability keys of the taxonomy seed, read at call time because users may replace it."""
    with seed.open(newline="", encoding="utf-8") as handle:
        return {row["capability"] for row in csv.DictReader(handle)}


def read_bundle(
    folder: Path,
    capabilities: set[str] | None = None,
    with_lines: bool = False,
    image_roots: Sequence[Path] = (),
) -> dict[str, pa.Table]:
    """Every table of the bundle in `folder`, validated, or BundleError listing every problem.

    Absent optional tables come back empty. `questions` gains `question_order` (placed after
    `question_id`): the question's 1-based position within its prompt, in file order.
    `capabilities` defaults to the taxonomy seed's keys. `with_lines` keeps each row's 1-based
    line (JSONL) or row (Parquet) number as a last column, `LINE`, for messages about rows that
    only later checks find wrong (the append import's contradictions). `image_roots` are the
    folders besides `folder` that an image's `path` may resolve into (`--image-root`).
    """
    folder = Path(folder)
    # a release's manifest (`qct2i export`) is checked before any file is read: a file that is not
    # the one the exporter wrote is refused, whatever it now holds
    mismatches = manifest_problems(folder)
    if mismatches:
        raise BundleError(folder, [Problem(file, None, reason) for file, reason in mismatches])
    if capabilities is None:
        capabilities = default_capabilities()
    read = {name: read_table(folder, spec) for name, spec in TABLES.items()}
    problems = [problem for table in read.values() for problem in table.problems]
    problems += run_checks(read, capabilities)
    if read["questions"].whole:
        problems += parent_problems(read["questions"])
    problems += _image_problems(read["images"], folder, image_roots)
    if problems:
        raise BundleError(folder, sorted(problems, key=_problem_order))
    return {name: _accepted_table(table, with_lines) for name, table in read.items()}


def read_questions_file(path: Path, capabilities: set[str] | None = None) -> pa.Table:
    """One `questions` file on its own (new requests to route), validated by the bundle's rules
    for that table, or BundleError listing every problem as file, line and reason.

    The same reading, shape and meaning checks as in `read_bundle` (duplicate ids, unknown
    capability, parents outside the prompt, self-parents, cycles, ...), minus the checks that
    need other tables. Returns the table with `question_order`, as `read_bundle` does.
    """
    path = Path(path)
    if capabilities is None:
        capabilities = default_capabilities()
    spec = TABLES["questions"]
    readers = {".jsonl": read_jsonl, ".parquet": read_parquet}
    if path.suffix not in readers or not path.is_file():
        reason = "not found" if not path.exists() else "expected a .jsonl or .parquet file"
        raise BundleError(path, [Problem(path.name, None, reason)])
    read = readers[path.suffix](path, spec)
    if read.whole and read.table.num_rows == 0 and not read.problems:
        read.problems.append(Problem(read.file, None, "the file has no questions"))
        read.whole = False
    problems = list(read.problems)
    if read.whole:
        checks = shape_checks(spec, read.table) + [
            check for check in meaning_checks(False) if check.table == spec.name
        ]
        con = checks_connection(capabilities)
        try:
            con.register(spec.name, read.table)
            for check in checks:
                if not check.needs:
                    problems += problems_of(con, check, read)
        finally:
            con.close()
        problems += parent_problems(read)
    if problems:
        raise BundleError(path, sorted(problems, key=lambda p: (p.line or 0, p.reason)))
    return _accepted_table(read)


def _image_problems(images: ReadTable, folder: Path, image_roots: Sequence[Path]) -> list[Problem]:
    """Image roots that are not folders, else the images whose path leaves the bundle and them."""
    root_problems = image_root_problems(image_roots)
    if root_problems or not images.whole:
        return root_problems
    return image_path_problems(images, folder, image_roots)


def _problem_order(problem: Problem) -> tuple[int, int, str]:
    """Problems with what the caller named first, then by table, line and reason."""
    table = Path(problem.file).stem  # 'questions.jsonl' and a missing file's 'questions' alike
    position = list(TABLES).index(table) if table in TABLES else -1
    return position, problem.line or 0, problem.reason


def _accepted_table(read: ReadTable, with_lines: bool = False) -> pa.Table:
    table = read.table.drop_columns([LINE]).cast(read.spec.schema)
    if read.spec.name == "questions":
        position = table.column_names.index("question_id") + 1
        order = pa.field(QUESTION_ORDER, pa.int64(), nullable=False)
        table = table.add_column(position, order, pa.array(_question_order(table), pa.int64()))
    if with_lines:
        table = table.append_column(pa.field(LINE, pa.int64(), nullable=False), read.table[LINE])
    return table


def _question_order(questions: pa.Table) -> list[int]:
    seen: Counter[str] = Counter()
    order = []
    for prompt in questions["prompt_id"].to_pylist():
        seen[prompt] += 1
        order.append(seen[prompt])
    return order


def load_bundle(
    folder: Path,
    warehouse: Path,
    capabilities: set[str] | None = None,
    image_roots: Sequence[Path] = (),
) -> dict[str, int]:
    """Validate the bundle, then replace the warehouse's raw tables with it in one transaction.

    Returns the row count of every table. A refused bundle raises BundleError before the warehouse
    is opened; a failure while writing rolls back, leaving the previous raw tables as they were.
    `image_roots` as for `read_bundle`.
    """
    folder, warehouse = Path(folder), Path(warehouse)
    tables = read_bundle(folder, capabilities, image_roots=image_roots)
    with raw_tables.raw_transaction(warehouse) as con:
        raw_tables.replace_raw_tables(con, folder, tables)
    return {name: table.num_rows for name, table in tables.items()}
