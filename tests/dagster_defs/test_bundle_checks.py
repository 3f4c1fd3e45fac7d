"""The bundle's validation as asset checks on the raw tables (issue 33; dagster_defs/assets/
ingestion.py): the import asset alone, on the hand bundle (tests/worlds/hand.py), into a fresh
warehouse; no dbt build."""

from __future__ import annotations

from pathlib import Path

import dagster as dg
import pytest

from dagster_defs.assets.ingestion import BUNDLE_CHECK, RAW_TABLE_KEYS, import_bundle
from ingestion.bundle.format import TABLES, write_bundle
from tests.worlds.hand import hand_bundle_tables


def _import(bundle: Path, tmp_path: Path, monkeypatch, **config) -> dg.ExecuteInProcessResult:
    monkeypatch.setenv("QCT2I_WAREHOUSE", str(tmp_path / "w.duckdb"))
    return dg.materialize(
        [import_bundle],
        run_config={"ops": {"import_bundle": {"config": {"folder": str(bundle), **config}}}},
        instance=dg.DagsterInstance.ephemeral(),
        raise_on_error=False,
    )


def _checks(result: dg.ExecuteInProcessResult) -> dict[str, tuple[bool, dict]]:
    """Per raw table: the bundle check's outcome and metadata (each table's check once)."""
    found = {}
    for event in result.all_events:
        if event.event_type_value != "ASSET_CHECK_EVALUATION":
            continue
        check = event.asset_check_evaluation_data
        assert check.check_name == BUNDLE_CHECK
        table = check.asset_key.path[-1]
        assert table not in found
        found[table] = (check.passed, {k: v.value for k, v in check.metadata.items()})
    return found


@pytest.fixture()
def broken(tmp_path) -> Path:
    """The hand bundle with one judgment naming a question its prompt lacks."""
    tables = hand_bundle_tables()
    tables["judgments"][2]["question_id"] = "q99"
    write_bundle(tmp_path / "broken", tables, "jsonl")
    return tmp_path / "broken"


def test_a_refused_bundle_fails_the_check_of_the_table_that_holds_the_problem(
    broken, tmp_path, monkeypatch
):
    """Guards against a refusal that shows on no raw table (or on every one), or whose check
    does not name the line; and against a refused import writing the warehouse."""
    result = _import(broken, tmp_path, monkeypatch)
    assert not result.success
    checks = _checks(result)
    assert sorted(checks) == sorted(TABLES)  # every raw table's check reported
    failed = {table for table, (passed, _) in checks.items() if not passed}
    assert failed == {"judgments"}
    _, metadata = checks["judgments"]
    assert metadata["problems"] == 1
    # the third judgment is the file's third line
    assert "judgments.jsonl:3: no question 'q99'" in metadata["refused"]
    assert not result.get_asset_materialization_events()
    assert not (tmp_path / "w.duckdb").exists()


def test_a_problem_of_the_bundle_as_a_whole_fails_every_tables_check(tmp_path, monkeypatch):
    """Guards against a refusal that names no table's file (the command line) showing as passed
    checks."""
    good = tmp_path / "good"
    write_bundle(good, hand_bundle_tables(), "jsonl")
    result = _import(good, tmp_path, monkeypatch, append=True, replace_models=["nobody"])
    assert not result.success
    checks = _checks(result)
    assert sorted(checks) == sorted(TABLES)
    assert not any(passed for passed, _ in checks.values())
    assert all(metadata["bundle_problems"] == 1 for _, metadata in checks.values())
    assert "(command line): --replace-model nobody" in checks["prompts"][1]["refused"]


def test_a_taken_bundle_passes_every_check_on_its_materialisation(tmp_path, monkeypatch):
    """Guards against checks left unreported (or failed) when the import takes the bundle."""
    good = tmp_path / "good"
    write_bundle(good, hand_bundle_tables(), "jsonl")
    result = _import(good, tmp_path, monkeypatch)
    assert result.success
    checks = _checks(result)
    assert {table: passed for table, (passed, _) in checks.items()} == dict.fromkeys(TABLES, True)
    materialised = {e.asset_key for e in result.get_asset_materialization_events()}
    assert materialised == set(RAW_TABLE_KEYS.values())
