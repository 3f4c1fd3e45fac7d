"""The evidence bundle reader (ingestion/bundle/): the bundles it accepts, in JSONL and Parquet
alike, and CONTRACTS.md's rules 1-4 (files, lines, columns and types) by which it refuses others.

Every expected value below is read off the hand-written fixture (tests/worlds/good_bundle.py):
line numbers are positions in the lists of GOOD, counted from 1.
"""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from ingestion.bundle import Problem, default_capabilities, load_bundle, read_bundle
from ingestion.bundle import read as bundle_read
from ingestion.bundle.format import TABLES, write_bundle
from tests.worlds.good_bundle import (
    GOOD,
    GOOD_ROWS,
    TAXONOMY,
    assert_problem,
    good,
    problems_of,
    raw_rows,
    the_problem,
    write,
)

# ------------------------------------------------------------------------------------------------
# Accepted bundles
# ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["jsonl", "parquet"])
def test_good_bundle_reads_every_table_with_its_rows(tmp_path, fmt):
    tables = read_bundle(write(tmp_path, good(), fmt), TAXONOMY)

    assert set(tables) == set(TABLES)
    assert {name: t.num_rows for name, t in tables.items()} == GOOD_ROWS
    assert tables["transcriptions"]["blocks"].to_pylist() == [["hi", "there"], []]


def test_question_order_is_the_position_within_the_prompt_in_file_order(tmp_path):
    questions = read_bundle(write(tmp_path, good()), TAXONOMY)["questions"]

    assert questions.column_names[:3] == ["prompt_id", "question_id", "question_order"]
    assert questions["question_order"].type == pa.int64()
    assert questions["question_order"].to_pylist() == [1, 2, 1, 3, 2, 1]


def test_jsonl_and_parquet_give_identical_tables_and_raw_tables(tmp_path):
    from_jsonl = read_bundle(write(tmp_path / "j", good(), "jsonl"), TAXONOMY)
    from_parquet = read_bundle(write(tmp_path / "p", good(), "parquet"), TAXONOMY)

    for name in TABLES:
        assert from_jsonl[name].schema == from_parquet[name].schema, name
        assert from_jsonl[name].equals(from_parquet[name]), name
    load_bundle(tmp_path / "j", tmp_path / "j.duckdb", TAXONOMY)
    load_bundle(tmp_path / "p", tmp_path / "p.duckdb", TAXONOMY)
    skip = ("bundle_path", "imported_at")
    assert raw_rows(tmp_path / "j.duckdb", skip=skip) == raw_rows(tmp_path / "p.duckdb", skip=skip)


def test_per_line_reader_gives_the_same_tables_as_the_vectorised_one(tmp_path):
    """Lines that start with a space are valid JSON but send the file through the per-line path."""
    fast = read_bundle(write(tmp_path / "fast", good()), TAXONOMY)
    slow_folder = write(tmp_path / "slow", good())
    for path in slow_folder.glob("*.jsonl"):
        lines = path.read_text(encoding="utf-8").splitlines()
        path.write_text("".join(f" {line}\r\n" for line in lines), encoding="utf-8")

    slow = read_bundle(slow_folder, TAXONOMY)

    for name in TABLES:
        assert slow[name].equals(fast[name]), name


def test_extra_columns_are_ignored(tmp_path):
    tables = good()
    tables["judgments"][0]["judge"] = {"name": "some-vlm"}
    folder = write(tmp_path, good())
    with (folder / "judgments.jsonl").open("w", encoding="utf-8") as out:
        for row in tables["judgments"]:
            out.write(json.dumps(row) + "\n")

    judgments = read_bundle(folder, TAXONOMY)["judgments"]

    assert judgments.column_names == list(TABLES["judgments"].column_names)


def test_nullable_columns_may_be_left_out(tmp_path):
    tables = good()
    for row in tables["questions"]:
        del row["entity"], row["text_target"]
    folder = write(tmp_path, good())
    with (folder / "questions.jsonl").open("w", encoding="utf-8") as out:
        for row in tables["questions"]:
            out.write(json.dumps(row) + "\n")

    questions = read_bundle(folder, TAXONOMY)["questions"]

    assert questions["entity"].to_pylist() == [None] * 6


def test_language_accepts_bcp47_codes(tmp_path):
    tables = good()
    for row, language in zip(tables["prompts"], ["zh-Hans", "yue", "en-US"], strict=True):
        row["language"] = language

    prompts = read_bundle(write(tmp_path, tables), TAXONOMY)["prompts"]

    assert prompts["language"].to_pylist() == ["zh-Hans", "yue", "en-US"]


