"""Randomly corrupted bundles (issue 12): the importer loads them or refuses them with reasons,
never raises anything else, and a refusal leaves the warehouse's raw tables as they were.

A good bundle (the every-table fixture of tests/worlds/good_bundle.py, or the hand world) is
written by the project's writer in JSONL or Parquet, then corrupted: rows deleted, duplicated or
swapped, values replaced by others of any type or domain, keys and columns dropped, columns
retyped, a table added in the other format or converted to it, files dropped, emptied, truncated,
filled with garbage, bytes flipped or inserted. Hypothesis draws the corruptions; `derandomize`
makes every CI run draw the same ones.
"""

from __future__ import annotations

import hashlib
import json
import math
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from ingestion.bundle import BundleError, load_bundle
from ingestion.bundle.format import TABLES, write_bundle
from tests.worlds.good_bundle import good, raw_rows
from tests.worlds.hand import hand_bundle_tables

WORLDS = {"every_table": good, "hand": hand_bundle_tables}
FORMATS = ("jsonl", "parquet")

# Values of every JSON type, inside and outside each column's domain.
VALUES = [
    None,
    "",
    " ",
    "../x",
    "/abs",
    "a\x00b",
    "x" * 200,
    "YES",
    "Yes ",
    "1",
    "true",
    "maybe",
    "ok",
    "zz",
    "q1",
    "q2",
    "p1",
    "cA-en",
    "m1",
    "en",
    "chinese!",
    "colour",
    "animals",
    0,
    -1,
    1,
    10**30,
    0.5,
    1.5,
    -0.25,
    math.nan,
    math.inf,
    True,
    [],
    ["q1"],
    ["q1", "q1"],
    ["zz"],
    [None],
    [1],
    {"a": 1},
]
any_value = st.one_of(
    st.sampled_from(VALUES),
    st.text(max_size=12),
    st.integers(),
    st.floats(allow_nan=True, allow_infinity=True),
)


@dataclass(frozen=True)
class RowEdit:
    """delete / duplicate / swap a row, set or drop a value, drop or retype a column."""

    kind: str
    table: int  # index into the bundle's files, modulo their number
    row: int
    column: int
    value: object = None


@dataclass(frozen=True)
class FileEdit:
    """Edits of a whole file, applied after the row edits."""

    kind: str
    table: int
    position: float  # 0..1 of the file's length
    data: bytes = b""


ROW_KINDS = ["delete", "duplicate", "swap", "set", "drop_key", "drop_column", "retype_column"]
FILE_KINDS = [
    "drop",
    "empty",
    "garbage",
    "truncate",
    "flip",
    "insert",
    "second_format",
    "convert",
]
row_edits = st.builds(
    RowEdit,
    kind=st.sampled_from(ROW_KINDS),
    table=st.integers(0, 5),
    row=st.integers(0, 40),
    column=st.integers(0, 8),
    value=any_value,
)
file_edits = st.builds(
    FileEdit,
    kind=st.sampled_from(FILE_KINDS),
    table=st.integers(0, 5),
    position=st.floats(0, 1),
    data=st.binary(min_size=1, max_size=40),
)
corruptions = st.tuples(
    st.sampled_from(sorted(WORLDS)),
    st.sampled_from(FORMATS),
    st.lists(row_edits, max_size=3),
    st.lists(file_edits, max_size=2),
).filter(lambda drawn: drawn[2] or drawn[3])


# ------------------------------------------------------------------------------------------------
# Applying the corruptions
# ------------------------------------------------------------------------------------------------


def bundle_files(folder: Path) -> list[Path]:
    return sorted(path for path in folder.iterdir() if path.is_file())


def read_rows(path: Path) -> list[dict]:
    if path.suffix == ".jsonl":
        return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    return pq.read_table(path).to_pylist()


def write_rows(path: Path, rows: list[dict], columns: list[str]) -> None:
    """Rows as written by a careless tool: JSON of any value; Parquet with the contract's type
    where the values allow, else the type pyarrow infers, else the values' JSON as strings."""
    if path.suffix == ".jsonl":
        lines = [json.dumps(row, ensure_ascii=False) + "\n" for row in rows]
        path.write_text("".join(lines), encoding="utf-8")
        return
    types = {c.name: c.type for c in TABLES[path.stem].columns}
    arrays = [lenient_array([row.get(c) for row in rows], types.get(c)) for c in columns]
    pq.write_table(pa.table(arrays, names=columns), path)


def lenient_array(values: list, type_: pa.DataType | None) -> pa.Array:
    for attempt in (type_, None):
        try:
            return pa.array(values, attempt)
        except (pa.ArrowException, TypeError, ValueError, OverflowError):
            continue
    return pa.array([json.dumps(v) for v in values])


