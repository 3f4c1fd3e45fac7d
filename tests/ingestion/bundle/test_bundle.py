"""The evidence bundle reader, validator and loader (ingestion/bundle/).

Every expected value below is read off the hand-written fixture: line numbers are positions in the
lists of GOOD, counted from 1.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from ingestion.bundle import (
    BundleError,
    Problem,
    default_capabilities,
    load_bundle,
    raw_tables,
    read_bundle,
)
from ingestion.bundle import read as bundle_read
from ingestion.bundle.format import TABLES, write_bundle

TAXONOMY = {"animals", "color", "spatial", "text_rendering", "style"}


def rows(columns: str, *values: tuple) -> list[dict]:
    names = columns.split()
    return [dict(zip(names, row, strict=True)) for row in values]


GOOD: dict[str, list[dict]] = {
    "prompts": rows(
        "prompt_id concept_id language source text",
        ("p1", "c1", "en", "dsg", "a dog"),
        ("p2", "c1", "zh", "dsg", "一只狗"),
        ("p3", "c2", "en", "own", "a sign"),
    ),
    # p1's questions interleave with p2's so that question_order is not the line number.
    "questions": rows(
        "prompt_id question_id text capability parents entity text_target",
        ("p1", "q1", "dog?", "animals", [], "dog", None),
        ("p1", "q2", "red?", "color", ["q1"], None, None),
        ("p2", "q1", "狗?", "animals", [], "dog", None),
        ("p1", "q3", "left?", "spatial", ["q1", "q2"], None, None),
        ("p2", "q2", "红?", "color", ["q1"], None, None),
        ("p3", "q1", "says hi?", "text_rendering", [], None, "hi"),
    ),
    "generators": rows(
        "model_id display_name cost_gpu_s_per_mp",
        ("m1", "Model One", 10.5),
        ("m2", "Model Two", None),
    ),
    "images": rows(
        "image_id prompt_id model_id width height latency_s gpus path",
        ("i1", "p1", "m1", 1024, 1024, 3.5, 1, "img/i1.png"),
        ("i2", "p2", "m1", 1024, 768, 0.0, 2, None),
        ("i3", "p1", "m2", 512, 512, 1.25, 1, None),
    ),
    "judgments": rows(
        "prompt_id model_id question_id answer p_yes",
        ("p1", "m1", "q1", "yes", 0.9),
        ("p1", "m1", "q2", "no", 0.2),
        ("p1", "m1", "q3", "yes", 1.0),
        ("p2", "m1", "q1", "yes", None),
        ("p2", "m1", "q2", "no", 0.0),
        ("p3", "m1", "q1", "yes", 0.7),
        ("p1", "m2", "q1", "yes", 0.6),
        ("p1", "m2", "q2", "yes", 0.8),
        ("p1", "m2", "q3", None, None),
    ),
    "transcriptions": rows(
        "prompt_id model_id status blocks",
        ("p3", "m1", "ok", ["hi", "there"]),
        ("p3", "m2", "unavailable", []),
    ),
}


def good() -> dict[str, list[dict]]:
    return copy.deepcopy(GOOD)


def write(folder: Path, tables: dict[str, list[dict]], fmt: str = "jsonl") -> Path:
    write_bundle(folder, tables, fmt)
    return folder


def problems_of(folder: Path, capabilities: set[str] = TAXONOMY) -> list[Problem]:
    with pytest.raises(BundleError) as refused:
        read_bundle(folder, capabilities)
    return refused.value.problems


def the_problem(folder: Path) -> Problem:
    """The single problem of a bundle broken in one place: no echoes of it elsewhere."""
    problems = problems_of(folder)
    assert len(problems) == 1, [str(p) for p in problems]
    return problems[0]


def assert_problem(problem: Problem, file: str, line: int | None, fragment: str) -> None:
    assert (problem.file, problem.line) == (file, line), str(problem)
    assert fragment in problem.reason, str(problem)


def raw_rows(warehouse: Path, *, skip: tuple[str, ...] = ()) -> dict[str, list[tuple]]:
    """Every raw table's rows in a stable order (the import time is left out where asked)."""
    with duckdb.connect(str(warehouse), read_only=True) as con:
        names = [
            row[0]
            for row in con.execute(
                "SELECT table_name FROM information_schema.tables WHERE table_schema = 'raw'"
            ).fetchall()
        ]
        result = {}
        for name in sorted(names):
            columns = [
                c
                for (c,) in con.execute(
                    "SELECT column_name FROM information_schema.columns "
                    "WHERE table_schema = 'raw' AND table_name = ? ORDER BY ordinal_position",
                    [name],
                ).fetchall()
                if c not in skip
            ]
            listed = ", ".join(columns)
            query = f"SELECT {listed} FROM raw.{name} ORDER BY ALL"
            result[name] = [tuple(columns), *con.execute(query).fetchall()]
        return result


