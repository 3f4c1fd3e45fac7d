"""What the importer normalises or accepts rather than refuses (issue 12): yes/no up to case and
white space, a byte order mark at the start of a file, CRLF line ends, an optional file without
rows, a bundle mixing JSONL and Parquet, and Parquet's other string encodings.

Each is compared with the good bundle of tests/worlds/good_bundle.py read as it is.
"""

from __future__ import annotations

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from ingestion.bundle import load_bundle, read_bundle
from ingestion.bundle.format import TABLES, write_bundle
from tests.worlds.good_bundle import GOOD, TAXONOMY, good, write

# ------------------------------------------------------------------------------------------------
# What is normalised or accepted rather than refused
# ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["jsonl", "parquet"])
def test_yes_and_no_are_normalised_up_to_case_and_white_space(tmp_path, fmt):
    tables = good()
    written = ["Yes ", "NO", "YES", " yes\t", "No", "\u00a0yes", "Yes", "yEs", None]
    for row, answer in zip(tables["judgments"], written, strict=True):
        row["answer"] = answer
    folder = write(tmp_path / "b", tables, fmt)

    answers = read_bundle(folder, TAXONOMY)["judgments"]["answer"].to_pylist()
    load_bundle(folder, tmp_path / "w.duckdb", TAXONOMY)

    expected = ["yes", "no", "yes", "yes", "no", "yes", "yes", "yes", None]
    assert answers == expected
    keys = [(r["prompt_id"], r["model_id"], r["question_id"]) for r in GOOD["judgments"]]
    with duckdb.connect(str(tmp_path / "w.duckdb"), read_only=True) as con:
        stored = con.execute(
            "SELECT prompt_id, model_id, question_id, answer FROM raw.judgments"
        ).fetchall()
    assert sorted(stored) == sorted(
        (*key, answer) for key, answer in zip(keys, expected, strict=True)
    )


def test_a_byte_order_mark_at_the_start_of_a_file_is_dropped(tmp_path):
    folder = write(tmp_path / "bom", good())
    for path in folder.glob("*.jsonl"):
        path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())

    assert_same_tables(
        read_bundle(folder, TAXONOMY), read_bundle(write(tmp_path / "plain", good()), TAXONOMY)
    )


@pytest.mark.parametrize("every_line", [True, False], ids=["crlf", "mixed"])
def test_crlf_line_ends_read_as_lf(tmp_path, every_line):
    folder = write(tmp_path / "crlf", good())
    for path in folder.glob("*.jsonl"):
        lines = path.read_bytes().split(b"\n")[:-1]
        ends = [b"\r\n" if every_line or i % 2 else b"\n" for i in range(len(lines))]
        path.write_bytes(b"".join(line + end for line, end in zip(lines, ends, strict=True)))

    tables = read_bundle(folder, TAXONOMY)

    assert_same_tables(tables, read_bundle(write(tmp_path / "lf", good()), TAXONOMY))
    assert tables["prompts"]["text"].to_pylist()[-1] == "a sign"  # no \r kept at a line end


@pytest.mark.parametrize("fmt", ["jsonl", "parquet"])
def test_an_optional_file_without_rows_is_the_same_as_none(tmp_path, fmt):
    tables = good()
    tables["images"], tables["transcriptions"] = [], []
    with_empty = read_bundle(write(tmp_path / "empty", tables, fmt), TAXONOMY)
    del tables["images"], tables["transcriptions"]
    without = read_bundle(write(tmp_path / "absent", tables, fmt), TAXONOMY)

    assert (tmp_path / "empty" / f"images.{fmt}").exists()
    assert with_empty["images"].num_rows == with_empty["transcriptions"].num_rows == 0
    assert_same_tables(with_empty, without)


def test_a_bundle_mixing_formats_reads_as_either_format(tmp_path):
    """Keys match across a JSONL and a Parquet file however Parquet stores them: here the
    Parquet prompt ids are dictionary-encoded and the question ids large strings."""
    folder = write(tmp_path / "mixed", {n: r for n, r in good().items() if n != "questions"})
    write_bundle(folder, {"questions": GOOD["questions"]}, "parquet")
    questions = pq.read_table(folder / "questions.parquet")
    for column, type_ in [
        ("prompt_id", pa.dictionary(pa.int8(), pa.string())),
        ("question_id", pa.large_string()),
    ]:
        position = questions.column_names.index(column)
        questions = questions.set_column(position, column, questions[column].cast(type_))
    pq.write_table(questions, folder / "questions.parquet")

    mixed = read_bundle(folder, TAXONOMY)

    assert_same_tables(mixed, read_bundle(write(tmp_path / "jsonl", good()), TAXONOMY))


def test_parquet_string_views_read_as_strings(tmp_path):
    """Polars writes string views; they convert without loss, as large strings do."""
    folder = write(tmp_path / "views", good(), "parquet")
    questions = pq.read_table(folder / "questions.parquet")
    for column, type_ in [
        ("question_id", pa.string_view()),
        ("parents", pa.list_(pa.string_view())),
    ]:
        position = questions.column_names.index(column)
        values = pa.array(questions[column].to_pylist(), type_)
        questions = questions.set_column(position, column, values)
    pq.write_table(questions, folder / "questions.parquet")
    written = pq.read_table(folder / "questions.parquet")
    assert written["question_id"].type == pa.string_view()
    assert written["parents"].type == pa.list_(pa.string_view())

    views = read_bundle(folder, TAXONOMY)

    assert_same_tables(views, read_bundle(write(tmp_path / "jsonl", good()), TAXONOMY))


def assert_same_tables(got: dict[str, pa.Table], expected: dict[str, pa.Table]) -> None:
    for name in TABLES:
        assert got[name].equals(expected[name]), name