def test_known_capabilities_default_to_the_taxonomy_seed(tmp_path):
    seed = tmp_path / "capabilities.csv"
    seed.write_text("capability,capability_name\nanimals,Animals\ncolor,Color\n", encoding="utf-8")

    assert default_capabilities(seed) == {"animals", "color"}
    assert {"animals", "text_rendering", "spatial"} <= default_capabilities()
    read_bundle(write(tmp_path / "b", good()))  # the fixture only uses the seed's keys


def test_the_capabilities_argument_is_the_taxonomy(tmp_path):
    problem = the_problem_with(write(tmp_path, good()), TAXONOMY - {"spatial"})

    assert_problem(problem, "questions.jsonl", 4, "unknown capability 'spatial'")


def the_problem_with(folder: Path, capabilities: set[str]) -> Problem:
    problems = problems_of(folder, capabilities)
    assert len(problems) == 1, [str(p) for p in problems]
    return problems[0]


def test_generators_are_not_required_to_list_models_when_absent(tmp_path):
    tables = good()
    del tables["generators"]
    tables["judgments"][0]["model_id"] = "m9"

    assert read_bundle(write(tmp_path, tables), TAXONOMY)["generators"].num_rows == 0


# ------------------------------------------------------------------------------------------------
# Rule 1-3: files and lines
# ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["prompts", "questions", "judgments"])
def test_rule1_missing_required_file_is_refused(tmp_path, name):
    tables = good()
    del tables[name]

    assert_problem(the_problem(write(tmp_path, tables)), name, None, "required file is missing")


def test_rule1_required_file_without_rows_is_refused(tmp_path):
    tables = good()
    tables["prompts"] = []

    assert_problem(the_problem(write(tmp_path, tables)), "prompts.jsonl", None, "no rows")


def test_rule2_table_in_both_formats_is_ambiguous(tmp_path):
    folder = write(tmp_path, good())
    write_bundle(folder, {"generators": GOOD["generators"]}, "parquet")

    assert_problem(the_problem(folder), "generators", None, "both generators.jsonl and")


@pytest.mark.parametrize(
    ("line_text", "fragment"),
    [
        ("{not json", "not valid JSON"),
        ('{"prompt_id": "p1"', "not valid JSON"),
        ("[1, 2]", "not a JSON object"),
        ("null", "not a JSON object"),
        ("", "blank line"),
        ("   \t", "blank line"),
    ],
)
@pytest.mark.parametrize("line", [1, 3, 10])  # 10: after the last of the 9 judgments
def test_rule3_malformed_jsonl_line_is_refused(tmp_path, line_text, fragment, line):
    folder = write(tmp_path, good())
    path = folder / "judgments.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines()
    lines.insert(line - 1, line_text)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")

    assert_problem(the_problem(folder), "judgments.jsonl", line, fragment)


def test_problems_are_located_when_the_file_is_read_in_chunks(tmp_path, monkeypatch):
    """After the fast reader fails, the file is retried in chunks; line numbers must survive."""
    monkeypatch.setattr(bundle_read, "_CHUNK_LINES", 2)
    tables = good()
    tables["judgments"][7]["p_yes"] = "high"
    folder = write(tmp_path, tables)
    path = folder / "judgments.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines()
    lines.insert(4, "")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")

    problems = problems_of(folder)

    assert [(p.file, p.line) for p in problems] == [("judgments.jsonl", 5), ("judgments.jsonl", 9)]
    assert "blank line" in problems[0].reason
    assert "'p_yes' must be a number" in problems[1].reason


def test_chunked_reading_gives_the_same_tables(tmp_path, monkeypatch):
    fast = read_bundle(write(tmp_path / "fast", good()), TAXONOMY)
    monkeypatch.setattr(bundle_read, "_CHUNK_LINES", 2)
    folder = write(tmp_path / "chunked", good())
    for path in folder.glob("*.jsonl"):  # a leading space on line 2 fails the whole-file read
        lines = path.read_text(encoding="utf-8").splitlines()
        lines[1] = " " + lines[1]
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")

    chunked = read_bundle(folder, TAXONOMY)

    for name in TABLES:
        assert chunked[name].equals(fast[name]), name


def test_rule3_invalid_utf8_line_is_refused(tmp_path):
    folder = write(tmp_path, good())
    path = folder / "prompts.jsonl"
    data = path.read_bytes().replace(b"a sign", b"a \xff sign")
    path.write_bytes(data)

    assert_problem(the_problem(folder), "prompts.jsonl", 3, "not valid UTF-8")


def test_rule3_unreadable_parquet_is_one_problem(tmp_path):
    folder = write(tmp_path, good(), "parquet")
    (folder / "judgments.parquet").write_bytes(b"PAR1 this is not parquet")

    assert_problem(the_problem(folder), "judgments.parquet", None, "cannot read Parquet")


# ------------------------------------------------------------------------------------------------
# Rule 4: columns and types
# ------------------------------------------------------------------------------------------------


