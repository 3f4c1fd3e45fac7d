"""The meaning of an evidence bundle, as the reader checks it (CONTRACTS.md rules 5-11:
duplicate keys, prompts and questions, judgments, images, transcriptions and generators), and how
it reports what it refuses: every problem at once, in file order.

Every expected value below is read off the hand-written fixture (tests/worlds/good_bundle.py):
line numbers are positions in the lists of GOOD, counted from 1.
"""

from __future__ import annotations

import pyarrow as pa
import pytest

from ingestion.bundle import BundleError, Problem, read_bundle
from ingestion.bundle.checks import _left_after_topological_sort, parent_problems, run_checks
from ingestion.bundle.format import SAFE_ID_RULE, TABLES
from ingestion.bundle.problems import LINE
from ingestion.bundle.read import ReadTable
from tests.worlds.good_bundle import (
    GOOD,
    TAXONOMY,
    assert_problem,
    good,
    problems_of,
    the_problem,
    write,
)

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


def test_rule7_unknown_rule_capability_is_refused_and_a_known_one_kept(tmp_path):
    """Guards against a model-attributed bundle whose kept rule label (`rule_capability`, issue
    32) is not a key of the taxonomy: the agreement mart would count a label no report shows."""
    tables = good()
    tables["questions"][0]["rule_capability"] = "color"  # a key: accepted
    tables["questions"][4]["rule_capability"] = "colour"

    problem = the_problem(write(tmp_path, tables))

    assert_problem(problem, "questions.jsonl", 5, "unknown rule_capability 'colour'")


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
        ("answer", "y", "got 'y'"),  # 'Yes' is normalised: test_bundle_leniency.py
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
# The checks on tables built in memory (no files, no reader: milliseconds, for mutation testing)
# ------------------------------------------------------------------------------------------------


def _read_in_memory(rows_by_table: dict[str, list[dict]]) -> dict[str, ReadTable]:
    """Every table of the format as the reader would hand it over: a missing key is null, and
    each row's line is its position in its list, counted from 1."""
    read = {}
    for name, spec in TABLES.items():
        fields = [pa.field(c.name, c.type) for c in spec.columns] + [pa.field(LINE, pa.int64())]
        rows = [{**row, LINE: line} for line, row in enumerate(rows_by_table.get(name, []), 1)]
        table = pa.Table.from_pylist(rows, schema=pa.schema(fields))
        read[name] = ReadTable(spec, f"{name}.jsonl", table)
    return read


def _found(read: dict[str, ReadTable], capabilities=TAXONOMY) -> set[tuple]:
    return {(p.file, p.line, p.reason) for p in run_checks(read, capabilities)}


_PROMPT = {"concept_id": "c1", "language": "en", "source": "dsg", "text": "a dog"}
_QUESTION = {"text": "dog?", "capability": "animals", "parents": []}
_IMAGE = {"prompt_id": "p1", "model_id": "m1", "width": 8, "height": 8}


