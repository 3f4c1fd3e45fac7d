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
from ingestion.bundle.problems import LINE
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


# ------------------------------------------------------------------------------------------------
# The reader's parts, called alone (milliseconds each: they pin what mutation testing found loose)
# ------------------------------------------------------------------------------------------------

_PROMPTS = TABLES["prompts"]
_PROMPT_LINE = (
    b'{"prompt_id": "p1", "concept_id": "c1", "language": "en", "source": "s", "text": "t"}'
)


def _lines_and_problems(read) -> tuple[list[int], list[tuple]]:
    return read.table[LINE].to_pylist(), [(p.file, p.line, p.reason) for p in read.problems]


@pytest.mark.parametrize(
    ("value", "type_", "fits"),
    [
        (2**63 - 1, pa.int64(), True),  # int64's largest
        (2**63, pa.int64(), False),
        (-(2**63), pa.int64(), True),  # int64's smallest
        (-(2**63) - 1, pa.int64(), False),
        (-127, pa.int64(), True),
        (1.5, pa.int64(), False),
        (True, pa.int64(), False),  # a JSON true is not an integer
        (3, pa.float64(), True),  # an integer is a number
        (3000, pa.float64(), True),
        (2**1023 - 1, pa.float64(), True),
        (2**1023, pa.float64(), False),  # float64 holds up to about 1.8 * 2**1023
        (["a", None], pa.list_(pa.string()), True),  # null elements are the shape checks'
        (["a", 1], pa.list_(pa.string()), False),
    ],
)
def test_a_json_value_fits_its_column_exactly_within_the_bounds(value, type_, fits):
    """Guards against read._fits_3 (`or` for the int's type test), _7/_8/_9/_10 and _11/_13/_14
    (int64's lower and upper bounds moved), _20/_22 (an int never a number, or a crash),
    _23/_24/_25/_26 (the float bound 2**1023 moved), _29/_30 (a list's null elements refused)."""
    assert bundle_read._fits(value, type_) is fits


@pytest.mark.parametrize(
    ("data", "lines"),
    [(b"", 0), (b"a", 1), (b"a\n", 1), (b"a\nb", 2), (b"a\n\n", 2)],  # counted by hand
)
def test_the_line_count_counts_a_final_newline_as_the_end_of_the_last_line(data, lines):
    """Guards against read._line_count_1 to _11: the empty file, the count of newlines and the
    last line without one, each turned around or shifted."""
    assert bundle_read._line_count(data) == lines


def test_the_fast_reader_takes_object_lines_with_their_numbers_and_doubts_the_rest():
    """Guards against read._read_jsonl_fast_2 to _14 (the pre-screen: line count, a first `{`,
    a `{` after every newline, turned around or shifted) and _34 (the row count check)."""
    one = bundle_read._read_jsonl_fast(_PROMPT_LINE + b"\n", _PROMPTS, first_line=7)
    two = bundle_read._read_jsonl_fast(_PROMPT_LINE + b"\n" + _PROMPT_LINE, _PROMPTS, 3)

    assert one[LINE].to_pylist() == [7]
    assert two[LINE].to_pylist() == [3, 4]
    assert two["prompt_id"].to_pylist() == ["p1", "p1"]
    # The line pyarrow reads well comes first: a screen let through then fails the assertion
    # rather than handing pyarrow the `null` lines, which crash it (a crash is no verdict).
    for doubtful in (b" " + _PROMPT_LINE, b"", b"null\n", _PROMPT_LINE + b"\nnull\n"):
        assert bundle_read._read_jsonl_fast(doubtful, _PROMPTS, first_line=1) is None, doubtful


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        (b"  ", "blank line (every line must hold one JSON object)"),
        (b"[1]", "not a JSON object (got list)"),
        (b"[" * 100_000, "not valid JSON (nested too deeply to read)"),
        (b'{"a": 1, "b": 2, "b": 3}', 'key "b" appears twice in the object'),
        (
            b'{"a": "\\ud800"}',
            "a \\u escape names half of a surrogate pair alone, which is no character",
        ),
        # 16 MiB is 16,777,216 bytes; one more is refused by its length alone
        (b"x" * (2**24 + 1), "line is 16,777,217 bytes long; the limit is 16 MiB"),
    ],
)
def test_a_line_that_cannot_be_a_row_says_why(raw, reason):
    """Guards against read._parse_line_2/_3 (the limit shown as 16 << 20 or 8 MiB), _5/_6/_21/
    _33 (reasons re-cased), _29 (the type of None named), _object_of_unique_keys_7 (the first
    key named instead of the repeated one)."""
    assert bundle_read._parse_line(raw) == (None, reason)