def apply_row_edit(folder: Path, edit: RowEdit) -> None:
    files = bundle_files(folder)
    path = files[edit.table % len(files)]
    rows = read_rows(path)
    columns = [*TABLES[path.stem].column_names, "unknown_column"]
    if rows:
        columns = list(dict.fromkeys([*rows[0], *columns]))
    column = columns[edit.column % len(columns)]
    if rows:
        i, j = edit.row % len(rows), (edit.row * 7 + 3) % len(rows)
        if edit.kind == "delete":
            del rows[i]
        elif edit.kind == "duplicate":
            rows.insert(j, dict(rows[i]))
        elif edit.kind == "swap":
            rows[i], rows[j] = rows[j], rows[i]
        elif edit.kind == "set":
            rows[i][column] = edit.value
        elif edit.kind == "drop_key":
            rows[i].pop(column, None)
        elif edit.kind == "retype_column":
            for row in rows:
                row[column] = json.dumps(row.get(column))
    if edit.kind == "drop_column":
        columns.remove(column)
        for row in rows:
            row.pop(column, None)
    write_rows(path, rows, columns)


def apply_file_edit(folder: Path, edit: FileEdit) -> None:
    files = bundle_files(folder)
    if not files:
        return
    path = files[edit.table % len(files)]
    data = path.read_bytes()
    at = int(edit.position * len(data))
    other = path.with_suffix(".parquet" if path.suffix == ".jsonl" else ".jsonl")
    if edit.kind == "drop":
        path.unlink()
    elif edit.kind == "empty":
        path.write_bytes(b"")
    elif edit.kind == "garbage":
        path.write_bytes(edit.data)
    elif edit.kind == "truncate":
        path.write_bytes(data[:at])
    elif edit.kind == "flip":
        flipped = bytearray(data)
        if flipped:
            flipped[min(at, len(data) - 1)] ^= edit.data[0] or 0xFF
        path.write_bytes(bytes(flipped))
    elif edit.kind == "insert":
        path.write_bytes(data[:at] + edit.data + data[at:])
    elif edit.kind in ("second_format", "convert"):
        copy_to_format(path, other)
        if edit.kind == "convert":
            path.unlink()


def copy_to_format(path: Path, other: Path) -> None:
    """The table in the other format, as well as its rows can be read (a file an earlier edit
    broke is copied as bytes: a bundle then holds garbage under the other name)."""
    try:
        rows = read_rows(path)
        columns = list(dict.fromkeys(key for row in rows for key in row))
        write_rows(other, rows, columns or list(TABLES[path.stem].column_names))
    except (ValueError, pa.ArrowException, UnicodeDecodeError, OSError):
        shutil.copyfile(path, other)


def write_corrupted(folder: Path, world: str, fmt: str, rows, files) -> None:
    write_bundle(folder, WORLDS[world](), fmt)
    for edit in rows:
        apply_row_edit(folder, edit)
    for edit in files:
        apply_file_edit(folder, edit)


# ------------------------------------------------------------------------------------------------
# The property
# ------------------------------------------------------------------------------------------------


def raw_table_hashes(warehouse: Path) -> dict[str, str]:
    """A SHA-256 of every raw table's rows in a stable order, with its column names."""
    return {
        name: hashlib.sha256(repr(rows).encode()).hexdigest()
        for name, rows in raw_rows(warehouse).items()
    }


@pytest.fixture(scope="module")
def previous_import(tmp_path_factory) -> tuple[Path, dict[str, str]]:
    """A warehouse holding an earlier good import, and the hashes of its raw tables."""
    folder = tmp_path_factory.mktemp("previous")
    write_bundle(folder / "bundle", good(), "parquet")
    warehouse = folder / "previous.duckdb"
    load_bundle(folder / "bundle", warehouse)
    return warehouse, raw_table_hashes(warehouse)


@settings(
    max_examples=80,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(drawn=corruptions)
def test_a_corrupted_bundle_loads_or_is_refused_with_reasons_and_nothing_written(
    previous_import, drawn
):
    previous, before = previous_import
    world, fmt, rows, files = drawn
    with tempfile.TemporaryDirectory(prefix="qct2i-corrupt-") as scratch:
        folder, warehouse = Path(scratch) / "bundle", Path(scratch) / "w.duckdb"
        write_corrupted(folder, world, fmt, rows, files)
        shutil.copyfile(previous, warehouse)
        try:
            counts = load_bundle(folder, warehouse)
        except BundleError as refused:
            event("refused")
            assert_reasons(refused)
            assert raw_table_hashes(warehouse) == before
        else:
            event("loaded")
            stored = raw_rows(warehouse)
            assert {name: len(stored[name]) - 1 for name in counts} == counts


def assert_reasons(refused: BundleError) -> None:
    assert refused.problems
    for problem in refused.problems:
        assert Path(problem.file).stem in TABLES, problem
        assert problem.line is None or problem.line >= 1, problem
        assert problem.reason.strip() and "\n" not in problem.reason, problem
