"""The meaning of an evidence bundle, as the reader checks it (CONTRACTS.md rules 5-11:
duplicate keys, prompts and questions, judgments, images, transcriptions and generators), and how
it reports what it refuses: every problem at once, in file order.

Every expected value below is read off the hand-written fixture (tests/worlds/good_bundle.py):
line numbers are positions in the lists of GOOD, counted from 1.
"""

from __future__ import annotations

import pytest

from ingestion.bundle import BundleError, Problem, read_bundle
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