def test_a_line_of_exactly_the_limit_and_a_whole_surrogate_pair_are_read():
    """Guards against read._parse_line_1 (`>=`: a line of exactly 16 MiB refused) and _30
    (`or`: a line whose escape is a whole surrogate pair refused as a lone half)."""
    padding = b"x" * (2**24 - 8)  # with '{"a":"' (6 bytes) and '"}' (2): 2**24 bytes
    assert bundle_read._parse_line(b'{"a":"' + padding + b'"}')[1] is None
    assert bundle_read._parse_line(b'{"a": "\\ud83d\\ude00"}') == ({"a": "\U0001f600"}, None)


@pytest.mark.parametrize(
    ("source", "target", "castable"),
    [
        (pa.null(), pa.string(), True),  # a column of nulls casts to anything
        (pa.dictionary(pa.int32(), pa.string()), pa.string(), True),
        (pa.dictionary(pa.int32(), pa.int64()), pa.string(), False),
    ],
)
def test_a_null_or_dictionary_parquet_column_is_cast_by_its_values(source, target, castable):
    """Guards against read._castable_2 (a null column refused) and _4 to _7 (a dictionary's
    value type or the target not handed on)."""
    assert bundle_read._castable(source, target) is castable


def test_per_line_reading_goes_on_after_a_bad_line():
    """Guards against read._read_lines_17 (`break` after a bad line: the rows after it lost)."""
    read = bundle_read.ReadTable(TABLES["generators"], "generators.jsonl", pa.table({}))
    rows = [b'{"model_id": "m1", "display_name": "M", "cost_gpu_s_per_mp": 3}']
    table = bundle_read._read_lines([b"oops", *rows], 1, read)

    assert table[LINE].to_pylist() == [2]
    assert table["cost_gpu_s_per_mp"].to_pylist() == [3.0]
    assert [p.line for p in read.problems] == [1]


def _outcome(read) -> tuple:
    problems = [(p.file, p.line, p.reason) for p in read.problems]
    return read.file, read.whole, problems, read.table.num_rows


def test_a_table_is_found_in_one_file_or_refused_for_the_folder(tmp_path):
    """Guards against read.read_table_5 to _39 and _unusable_2/_4/_12: the reasons, the file
    names and the `whole` flag of the tables that cannot be read (both formats, a required file
    missing, a folder for a file), and an optional file's absence (its name, not None)."""
    (tmp_path / "prompts.jsonl").write_bytes(b"")
    (tmp_path / "prompts.parquet").write_bytes(b"")
    (tmp_path / "images.jsonl").mkdir()

    both = "both prompts.jsonl and prompts.parquet are present; keep one"
    missing = "required file is missing (expected questions.jsonl or questions.parquet)"
    folder = "not a regular file (a bundle holds one file per table)"
    read = {name: bundle_read.read_table(tmp_path, TABLES[name]) for name in TABLES}
    assert _outcome(read["prompts"]) == ("prompts", False, [("prompts", None, both)], 0)
    assert _outcome(read["questions"]) == ("questions", False, [("questions", None, missing)], 0)
    assert _outcome(read["images"]) == ("images.jsonl", False, [("images.jsonl", None, folder)], 0)
    assert _outcome(read["generators"]) == ("generators", True, [], 0)


