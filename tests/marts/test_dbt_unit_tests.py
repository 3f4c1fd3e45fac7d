"""dbt's unit tests (the `unit_tests:` of the model yml files) run here, once per `make test`:
a warehouse build excludes them (`ingestion.paths.DBT_BUILD_EXCLUDES`), since they check the SQL
on fixed fixtures whatever the evidence. dbt needs the tested models' parents to exist, so they
run on a copy of the session's hand warehouse."""

from __future__ import annotations

import re

import yaml

from ingestion.paths import PROJECT_ROOT
from qct2i.dbt_forkserver import run_forked
from qct2i.dbt_runner import run_dbt
from tests.helpers import copy_warehouse, require_tier


def declared_unit_tests() -> set[str]:
    """Every unit test's name, read from the yml files themselves."""
    names = set()
    for path in (PROJECT_ROOT / "models").rglob("*.yml"):
        for test in (yaml.safe_load(path.read_text(encoding="utf-8")) or {}).get("unit_tests", []):
            names.add(test["name"])
    return names


def test_every_dbt_unit_test_runs_and_passes(hand_published, tmp_path):
    require_tier("runs dbt", "dbt")
    declared = declared_unit_tests()
    assert len(declared) >= 7  # the unit tests of the scoring and structure models
    copy = copy_warehouse(hand_published, tmp_path)
    result = run_dbt(
        "test",
        copy,
        select=("test_type:unit",),
        target_path=tmp_path / "target",
        launcher=run_forked,
    )
    passed = set(re.findall(r"PASS \S+::(\S+) ", result.stdout))
    assert passed == declared, result.stdout[-3000:]
    assert re.search(rf"PASS={len(declared)}\b", result.stdout), result.stdout[-3000:]


def test_a_warehouse_build_runs_no_unit_test(hand_published, tmp_path):
    """A build of a model with unit tests runs the model and its data tests but not its unit
    test, which `dbt test` of the same model does run."""
    copy = copy_warehouse(hand_published, tmp_path)
    target = tmp_path / "target"
    selected = ("int_question_ancestors",)
    tested = run_dbt("test", copy, select=selected, target_path=target, launcher=run_forked)
    assert "START unit_test int_question_ancestors::ancestors_of_a_chain_and_a_diamond" in (
        tested.stdout
    )
    built = run_dbt("build", copy, select=selected, target_path=target, launcher=run_forked)
    assert "START sql table model intermediate.int_question_ancestors" in built.stdout
    assert "START test" in built.stdout  # its data tests
    assert "unit_test" not in built.stdout