# ------------------------------------------------------------------------------------------------
# Accepted bundles
# ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["jsonl", "parquet"])
def test_good_bundle_reads_every_table_with_its_rows(tmp_path, fmt):
    tables = read_bundle(write(tmp_path, good(), fmt), TAXONOMY)

    assert set(tables) == set(TABLES)
    assert {name: t.num_rows for name, t in tables.items()} == {
        "prompts": 3,
        "questions": 6,
        "generators": 2,
        "images": 3,
        "judgments": 9,
        "transcriptions": 2,
        "ratings": 0,
        "conversion_report": 0,
    }
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
# Rule 5: duplicates (the duplicate is appended, so it is the table's last line)
# ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["jsonl", "parquet"])
@pytest.mark.parametrize(
    ("table", "copied_row", "fragment"),
    [
        ("prompts", 1, "duplicate prompt_id 'p1' (first on line 1)"),
        ("questions", 5, "duplicate (prompt_id, question_id) ('p2', 'q2') (first on line 5)"),
        ("generators", 2, "duplicate model_id 'm2' (first on line 2)"),
        ("images", 2, "duplicate image_id 'i2' (first on line 2)"),
        (
            "judgments",
            3,
            "duplicate (prompt_id, model_id, question_id, judge_id) ('p1', 'm1', 'q3', 'default')",
        ),
        ("transcriptions", 1, "duplicate (prompt_id, model_id) ('p3', 'm1')"),
    ],
)
def test_rule5_duplicate_key_is_refused(tmp_path, fmt, table, copied_row, fragment):
    tables = good()
    tables[table].append(dict(tables[table][copied_row - 1]))
    last_line = len(tables[table])

    problem = the_problem(write(tmp_path, tables, fmt))

    assert_problem(problem, f"{table}.{fmt}", last_line, fragment)


# ------------------------------------------------------------------------------------------------
# Rules 6-7: prompts and questions
# ------------------------------------------------------------------------------------------------


def test_rule6_language_must_look_like_bcp47(tmp_path):
    tables = good()
    tables["prompts"][1]["language"] = "chinese!"

    problem = the_problem(write(tmp_path, tables))

    assert_problem(problem, "prompts.jsonl", 2, "language 'chinese!' is not a BCP-47 code")


def test_rule7_question_for_an_unknown_prompt_is_refused(tmp_path):
    tables = good()
    tables["questions"].append({**GOOD["questions"][0], "prompt_id": "p9"})

    assert_problem(
        the_problem(write(tmp_path, tables)), "questions.jsonl", 7, "unknown prompt 'p9'"
    )


def test_rule7_unknown_capability_is_refused(tmp_path):
    tables = good()
    tables["questions"][4]["capability"] = "colour"

    problem = the_problem(write(tmp_path, tables))

    assert_problem(problem, "questions.jsonl", 5, "unknown capability 'colour'")


def test_rule7_parent_outside_the_prompt_is_refused(tmp_path):
    tables = good()
    tables["questions"][4]["parents"] = ["q3"]  # p2 has no q3; p1 has

    problem = the_problem(write(tmp_path, tables))

    assert_problem(problem, "questions.jsonl", 5, "parent 'q3' is not a question of prompt 'p2'")
    assert str(problem) == "questions.jsonl:5: parent 'q3' is not a question of prompt 'p2'"


