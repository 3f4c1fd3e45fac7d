"""fct_hcq_leaderboard_by_judge: the leaderboard of every judge, raw to marts on the hand world
(bilingual, with transcriptions) with a second judge that contradicts every answer.

The official judge's rows are fct_hcq_leaderboard's exactly; another judge's rows (numpy,
`method.leaderboard`) equal fct_hcq_leaderboard (SQL) of the same warehouse built with that judge
named official: the independent route, both ways round.
"""

from __future__ import annotations

import pytest

from tests.helpers import query

COLUMNS = (
    "model_id, display_name, language_scope, hcq_total, entities, text, attributes, relations, "
    "semantics, rank, n_groups, n_capabilities, hcq_total_frac, text_evidence"
)


@pytest.fixture(scope="module")
def two_judges(hand_two_judges):
    """The hand bundle with a second judge's answers appended, the per-judge leaderboard (and
    everything upstream) built with the default official judge: the session's, which
    test_official_judge.py reads too (tests/marts/conftest.py). Tests only read it."""
    return hand_two_judges


def board(warehouse, judge: str) -> list[tuple]:
    return query(
        warehouse,
        f"select {COLUMNS} from marts.fct_hcq_leaderboard_by_judge where judge_id = '{judge}' "
        "order by model_id, language_scope",
    )


def official_board(warehouse) -> list[tuple]:
    return query(
        warehouse,
        f"select {COLUMNS} from marts.fct_hcq_leaderboard order by model_id, language_scope",
    )


def assert_same_board(numpy_rows: list[tuple], sql_rows: list[tuple]) -> None:
    """Equal row by row: exact for ids, ranks and counts, to 1e-12 points for the scores (numpy
    and DuckDB may sum a group's scores in another order)."""
    assert len(numpy_rows) == len(sql_rows) > 0
    for got, want in zip(numpy_rows, sql_rows, strict=True):
        for value, expected in zip(got, want, strict=True):
            if isinstance(expected, float):
                assert value == pytest.approx(expected, rel=0, abs=1e-12), (got, want)
            else:
                assert value == expected, (got, want)


def test_each_judge_has_a_leaderboard_and_the_official_rows_are_the_leaderboard(two_judges):
    official, second = board(two_judges, "default"), board(two_judges, "second")
    assert official == official_board(two_judges)  # exactly: the same rows
    assert len(second) == len(official) == 2 * 4  # two models x en, zh, pooled, bilingual
    assert second != official  # the second judge contradicts every answer
    flags = query(
        two_judges,
        "select judge_id, bool_and(is_official) from marts.fct_hcq_leaderboard_by_judge group by 1",
    )
    assert sorted(flags) == [("default", True), ("second", False)]


def test_a_judges_rows_equal_the_leaderboard_with_that_judge_official(
    two_judges, hand_two_judges_second_official
):
    """`rebuilt`: a copy of `two_judges` rebuilt with `second` named official (the session's,
    tests/marts/conftest.py; test_official_judge.py reads it too)."""
    second_by_numpy, default_by_sql = board(two_judges, "second"), board(two_judges, "default")
    rebuilt = hand_two_judges_second_official

    assert_same_board(second_by_numpy, official_board(rebuilt))
    assert_same_board(board(rebuilt, "default"), default_by_sql)
