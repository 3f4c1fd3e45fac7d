"""The marts score one judge, the official one (dbt var `official_judge`, applied in
int_official_judgments), raw to marts on the hand world.

A warehouse holding two judges' judgments builds the same leaderboard as one holding only the
official judge's; naming the other judge official gives the leaderboard of a separate warehouse
built from a bundle whose answers are that judge's alone (the independent route).
"""

from __future__ import annotations

import pytest

from ingestion.bundle import load_bundle
from ingestion.bundle.format import write_bundle
from qct2i.dbt_forkserver import run_forked
from qct2i.dbt_runner import DbtFailed, run_dbt
from tests.helpers import _SESSION_DBT_TARGET, build_warehouse, query, warehouse_in
from tests.worlds.hand import hand_bundle_tables

LEADERBOARD = ("+fct_hcq_leaderboard",)
ONLY_SELECTED_TESTS = ("--indirect-selection", "cautious")  # not tests reading other marts
FLIPPED = {"yes": "no", "no": "yes", None: None}


def second_judges_answers(judge_id: str | None) -> dict[str, list[dict]]:
    """The hand bundle answered by a judge that contradicts the hand answers on every answered
    question (a missing answer stays missing), named `judge_id` (None: no judge named)."""
    tables = hand_bundle_tables()
    for row in tables["judgments"]:
        row["answer"] = FLIPPED[row["answer"]]
        row["p_yes"] = None if row["p_yes"] is None else 1 - row["p_yes"]
        row["judge_id"] = judge_id
    return tables


def bundle(folder, tables):
    write_bundle(folder, tables)
    return folder


def leaderboard(warehouse) -> list[tuple]:
    return query(warehouse, "select * from marts.fct_hcq_leaderboard order by all")


@pytest.fixture(scope="module")
def root(tmp_path_factory):
    return tmp_path_factory.mktemp("judges")


@pytest.fixture(scope="module")
def hand_alone(hand_published):
    """The hand bundle with its one judge (the session's hand warehouse; read only here)."""
    return hand_published


@pytest.fixture(scope="module")
def second_alone(root):
    """The second judge's answers as the only judgments (no judge named: judge `default`)."""
    folder = bundle(root / "second-alone", second_judges_answers(None))
    return build_warehouse(
        folder, warehouse_in(root / "second-alone-wh"), LEADERBOARD, ONLY_SELECTED_TESTS
    )


def test_the_two_judges_disagree_enough_to_move_the_leaderboard(hand_alone, second_alone):
    assert leaderboard(hand_alone) != leaderboard(second_alone)


def test_a_second_judge_leaves_the_official_leaderboard_unchanged(hand_two_judges, hand_alone):
    """The hand bundle with the second judge's answers appended, built with the default official
    judge (the session's `hand_two_judges`, tests/marts/conftest.py)."""
    assert leaderboard(hand_two_judges) == leaderboard(hand_alone)


def test_naming_the_second_judge_official_scores_its_answers(
    hand_two_judges_second_official, second_alone
):
    """The same two judges built with `second` named official (the session's
    `hand_two_judges_second_official`, tests/marts/conftest.py)."""
    warehouse = hand_two_judges_second_official
    assert leaderboard(warehouse) == leaderboard(second_alone)
    assert query(
        warehouse, "select distinct judge_id from intermediate.int_official_judgments"
    ) == [("second",)]


def test_an_official_judge_without_judgments_fails_the_build(root):
    """A misspelt judge must not build marts without evidence that look like "nothing judged"."""
    warehouse = root / "misspelt.duckdb"
    load_bundle(bundle(root / "hand-3", hand_bundle_tables()), warehouse)

    with pytest.raises(DbtFailed) as failed:
        run_dbt(
            "build",
            warehouse,
            select=("+int_official_judgments", "assert_official_judge_has_judgments"),
            target_path=_SESSION_DBT_TARGET,
            extra=("--vars", "{official_judge: secnod}"),
            launcher=run_forked,
        )

    assert "assert_official_judge_has_judgments" in str(failed.value)