def test_rule7_self_parent_is_refused(tmp_path):
    tables = good()
    tables["questions"][1]["parents"] = ["q1", "q2"]

    problem = the_problem(write(tmp_path, tables))

    assert_problem(problem, "questions.jsonl", 2, "'q2' lists itself as a parent")


def test_rule7_repeated_parent_is_refused(tmp_path):
    tables = good()
    tables["questions"][3]["parents"] = ["q1", "q2", "q1"]

    assert_problem(
        the_problem(write(tmp_path, tables)), "questions.jsonl", 4, "'q1' is listed twice"
    )


def test_rule7_cycle_is_reported_once_with_its_questions(tmp_path):
    tables = good()
    tables["questions"][0]["parents"] = ["q3"]  # q1 <- q3 <- q2 <- q1, and q3 <- q1 directly

    problem = the_problem(write(tmp_path, tables))

    assert_problem(problem, "questions.jsonl", 1, "'q1', 'q2', 'q3' of prompt 'p1' form a cycle")


def test_rule7_two_separate_cycles_are_two_problems(tmp_path):
    tables = good()
    tables["questions"][0]["parents"] = ["q2"]  # p1: q1 <-> q2 (q3 hangs below, not in it)
    tables["questions"][2]["parents"] = ["q2"]  # p2: q1 <-> q2

    problems = problems_of(write(tmp_path, tables))

    assert [(p.line, p.reason) for p in problems] == [
        (1, "questions 'q1', 'q2' of prompt 'p1' form a cycle of parents"),
        (3, "questions 'q1', 'q2' of prompt 'p2' form a cycle of parents"),
    ]


def test_rule7_prompt_without_questions_is_refused(tmp_path):
    tables = good()
    tables["prompts"].append({**GOOD["prompts"][0], "prompt_id": "p4"})

    assert_problem(
        the_problem(write(tmp_path, tables)), "prompts.jsonl", 4, "'p4' has no questions"
    )


# ------------------------------------------------------------------------------------------------
# Rules 8-11: judgments, images, transcriptions, generators
# ------------------------------------------------------------------------------------------------


def test_rule8_judgment_for_an_unknown_question_is_refused(tmp_path):
    tables = good()
    tables["judgments"][4]["question_id"] = "q3"  # p2 has no q3

    problem = the_problem(write(tmp_path, tables))

    assert_problem(problem, "judgments.jsonl", 5, "no question 'q3' in prompt 'p2'")


@pytest.mark.parametrize(
    ("column", "value", "fragment"),
    [
        ("answer", "maybe", "answer must be 'yes', 'no' or null, got 'maybe'"),
        ("answer", "y", "got 'y'"),  # 'Yes' is normalised: test_bad_input.py
        ("p_yes", 1.5, "p_yes must be within [0, 1], got 1.5"),
        ("p_yes", -0.25, "p_yes must be within [0, 1], got -0.25"),
    ],
)
def test_rule8_judgment_value_out_of_domain_is_refused(tmp_path, column, value, fragment):
    tables = good()
    tables["judgments"][5][column] = value

    assert_problem(the_problem(write(tmp_path, tables)), "judgments.jsonl", 6, fragment)


@pytest.mark.parametrize("table", ["images", "transcriptions"])
def test_rule9_image_or_transcription_for_an_unknown_prompt_is_refused(tmp_path, table):
    tables = good()
    tables[table][1]["prompt_id"] = "p7"

    assert_problem(the_problem(write(tmp_path, tables)), f"{table}.jsonl", 2, "unknown prompt 'p7'")


def test_rule9_transcription_status_is_ok_or_unavailable(tmp_path):
    tables = good()
    tables["transcriptions"][1]["status"] = "failed"

    problem = the_problem(write(tmp_path, tables))

    assert_problem(problem, "transcriptions.jsonl", 2, "status must be 'ok' or 'unavailable'")