def test_each_meaning_rule_reports_its_exact_reason_and_blank_ids_only_once():
    """Guards against checks.py mutants that change what a rule says or whom it reports:
    meaning_checks_21/22/38/69/81/194/234/246 (reasons re-cased), _65/_232 (the allowed
    values 'yes'/'repaired' re-cased, so a good row is refused), _34/_154/_268 (a key
    re-cased: no longer an id, so a blank one is reported again as unknown),
    _duplicate_check_17 (the ids not selected, so two rows of one unsafe id are reported
    again as duplicates), checks_connection_12 (shown()'s "characters" re-cased)."""
    read = _read_in_memory(
        {
            "prompts": [
                {**_PROMPT, "prompt_id": "p1"},
                {**_PROMPT, "prompt_id": "p2", "language": "chinese!"},
                {**_PROMPT, "prompt_id": "p3"},  # no question names it
                {**_PROMPT, "prompt_id": " "},
            ],
            "questions": [
                {**_QUESTION, "prompt_id": "p1", "question_id": "q1", "compliant_answer": "yes"},
                {**_QUESTION, "prompt_id": "p1", "question_id": "q2", "compliant_answer": "maybe"},
                {**_QUESTION, "prompt_id": "p2", "question_id": "q1", "capability_source": ""},
                {**_QUESTION, "prompt_id": "  ", "question_id": "q1"},
            ],
            "generators": [{"model_id": "m1", "display_name": "Model One"}],
            "images": [
                {**_IMAGE, "image_id": "i1", "height": 0},
                {**_IMAGE, "image_id": "a b"},
                {**_IMAGE, "image_id": "a b"},
                {**_IMAGE, "image_id": "a " + "b" * 40},  # 42 characters
            ],
            "judgments": [
                {"prompt_id": "p1", "model_id": "m1", "question_id": "q1", "judge_id": "default"},
                {"prompt_id": "   ", "model_id": "m1", "question_id": "q1", "judge_id": "default"},
            ],
            "conversion_report": [
                {
                    "source_file": "a.jsonl",
                    "line": 1,
                    "dirty_class": "x",
                    "action": "repaired",
                    "reason": "r",
                },
                {
                    "source_file": "a.jsonl",
                    "line": 0,
                    "dirty_class": "x",
                    "action": "kept",
                    "reason": "r",
                },
            ],
        }
    )
    # The three blank prompt ids differ, so that none is found by another's reference.
    unsafe = f"is not a safe id ({SAFE_ID_RULE})"
    # shown() of the 42-character id: its first 40 characters as JSON ("a " and 38 b's), then
    # the length; the two "a b" rows are unsafe, not duplicates (a reported id is not rechecked).
    long_id = '"a ' + "b" * 38 + '"... (42 characters)'
    assert _found(read) == {
        ("prompts.jsonl", 2, "language 'chinese!' is not a BCP-47 code"),
        ("prompts.jsonl", 3, "prompt 'p3' has no questions"),
        ("prompts.jsonl", 4, "empty prompt_id"),
        ("questions.jsonl", 2, "compliant_answer must be 'yes', 'no' or null, got 'maybe'"),
        ("questions.jsonl", 3, "empty capability_source (null when unknown)"),
        ("questions.jsonl", 4, "empty prompt_id"),
        ("images.jsonl", 1, "height must be > 0, got 0"),
        ("images.jsonl", 2, f'image_id "a b" {unsafe}'),
        ("images.jsonl", 3, f'image_id "a b" {unsafe}'),
        ("images.jsonl", 4, f"image_id {long_id} {unsafe}"),
        ("judgments.jsonl", 2, "empty prompt_id"),
        ("conversion_report.jsonl", 2, "action must be 'repaired' or 'dropped', got 'kept'"),
        ("conversion_report.jsonl", 2, "line must be >= 1, got 0"),
    }


@pytest.mark.parametrize(
    ("generators", "found"),
    [
        ([], set()),  # no generators listed: the images' models are not checked
        (
            [{"model_id": "m1", "display_name": "Model One"}],
            {("images.jsonl", 1, "model 'm9' is not listed in generators")},
        ),
    ],
)
def test_models_are_checked_only_against_a_listed_generator(generators, found):
    """Guards against run_checks_18 (`complete or rows > 0`) and _19 (`rows >= 0`), which
    check the models against an empty generators table, and _20 (`rows > 1`), which skips
    the check when exactly one generator is listed."""
    read = _read_in_memory(
        {
            "prompts": [{**_PROMPT, "prompt_id": "p1"}],
            "questions": [{**_QUESTION, "prompt_id": "p1", "question_id": "q1"}],
            "generators": generators,
            "images": [{**_IMAGE, "image_id": "i1", "model_id": "m9"}],
        }
    )
    assert _found(read) == found


def test_a_cycle_is_named_in_the_order_of_its_first_lines_and_a_stray_parent_by_prompt():
    """Guards against _cycle_problems_13/_15 (the cycle's questions sorted by name, so it is
    reported at qa's line 2 as 'qa', 'qb') and parent_problems_33 (the prompt not handed to
    the edge reasons: "of prompt None")."""
    rows = [
        {"prompt_id": "p1", "question_id": "qb", "parents": ["qa"]},
        {"prompt_id": "p1", "question_id": "qa", "parents": ["qb"]},
        {"prompt_id": "p1", "question_id": "qc", "parents": ["q9"]},
    ]
    questions = _read_in_memory({"questions": rows})["questions"]

    assert [(p.line, p.reason) for p in parent_problems(questions)] == [
        (3, "parent 'q9' is not a question of prompt 'p1'"),
        (1, "questions 'qb', 'qa' of prompt 'p1' form a cycle of parents"),
    ]


@pytest.mark.parametrize(
    ("edges", "stuck"),
    [
        ([("a", "b"), ("b", "c")], set()),  # a chain: every question sorted
        ([("a", "b"), ("a", "c"), ("b", "d"), ("c", "d")], set()),  # d waits for two parents
        # b <-> c is a cycle; d hangs below it; a above it is sorted
        ([("a", "b"), ("b", "c"), ("c", "b"), ("c", "d")], {"b", "c", "d"}),
    ],
)
def test_the_kahn_sort_leaves_only_the_questions_on_or_below_a_cycle(edges, stuck):
    """Guards against _left_after_topological_sort_4 to _14: a child or a ready question
    replaced by None, a parent counted 0, 2 or -1 times, the count lowered by 2 or raised,
    no question ready or the wrong ones ready: each leaves a sortable question behind (or
    sorts the diamond's d before its second parent)."""
    assert _left_after_topological_sort(edges) == stuck