def test_a_required_empty_table_is_refused_and_judges_answers_are_normalised(tmp_path):
    """Guards against read.read_table_64/_66/_67 (the empty table's reason, and it left whole),
    _69/_70 and _normalised_answers_9 (the judgments' " Yes" not folded to "yes"), and
    _fill_defaults_16 (a mistyped judge_id filled with the default: it stays null)."""
    (tmp_path / "prompts.jsonl").write_bytes(b"")
    (tmp_path / "judgments.jsonl").write_bytes(
        b'{"prompt_id": "p1", "model_id": "m1", "question_id": "q1", "answer": " Yes"}\n'
        b'{"prompt_id": "p1", "model_id": "m1", "question_id": "q2", "judge_id": 5}\n'
    )

    prompts = bundle_read.read_table(tmp_path, TABLES["prompts"])
    judgments = bundle_read.read_table(tmp_path, TABLES["judgments"])

    no_rows = ("prompts.jsonl", None, "required table has no rows")
    assert _outcome(prompts) == ("prompts.jsonl", False, [no_rows], 0)
    assert judgments.table["answer"].to_pylist() == ["yes", None]
    assert judgments.table["judge_id"].to_pylist() == ["default", None]


def test_an_unreadable_file_a_byte_order_mark_and_a_missing_line_end(tmp_path):
    """Guards against read.read_jsonl_2 to _8 (the unreadable file's reason: its strerror, not
    the whole error), _10 (the BOM's cut), _77/_80 and _hint_truncation_6/_14 (the truncation
    hint on a line that ends with a newline, or not on the last line)."""
    gone = bundle_read.read_jsonl(tmp_path / "prompts.jsonl", _PROMPTS)
    (tmp_path / "bom.jsonl").write_bytes(b"\xef\xbb\xbf" + _PROMPT_LINE + b"\n")
    (tmp_path / "ended.jsonl").write_bytes(_PROMPT_LINE + b'\n{"a"\n')
    (tmp_path / "cut.jsonl").write_bytes(b'{"a"\n' + _PROMPT_LINE + b'\n{"a"')

    unreadable = "cannot read file: No such file or directory"
    assert _outcome(gone) == ("prompts.jsonl", False, [("prompts.jsonl", None, unreadable)], 0)
    assert bundle_read.read_jsonl(tmp_path / "bom.jsonl", _PROMPTS).table.num_rows == 1
    ended = bundle_read.read_jsonl(tmp_path / "ended.jsonl", _PROMPTS)
    assert [p.reason for p in ended.problems] == [
        "not valid JSON (Expecting ':' delimiter at column 5)"
    ]
    cut = bundle_read.read_jsonl(tmp_path / "cut.jsonl", _PROMPTS)
    hint = "; the file ends inside this line without a line end, so it may be truncated"
    assert [(p.line, p.reason.endswith(hint)) for p in cut.problems] == [(1, False), (3, True)]


def test_chunks_after_a_bad_one_keep_their_line_numbers_and_a_blank_last_line(
    tmp_path, monkeypatch
):
    """Guards against read.read_jsonl_54/_60/_61 (a chunk read fast numbered from None, from
    its start - 1 or + 2) and _64 (a chunk whose fast read lost a blank last line kept)."""
    monkeypatch.setattr(bundle_read, "_CHUNK_LINES", 2)
    good_line = _PROMPT_LINE + b"\n"
    (tmp_path / "bad_first.jsonl").write_bytes(good_line + b"oops\n" + good_line * 2)
    (tmp_path / "blank_last.jsonl").write_bytes(good_line * 3 + b"\n")

    bad_first = bundle_read.read_jsonl(tmp_path / "bad_first.jsonl", _PROMPTS)
    blank_last = bundle_read.read_jsonl(tmp_path / "blank_last.jsonl", _PROMPTS)

    # chunks (1, 2) and (3, 4): line 2 is bad, so chunk 1 is read per line, chunk 2 fast
    assert bad_first.table[LINE].to_pylist() == [1, 3, 4]
    assert [p.line for p in bad_first.problems] == [2]
    # chunks (1, 2) and (3, 4): line 4 is blank
    assert blank_last.table[LINE].to_pylist() == [1, 2, 3]
    assert [(p.line, p.reason[:11]) for p in blank_last.problems] == [(4, "blank line ")]


