"""The bad-input catalogue (issue 12): every class of broken input the importer refuses, each
through `read_bundle` and through `qct2i import` (the CLI's `main()`; three classes through the
console script as a user runs it). docs/refusals.md lists the same classes with the same messages
(tests/test_docs.py checks it).

Rules of CONTRACTS.md that test_bundle_reading.py and test_bundle_checks.py already cover are not
repeated here; the classes the importer normalises instead are in test_bundle_leniency.py. Expected
lines are positions in the lists of GOOD (tests/worlds/good_bundle.py), counted from 1.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from ingestion.bundle.format import write_bundle
from tests.helpers import run_cli, run_main
from tests.worlds.good_bundle import (
    Build,
    assert_problem,
    good,
    the_problem,
    with_value,
    write,
)

# ------------------------------------------------------------------------------------------------
# Ways to break the good bundle
# ------------------------------------------------------------------------------------------------


def with_bytes(table: str, edit: Callable[[bytes], bytes], fmt: str = "jsonl") -> Build:
    """GOOD, then the bytes of one table's file edited."""

    def build(folder: Path) -> None:
        write(folder, good(), fmt)
        path = folder / f"{table}.{fmt}"
        path.write_bytes(edit(path.read_bytes()))

    return build


def replacing(old: bytes, new: bytes) -> Callable[[bytes], bytes]:
    def edit(data: bytes) -> bytes:
        assert old in data, old
        return data.replace(old, new, 1)

    return edit


def with_parquet_column(table: str, column: str, values: pa.Array) -> Build:
    """GOOD as Parquet, one column rewritten as `values` (any Arrow type)."""

    def build(folder: Path) -> None:
        write(folder, good(), "parquet")
        path = folder / f"{table}.parquet"
        read = pq.read_table(path)
        position = read.column_names.index(column)
        pq.write_table(read.set_column(position, column, values), path)

    return build


def offsets(items: list) -> pa.Array:
    """Arrow offsets of variable-length items: where each starts, then where the last ends."""
    ends = [0]
    for item in items:
        ends.append(ends[-1] + len(item))
    return pa.array(ends, pa.int32())


def strings_with_invalid_utf8(values: list[bytes]) -> pa.Array:
    """A string array holding the bytes as they are: pyarrow validates nothing it is handed this
    way, which is how a careless writer produces such a file."""
    buffers = [None, offsets(values).buffers()[1], pa.py_buffer(b"".join(values))]
    return pa.Array.from_buffers(pa.string(), len(values), buffers)


def with_parquet_invalid_parents(folder: Path) -> None:
    """questions.parquet whose row 2 lists a parent that is not UTF-8."""
    write(folder, good(), "parquet")
    path = folder / "questions.parquet"
    read = pq.read_table(path)
    parents = [[p.encode() for p in row] for row in read["parents"].to_pylist()]
    parents[1] = [b"q\xff1"]
    flat = strings_with_invalid_utf8([p for row in parents for p in row])
    lists = pa.ListArray.from_arrays(offsets(parents), flat)
    pq.write_table(read.set_column(read.column_names.index("parents"), "parents", lists), path)


def with_parquet_footer_cut(folder: Path) -> None:
    write(folder, good(), "parquet")
    path = folder / "judgments.parquet"
    path.write_bytes(path.read_bytes()[:-12])  # the footer length and magic bytes are gone


def with_parquet_repeated_column(folder: Path) -> None:
    write(folder, good(), "parquet")
    path = folder / "prompts.parquet"
    read = pq.read_table(path)
    pq.write_table(read.append_column("prompt_id", read["prompt_id"]), path)


def with_folder_for_a_file(folder: Path) -> None:
    write(folder, good())
    (folder / "generators.jsonl").unlink()
    (folder / "generators.jsonl").mkdir()


def with_required_parquet_without_rows(folder: Path) -> None:
    tables = good()
    tables["judgments"] = []
    write(folder, tables, "parquet")


def with_cross_format_reference(folder: Path) -> None:
    """questions as JSONL, judgments as Parquet, one judgment naming a question p2 lacks."""
    tables = good()
    tables["judgments"][4]["question_id"] = "q3"
    write(folder, {name: rows for name, rows in tables.items() if name != "judgments"})
    write_bundle(folder, {"judgments": tables["judgments"]}, "parquet")