def test_rule9_blocks_must_be_a_list_of_strings(tmp_path):
    tables = good()
    tables["transcriptions"][0]["blocks"] = "hi there"

    problem = the_problem(write(tmp_path, tables))

    assert_problem(problem, "transcriptions.jsonl", 1, "'blocks' must be a list of strings")


@pytest.mark.parametrize(
    ("column", "value", "fragment"),
    [
        ("width", 0, "width must be > 0, got 0"),
        ("height", -768, "height must be > 0, got -768"),
        ("gpus", 0, "gpus must be > 0"),
        ("latency_s", -0.5, "latency_s must be >= 0, got -0.5"),
    ],
)
def test_rule9_image_sizes_and_latency_are_positive(tmp_path, column, value, fragment):
    tables = good()
    tables["images"][1][column] = value

    assert_problem(the_problem(write(tmp_path, tables)), "images.jsonl", 2, fragment)


@pytest.mark.parametrize(("table", "row"), [("images", 3), ("judgments", 8), ("transcriptions", 2)])
def test_rule10_model_missing_from_generators_is_refused(tmp_path, table, row):
    tables = good()
    tables[table][row - 1]["model_id"] = "m3"

    problem = the_problem(write(tmp_path, tables))

    assert_problem(problem, f"{table}.jsonl", row, "model 'm3' is not listed in generators")


def test_rule11_negative_cost_is_refused(tmp_path):
    tables = good()
    tables["generators"][1]["cost_gpu_s_per_mp"] = -2.0

    problem = the_problem(write(tmp_path, tables))

    assert_problem(problem, "generators.jsonl", 2, "cost_gpu_s_per_mp must be >= 0, got -2.0")


# ------------------------------------------------------------------------------------------------
# Reporting
# ------------------------------------------------------------------------------------------------


def test_every_problem_is_reported_at_once_in_file_order(tmp_path):
    tables = good()
    tables["judgments"][0]["answer"] = "perhaps"
    tables["questions"][1]["capability"] = "colour"
    tables["prompts"][2]["language"] = "english"

    with pytest.raises(BundleError) as refused:
        read_bundle(write(tmp_path, tables), TAXONOMY)

    assert [(p.file, p.line) for p in refused.value.problems] == [
        ("prompts.jsonl", 3),
        ("questions.jsonl", 2),
        ("judgments.jsonl", 1),
    ]
    message = str(refused.value).splitlines()
    assert str(tmp_path) in message[0]
    assert message[1:] == [str(p) for p in refused.value.problems]


def test_problem_without_a_line_names_only_the_file():
    assert str(Problem("questions", None, "required file is missing")) == (
        "questions: required file is missing"
    )


# ------------------------------------------------------------------------------------------------
# Loading
# ------------------------------------------------------------------------------------------------


def test_load_writes_every_raw_table_and_the_import_record(tmp_path):
    counts = load_bundle(write(tmp_path / "b", good()), tmp_path / "wh" / "w.duckdb", TAXONOMY)

    assert counts == {
        "prompts": 3,
        "questions": 6,
        "generators": 2,
        "images": 3,
        "judgments": 9,
        "transcriptions": 2,
        "ratings": 0,
        "conversion_report": 0,
    }
    with duckdb.connect(str(tmp_path / "wh" / "w.duckdb"), read_only=True) as con:
        columns = con.execute("DESCRIBE raw.questions").fetchall()
        imports = con.execute(
            "SELECT bundle_path, has_transcriptions, n_judgments FROM raw.bundle_imports"
        ).fetchall()
        widths = con.execute("SELECT width FROM raw.images ORDER BY image_id").fetchall()
    assert [(c[0], c[1]) for c in columns[:4]] == [
        ("prompt_id", "VARCHAR"),
        ("question_id", "VARCHAR"),
        ("question_order", "BIGINT"),
        ("text", "VARCHAR"),
    ]
    assert ("parents", "VARCHAR[]") in [(c[0], c[1]) for c in columns]
    assert imports == [(str((tmp_path / "b").resolve()), True, 9)]
    assert widths == [(1024,), (1024,), (512,)]