def test_parquet_files_unreadable_or_with_a_repeated_or_mistyped_column(tmp_path, monkeypatch):
    """Guards against read.read_parquet_16 to _27 (a repeated column let through, its reason or
    file lost, the second repeated name asked for) and _47/_49/_57 (a mistyped column's table
    left whole or unnamed), then _5/_8/_9 (an error without a message shown as its repr)."""
    repeated = pa.Table.from_arrays([pa.array(["p1"])] * 2, names=["prompt_id", "prompt_id"])
    pq.write_table(repeated, tmp_path / "repeated.parquet")
    pq.write_table(pa.table({"prompt_id": [1]}), tmp_path / "mistyped.parquet")

    twice = bundle_read.read_parquet(tmp_path / "repeated.parquet", _PROMPTS)
    mistyped = bundle_read.read_parquet(tmp_path / "mistyped.parquet", _PROMPTS)

    twice_reason = "column 'prompt_id' appears more than once"
    assert _outcome(twice) == (
        "repeated.parquet",
        False,
        [("repeated.parquet", None, twice_reason)],
        0,
    )
    assert mistyped.file == "mistyped.parquet" and mistyped.whole is False
    monkeypatch.setattr(bundle_read.pq, "ParquetFile", _raises_without_a_message)
    silent = bundle_read.read_parquet(tmp_path / "mistyped.parquet", _PROMPTS)
    assert silent.problems[0].reason == "cannot read Parquet file: ValueError()"


def _raises_without_a_message(path):
    raise ValueError()


class _CorruptColumn:
    """A column that fails validation for a reason other than UTF-8 (its strings all decode)."""

    def validate(self, full):
        raise pa.ArrowInvalid("offsets out of order")

    def combine_chunks(self):
        return pa.array(["fine"])


def test_every_column_not_utf8_is_reported_and_a_corrupt_one_by_name():
    """Guards against read._invalid_utf8_7 (`=` for `+=`: an earlier column's rows dropped) and
    _16 to _21 (the corrupt column's problem, its file or its reason lost)."""
    not_utf8 = pa.array([b"ok", b"\xff"], pa.binary()).view(pa.string())  # row 2 is bad
    columns = {"a": pa.chunked_array([not_utf8]), "b": pa.chunked_array([not_utf8])}
    corrupt = {"c": _CorruptColumn()}

    assert bundle_read._invalid_utf8("f", columns) == [
        Problem("f", 2, "'a' is not valid UTF-8"),
        Problem("f", 2, "'b' is not valid UTF-8"),
    ]
    assert bundle_read._invalid_utf8("f", corrupt) == [
        Problem("f", None, "column 'c' is corrupt: offsets out of order")
    ]


@pytest.mark.parametrize("leading", ["", " "])
def test_a_huge_integer_cost_reads_as_the_same_double_on_either_path(tmp_path, leading):
    """A number column's JSON integer above 2**53 (2**64 + 1 here): the per-line reader (a
    leading space sends the file there) once handed it to Arrow as an integer, which refused
    it with an uncaught ArrowInvalid (a traceback, not a refusal). Both paths must read the
    double a JSON parser rounds it to, float(2**64 + 1) = 2.0**64."""
    row = f'{leading}{{"model_id": "m1", "display_name": "M", "cost_gpu_s_per_mp": {2**64 + 1}}}'
    (tmp_path / "generators.jsonl").write_text(row + "\n", encoding="utf-8")
    read = bundle_read.read_jsonl(tmp_path / "generators.jsonl", TABLES["generators"])
    assert read.problems == []
    assert read.table["cost_gpu_s_per_mp"].to_pylist() == [2.0**64]
