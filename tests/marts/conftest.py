"""Worlds that more than one mart test file reads, built once per run (`build_once`,
tests/conftest.py): tests only read them, and a test that writes copies one first."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import _template, build_once
from tests.helpers import copy_warehouse, dbt_build, warehouse_in

# The per-judge leaderboard and everything upstream of it, fct_hcq_leaderboard among them; only
# the tests of the selected nodes (not singular tests that read other marts).
BY_JUDGE = ("+fct_hcq_leaderboard_by_judge",)
CAUTIOUS = ("--indirect-selection", "cautious")


@pytest.fixture(scope="session")
def hand_two_judges(tmp_path_factory, _unchanged_templates) -> Path:
    """The hand bundle with a second judge's answers appended (`second`, contradicting every
    answered question: tests/marts/test_official_judge.py), BY_JUDGE built with the default
    official judge. test_official_judge.py and test_leaderboard_by_judge.py both read it."""
    from ingestion.bundle import load_bundle
    from ingestion.bundle.append import append_bundle
    from tests.marts.test_official_judge import bundle, second_judges_answers
    from tests.worlds.hand import hand_bundle_tables

    def build(root: Path) -> Path:
        warehouse = warehouse_in(root / "two-judges-wh")
        load_bundle(bundle(root / "hand", hand_bundle_tables()), warehouse)
        added = append_bundle(bundle(root / "second", second_judges_answers("second")), warehouse)
        assert added.added["judgments"] == len(hand_bundle_tables()["judgments"])  # new keys
        dbt_build(warehouse, BY_JUDGE, CAUTIOUS)
        return warehouse

    return _template(build_once(tmp_path_factory, "hand-two-judges", build), _unchanged_templates)


@pytest.fixture(scope="session")
def hand_two_judges_second_official(
    tmp_path_factory, hand_two_judges, _unchanged_templates
) -> Path:
    """A copy of `hand_two_judges` rebuilt (BY_JUDGE) with the second judge named official."""

    def build(root: Path) -> Path:
        rebuilt = copy_warehouse(hand_two_judges, root / "second-official-wh")
        dbt_build(rebuilt, BY_JUDGE, (*CAUTIOUS, "--vars", "{official_judge: second}"))
        return rebuilt

    built = build_once(tmp_path_factory, "hand-two-judges-second-official", build)
    return _template(built, _unchanged_templates)