def test_null_answers_stay_null_in_raw_judgments(tmp_path):
    load_bundle(write(tmp_path / "b", good()), tmp_path / "w.duckdb", TAXONOMY)

    with duckdb.connect(str(tmp_path / "w.duckdb"), read_only=True) as con:
        nulls = con.execute(
            "SELECT prompt_id, model_id, question_id, p_yes FROM raw.judgments WHERE answer IS NULL"
        ).fetchall()
        answers = con.execute("SELECT count(*) FROM raw.judgments WHERE answer = 'no'").fetchone()
    assert nulls == [("p1", "m2", "q3", None)]
    assert answers == (2,)


def test_absent_optional_files_give_empty_raw_tables(tmp_path):
    tables = {name: rows for name, rows in good().items() if TABLES[name].required}

    counts = load_bundle(write(tmp_path / "b", tables), tmp_path / "w.duckdb", TAXONOMY)

    assert counts["generators"] == counts["images"] == counts["transcriptions"] == 0
    with duckdb.connect(str(tmp_path / "w.duckdb"), read_only=True) as con:
        for name in ("generators", "images", "transcriptions"):
            assert con.execute(f"SELECT count(*) FROM raw.{name}").fetchone() == (0,)
            described = [row[0] for row in con.execute(f"DESCRIBE raw.{name}").fetchall()]
            assert described == list(TABLES[name].column_names)
        has = con.execute("SELECT has_transcriptions FROM raw.bundle_imports").fetchone()
    assert has == (False,)


def test_refused_import_leaves_the_warehouse_untouched(tmp_path):
    warehouse = tmp_path / "w.duckdb"
    load_bundle(write(tmp_path / "good", good()), warehouse, TAXONOMY)
    before = raw_rows(warehouse)
    stat, data = warehouse.stat(), warehouse.read_bytes()
    bad = good()
    bad["judgments"][0]["question_id"] = "q9"

    with pytest.raises(BundleError):
        load_bundle(write(tmp_path / "bad", bad), warehouse, TAXONOMY)

    assert warehouse.read_bytes() == data
    assert warehouse.stat().st_mtime_ns == stat.st_mtime_ns
    assert raw_rows(warehouse) == before


def test_refused_import_creates_no_warehouse(tmp_path):
    bad = good()
    del bad["prompts"]

    with pytest.raises(BundleError):
        load_bundle(write(tmp_path / "bad", bad), tmp_path / "wh" / "w.duckdb", TAXONOMY)

    assert not (tmp_path / "wh").exists()


def test_failure_while_writing_rolls_back_to_the_previous_raw_tables(tmp_path, monkeypatch):
    warehouse = tmp_path / "w.duckdb"
    load_bundle(write(tmp_path / "first", good()), warehouse, TAXONOMY)
    before = raw_rows(warehouse)
    second = good()
    del second["transcriptions"]
    second["prompts"][0]["text"] = "a dog, rewritten"

    def fail(*_args, **_kwargs):
        raise RuntimeError("disk full")

    monkeypatch.setattr(raw_tables, "record_import", fail)
    with pytest.raises(RuntimeError, match="disk full"):
        load_bundle(write(tmp_path / "second", second), warehouse, TAXONOMY)

    assert raw_rows(warehouse) == before


def test_a_second_import_replaces_the_raw_tables(tmp_path):
    warehouse = tmp_path / "w.duckdb"
    load_bundle(write(tmp_path / "first", good()), warehouse, TAXONOMY)
    second = good()
    del second["transcriptions"]

    counts = load_bundle(write(tmp_path / "second", second), warehouse, TAXONOMY)

    assert counts["transcriptions"] == 0
    rows = raw_rows(warehouse, skip=("imported_at",))
    assert rows["transcriptions"][1:] == []
    assert len(rows["bundle_imports"]) == 2  # header + the one import