def with_image_linked_outside(folder: Path) -> None:
    """GOOD with its image i1 (`img/i1.png`) a symbolic link to a file outside the bundle."""
    write(folder, good())
    (folder / "img").mkdir()
    (folder / "img" / "i1.png").symlink_to("/etc/passwd")


def cut_last_line(data: bytes) -> bytes:
    return data[:-15]  # a crash while the last row was written: the line has no end


def cut_inside_a_character(data: bytes) -> bytes:
    return data[: data.index("一".encode()) + 1]  # line 2 ends inside a 3-byte character


# ------------------------------------------------------------------------------------------------
# The catalogue
# ------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Refused:
    """One refusal class: how to build it, and the one problem it must produce."""

    name: str
    build: Build
    file: str
    line: int | None
    reason: str  # the invariant part of the reason, which docs/refusals.md quotes

    def __str__(self) -> str:
        return self.name


CATALOGUE = [
    # ids that would escape a folder or make a bad file name (ids may name image files)
    Refused(
        "id with ../",
        with_value("images", 2, "image_id", "../i2"),
        "images.jsonl",
        2,
        'image_id "../i2" is not a safe id',
    ),
    Refused(  # one problem: "model ... is not listed in generators" would echo it
        "id that is an absolute path",
        with_value("judgments", 8, "model_id", "/tmp/m2"),
        "judgments.jsonl",
        8,
        'model_id "/tmp/m2" is not a safe id',
    ),
    Refused(
        "id holding a NUL",
        with_value("judgments", 1, "question_id", "q\x001"),
        "judgments.jsonl",
        1,
        'question_id "q\\u00001" is not a safe id',
    ),
    Refused(
        "id longer than 128 characters",
        with_value("prompts", 1, "concept_id", "c" * 129),
        "prompts.jsonl",
        1,
        "... (129 characters) is not a safe id",
    ),
    Refused(
        "id with a backslash (Parquet)",
        with_value("images", 3, "image_id", "img\\i3", "parquet"),
        "images.parquet",
        3,
        'image_id "img\\\\i3" is not a safe id',
    ),
    # image paths: the judges open them, so they stay inside the bundle folder
    # (or a named image root: tests/ingestion/bundle/test_image_paths.py)
    Refused(
        "image path with ../",
        with_value("images", 1, "path", "../outside.png"),
        "images.jsonl",
        1,
        'path "../outside.png" resolves outside the bundle folder',
    ),
    Refused(
        "image path absolute, elsewhere",
        with_value("images", 1, "path", "/etc/passwd"),
        "images.jsonl",
        1,
        'path "/etc/passwd" resolves outside the bundle folder',
    ),
    Refused(
        "image path a symbolic link out",
        with_image_linked_outside,
        "images.jsonl",
        1,
        'path "img/i1.png" resolves outside the bundle folder through a symbolic link',
    ),
    Refused(
        "image path holding a NUL (Parquet)",
        with_value("images", 1, "path", "img/i\x001.png", "parquet"),
        "images.parquet",
        1,
        'path "img/i\\u00001.png" holds a NUL character, which no file name can',
    ),
    # p_yes
    Refused(
        "p_yes NaN (JSONL token)",
        with_bytes("judgments", replacing(b'"p_yes": 0.2', b'"p_yes": NaN')),
        "judgments.jsonl",
        2,
        "p_yes must be a finite number, got nan",
    ),
    Refused(
        "p_yes Infinity (JSONL token)",
        with_bytes("judgments", replacing(b'"p_yes": 0.2', b'"p_yes": -Infinity')),
        "judgments.jsonl",
        2,
        "p_yes must be a finite number, got -inf",
    ),
    Refused(
        "p_yes beyond a double (1e400)",
        with_bytes("judgments", replacing(b'"p_yes": 0.2', b'"p_yes": 1e400')),
        "judgments.jsonl",
        2,
        "p_yes must be a finite number, got inf",
    ),
    Refused(
        "p_yes NaN (Parquet)",
        with_value("judgments", 2, "p_yes", float("nan"), "parquet"),
        "judgments.parquet",
        2,
        "p_yes must be a finite number, got nan",
    ),
    Refused(
        "p_yes infinite (Parquet)",
        with_value("judgments", 2, "p_yes", float("inf"), "parquet"),
        "judgments.parquet",
        2,
        "p_yes must be a finite number, got inf",
    ),
    Refused(
        "p_yes outside [0, 1] (Parquet)",
        with_value("judgments", 6, "p_yes", 1.5, "parquet"),
        "judgments.parquet",
        6,
        "p_yes must be within [0, 1], got 1.5",
    ),
    # where a question's capability came from and what a compliant image answers (issue 32)
    Refused(
        "compliant_answer other than yes or no",
        with_value("questions", 2, "compliant_answer", "maybe"),
        "questions.jsonl",
        2,
        "compliant_answer must be 'yes', 'no' or null, got 'maybe'",
    ),
    Refused(
        "empty capability_source",
        with_value("questions", 3, "capability_source", " "),
        "questions.jsonl",
        3,
        "empty capability_source (null when unknown)",
    ),
    Refused(
        "rule_capability not in the taxonomy",
        with_value("questions", 3, "rule_capability", "colour"),
        "questions.jsonl",
        3,
        "unknown rule_capability 'colour' (not in the taxonomy)",
    ),
    # answers: yes/no up to case and white space are normalised (test_bundle_leniency.py); the
    # rest refused
    Refused(
        "answer '1'",
        with_value("judgments", 3, "answer", "1"),
        "judgments.jsonl",
        3,
        "answer must be 'yes', 'no' or null, got '1'",
    ),
    Refused(
        "answer 'true'",
        with_value("judgments", 3, "answer", "true"),
        "judgments.jsonl",
        3,
        "answer must be 'yes', 'no' or null, got 'true'",
    ),
    Refused(
        "answer '' (empty)",
        with_value("judgments", 3, "answer", ""),
        "judgments.jsonl",
        3,
        "answer must be 'yes', 'no' or null, got ''",
    ),
    Refused(
        "answer with more than the word",
        with_value("judgments", 3, "answer", "Yes."),
        "judgments.jsonl",
        3,
        "answer must be 'yes', 'no' or null, got 'Yes.'",
    ),
    # encodings and line ends
    Refused(
        "BOM anywhere but the start",
        with_bytes("prompts", replacing(b'{"prompt_id": "p2"', b'\xef\xbb\xbf{"prompt_id": "p2"')),
        "prompts.jsonl",
        2,
        "not valid JSON (Unexpected UTF-8 BOM",
    ),
    Refused(
        "invalid UTF-8 (Parquet string)",
        with_parquet_column(
            "prompts", "prompt_id", strings_with_invalid_utf8([b"p1", b"p\xe42", b"p3"])
        ),
        "prompts.parquet",
        2,
        "'prompt_id' is not valid UTF-8",
    ),
    Refused(
        "invalid UTF-8 (Parquet list element)",
        with_parquet_invalid_parents,
        "questions.parquet",
        2,
        "'parents' is not valid UTF-8",
    ),
    Refused(
        "lone surrogate escape",
        with_bytes("prompts", replacing(b'"a sign"', b'"a \\udc80 sign"')),
        "prompts.jsonl",
        3,
        "a \\u escape names half of a surrogate pair alone",
    ),
    Refused(
        "truncated last line",
        with_bytes("judgments", cut_last_line),
        "judgments.jsonl",
        9,
        "without a line end, so it may be truncated",
    ),
    Refused(
        "truncated inside a character",
        with_bytes("prompts", cut_inside_a_character),
        "prompts.jsonl",
        2,
        "line is not valid UTF-8; the file ends inside this line",
    ),
    # files
    Refused(
        "empty required file (Parquet without rows)",
        with_required_parquet_without_rows,
        "judgments.parquet",
        None,
        "required table has no rows",
    ),
    Refused(
        "file of blank lines",
        with_bytes("images", lambda _data: b"\n"),
        "images.jsonl",
        1,
        "blank line",
    ),
    Refused(
        "folder where a file should be",
        with_folder_for_a_file,
        "generators.jsonl",
        None,
        "not a regular file",
    ),
    Refused(
        "Parquet footer cut off",
        with_parquet_footer_cut,
        "judgments.parquet",
        None,
        "cannot read Parquet file: Parquet magic bytes not found in footer",
    ),
    Refused(
        "Parquet file of 0 bytes",
        with_bytes("judgments", lambda _data: b"", "parquet"),
        "judgments.parquet",
        None,
        "cannot read Parquet file: Parquet file size is 0 bytes",
    ),
    Refused(
        "Parquet column repeated",
        with_parquet_repeated_column,
        "prompts.parquet",
        None,
        "column 'prompt_id' appears more than once",
    ),
    Refused(
        "Parquet string column of integers",
        with_parquet_column("prompts", "prompt_id", pa.array([1, 2, 3])),
        "prompts.parquet",
        None,
        "column 'prompt_id' has type int64; expected a string",
    ),
    Refused(
        "Parquet number column of strings",
        with_parquet_column("judgments", "p_yes", pa.array(["0.9"] * 9)),
        "judgments.parquet",
        None,
        "column 'p_yes' has type string; expected a number",
    ),
    Refused(
        "Parquet answer column of booleans",
        with_parquet_column("judgments", "answer", pa.array([True] * 9)),
        "judgments.parquet",
        None,
        "column 'answer' has type bool; expected a string",
    ),
    Refused(
        "Parquet list column of integers",
        with_parquet_column("questions", "parents", pa.array([[1]] * 6, pa.list_(pa.int64()))),
        "questions.parquet",
        None,
        "column 'parents' has type list<element: int64>; expected a list of strings",
    ),
    # JSON that parses differently in different readers, or not at all
    Refused(
        "key repeated within one object",
        with_bytes(
            "prompts", replacing(b'"prompt_id": "p3"', b'"prompt_id": "p9", "prompt_id": "p3"')
        ),
        "prompts.jsonl",
        3,
        'key "prompt_id" appears twice in the object',
    ),
    Refused(
        "nesting too deep to read",
        with_bytes("prompts", replacing(b'"a sign"', b"[" * 100_000 + b"]" * 100_000)),
        "prompts.jsonl",
        3,
        "not valid JSON (nested too deeply to read)",
    ),
    Refused(
        "integer of more than 4,300 digits",
        with_bytes("images", replacing(b'"width": 512', b'"width": ' + b"9" * 5000)),
        "images.jsonl",
        3,
        "not valid JSON (Exceeds the limit (4300 digits) for integer string conversion)",
    ),
    # the same keys across a JSONL and a Parquet file of one bundle
    Refused(
        "reference across formats to an unknown key",
        with_cross_format_reference,
        "judgments.parquet",
        5,
        "no question 'q3' in prompt 'p2'",
    ),
]