def test_rule4_missing_required_value_is_refused(tmp_path):
    tables = good()
    tables["judgments"][4]["model_id"] = None

    assert_problem(the_problem(write(tmp_path, tables)), "judgments.jsonl", 5, "missing model_id")


def test_rule4_null_in_a_parquet_column_is_refused(tmp_path):
    """write_bundle refuses the null itself, so the file is written with a schema that allows it."""
    folder = write(tmp_path, good(), "parquet")
    rows = good()["judgments"]
    rows[4]["model_id"] = None
    columns = {c: [row.get(c) for row in rows] for c in TABLES["judgments"].column_names}
    pq.write_table(pa.table(columns), folder / "judgments.parquet")

    assert_problem(the_problem(folder), "judgments.parquet", 5, "missing model_id")


def test_rule4_missing_required_key_is_refused(tmp_path):
    folder = write(tmp_path, good())
    rows = [dict(row) for row in GOOD["images"]]
    del rows[1]["width"]
    (folder / "images.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), "utf-8")

    assert_problem(the_problem(folder), "images.jsonl", 2, "missing width")


@pytest.mark.parametrize(
    ("table", "row", "column", "value", "fragment"),
    [
        ("questions", 2, "parents", "q1", "'parents' must be a list of strings"),
        ("questions", 2, "parents", [1], "'parents' must be a list of strings"),
        ("images", 1, "width", 3.5, "'width' must be an integer, got 3.5"),
        ("images", 1, "width", "1024", "'width' must be an integer"),
        ("images", 3, "gpus", True, "'gpus' must be an integer"),
        ("judgments", 2, "p_yes", "0.5", "'p_yes' must be a number"),
        ("judgments", 2, "answer", True, "'answer' must be a string"),
        ("prompts", 1, "text", {"en": "a dog"}, "'text' must be a string"),
    ],
)
def test_rule4_value_of_the_wrong_type_is_refused(tmp_path, table, row, column, value, fragment):
    tables = good()
    tables[table][row - 1][column] = value

    assert_problem(the_problem(write(tmp_path, tables)), f"{table}.jsonl", row, fragment)


@pytest.mark.parametrize("fmt", ["jsonl", "parquet"])
def test_rule4_empty_id_is_refused(tmp_path, fmt):
    tables = good()
    tables["images"][1]["image_id"] = " "

    assert_problem(the_problem(write(tmp_path, tables, fmt)), f"images.{fmt}", 2, "empty image_id")


def test_rule4_null_inside_a_list_is_refused(tmp_path):
    tables = good()
    tables["transcriptions"][0]["blocks"] = ["hi", None]

    problem = the_problem(write(tmp_path, tables))

    assert_problem(problem, "transcriptions.jsonl", 1, "blocks must be a list of strings")


def test_rule4_non_finite_number_is_refused(tmp_path):
    folder = write(tmp_path, good())
    path = folder / "images.jsonl"
    path.write_text(
        path.read_text("utf-8").replace('"latency_s": 1.25', '"latency_s": NaN'), "utf-8"
    )

    assert_problem(the_problem(folder), "images.jsonl", 3, "latency_s must be a finite number")


def test_rule4_parquet_column_of_the_wrong_type_is_refused(tmp_path):
    folder = write(tmp_path, good(), "parquet")
    images = pq.read_table(folder / "images.parquet")
    width = images.column_names.index("width")
    images = images.set_column(width, "width", images["width"].cast(pa.float64()))
    pq.write_table(images, folder / "images.parquet")

    problem = the_problem(folder)

    assert_problem(problem, "images.parquet", None, "column 'width' has type double")


def test_parquet_decimals_and_narrow_integers_read_as_the_contract_types(tmp_path):
    """SQL engines write 2.5 as DECIMAL and small counts as INT32; both convert without loss."""
    folder = write(tmp_path / "p", good(), "parquet")
    images = pq.read_table(folder / "images.parquet")
    for column, type_ in [("latency_s", pa.decimal128(6, 2)), ("width", pa.int32())]:
        position = images.column_names.index(column)
        images = images.set_column(position, column, images[column].cast(type_))
    pq.write_table(images, folder / "images.parquet")

    from_parquet = read_bundle(folder, TAXONOMY)["images"]

    assert from_parquet.equals(read_bundle(write(tmp_path / "j", good()), TAXONOMY)["images"])


def test_rule4_parquet_missing_required_column_is_refused(tmp_path):
    folder = write(tmp_path, good(), "parquet")
    pq.write_table(
        pq.read_table(folder / "judgments.parquet").drop_columns(["question_id"]),
        folder / "judgments.parquet",
    )

    assert_problem(the_problem(folder), "judgments.parquet", None, "missing column 'question_id'")
