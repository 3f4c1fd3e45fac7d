"""A TIIF-Bench release's derived parents mask through the marts (issue 24): the hand fixture of
tests/ingestion/sources/test_tiif_release.py converted, imported and built with GPT-4o as the
official judge; every expected value worked by hand from the fixture's answers."""

from __future__ import annotations

import pytest

from ingestion.sources.tiif_release import convert_tiif
from tests.helpers import build_warehouse, query
from tests.ingestion.sources.test_tiif_release import write_tiif_fixture


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory):
    root = tmp_path_factory.mktemp("tiif")
    bundle = convert_tiif(write_tiif_fixture(root / "release"), root / "bundle").folder
    return build_warehouse(
        bundle, root / "w.duckdb", extra=("--vars", '{"official_judge": "GPT-4o"}')
    )


def records(warehouse, prompt_id: str) -> list[tuple]:
    return query(
        warehouse,
        "select question_id, outcome, is_valid, outcome_masked from marts.fct_question_records "
        f"where model_id = 'gen-b' and prompt_id = '{prompt_id}' order by question_id",
    )


def test_a_failed_existence_question_masks_the_questions_naming_its_object(warehouse):
    # gen-b, color+2d test line 2: the judge says yes, no, yes, no, yes. q2 ("Is there a blorp")
    # failed, so q4 (the blorp left of the chair), whose derived parent it is, is masked; q3 (the
    # chair green) has parent q1, which held; q5 (the photo) names no object and stays a root.
    assert records(warehouse, "tiif-color_2d-2-short") == [
        ("q1", 1, True, 1),
        ("q2", 0, True, 0),
        ("q3", 1, True, 1),
        ("q4", 0, False, None),
        ("q5", 1, True, 1),
    ]


def test_a_negated_question_is_stored_target_yes_and_masked_by_its_object(warehouse):
    # gen-b, negation line 1 ("a dog that is not asleep", compliant answers yes, no): the judge
    # says no (no dog), yes (asleep): both fail once turned, and q2 is masked by q1.
    assert records(warehouse, "tiif-negation-1-short") == [
        ("q1", 0, True, 0),
        ("q2", 0, False, None),
    ]
    # negation line 0 (compliant yes, no, no): the judge says yes, yes, yes. The spoon's
    # existence (q2), which a compliant image denies, gates nothing: q3 has only the bowl (q1)
    # as parent, which held, so the failed q3 counts.
    assert records(warehouse, "tiif-negation-0-short") == [
        ("q1", 1, True, 1),
        ("q2", 0, True, 0),
        ("q3", 0, True, 0),
    ]


def test_the_release_score_reads_the_converters_sources_and_prompt_ids(warehouse):
    """Guards against fct_release_scores misreading what the TIIF converter writes (the dimension
    after `tiif-testmini/` in `source`, the form after the concept id in the prompt id) and
    against counting the prompt it dropped as failed. gen-b, GPT-4o, TIIF's own share of
    compliant answers: color+2d short Y N Y N Y and Y N = 4/7; negation short Y Y Y against
    yes/no/no (1 complies) and N Y against yes/no (none) = 1/5; overall = mean of the two groups'
    = (20 + 57.14) / 2. Long: color+2d line 2's result is dropped (question_mismatch), so its 5
    questions are missing and line 0 gives 1/2."""
    rows = query(
        warehouse,
        "select prompt_form, scope, round(release_score, 4), n_missing "
        "from marts.fct_release_scores where judge_id = 'GPT-4o' and model_id = 'gen-b' "
        "and scope_level in ('dimension', 'overall') order by prompt_form desc, scope",
    )
    assert rows == [
        ("short", "__all__", 38.5714, 0),
        ("short", "color+2d", 57.1429, 0),
        ("short", "negation", 20.0, 0),
        ("long", "__all__", 35.0, 5),
        ("long", "color+2d", 50.0, 5),
        ("long", "negation", 20.0, 0),
    ]