def where(refusal: Refused) -> str:
    return refusal.file if refusal.line is None else f"{refusal.file}:{refusal.line}"


@pytest.mark.parametrize("refusal", CATALOGUE, ids=str)
def test_read_bundle_refuses_with_file_line_and_reason(tmp_path, refusal):
    refusal.build(tmp_path)

    assert_problem(the_problem(tmp_path), refusal.file, refusal.line, refusal.reason)


def assert_import_refused(refusal: Refused, folder: Path, run) -> None:
    """`qct2i import` (through `run`) exits 2 naming the problem, with no traceback, and writes
    no warehouse."""
    bundle, warehouse = folder / "bundle", folder / "wh" / "w.duckdb"
    bundle.mkdir()
    refusal.build(bundle)

    refused = run(["import", str(bundle)], warehouse)

    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert f"{where(refusal)}: " in refused.stderr, refused.stderr
    assert refusal.reason in refused.stderr, refused.stderr
    assert "Traceback" not in refused.stdout + refused.stderr
    assert not list(warehouse.parent.glob("*.duckdb")), "a refused bundle wrote a warehouse"


@pytest.mark.parametrize("refusal", CATALOGUE, ids=str)
def test_qct2i_import_refuses_with_a_message_and_no_traceback(tmp_path, refusal):
    """Every class through the CLI's `main()` in this process (an exception would escape)."""
    assert_import_refused(refusal, tmp_path, run_main)


# a line of a JSONL file, a row of a Parquet file and a whole file, as a user runs the command
THROUGH_THE_CONSOLE_SCRIPT = (
    "id with ../",
    "invalid UTF-8 (Parquet string)",
    "folder where a file should be",
)


@pytest.mark.e2e
@pytest.mark.parametrize(
    "refusal", [r for r in CATALOGUE if r.name in THROUGH_THE_CONSOLE_SCRIPT], ids=str
)
def test_the_console_script_refuses_with_a_message_and_no_traceback(tmp_path, refusal):
    assert_import_refused(refusal, tmp_path, run_cli)
