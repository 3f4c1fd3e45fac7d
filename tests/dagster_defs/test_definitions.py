"""The Dagster definitions: one lineage graph, stable asset keys, and a real end-to-end run."""

from __future__ import annotations

import os
from pathlib import Path

import dagster as dg

from dagster_defs.definitions import defs
from tests.helpers import query

SNAPSHOT = Path(__file__).with_name("asset_keys.snapshot.txt")


def asset_graph():
    return defs.resolve_asset_graph()


def test_asset_keys_match_the_snapshot():
    """A renamed or dropped asset shows up here as a diff (UPDATE_SNAPSHOTS=1 rewrites it)."""
    keys = sorted(key.to_user_string() for key in asset_graph().get_all_asset_keys())
    if os.environ.get("UPDATE_SNAPSHOTS"):
        SNAPSHOT.write_text("\n".join(keys) + "\n")
    assert keys == SNAPSHOT.read_text().split()


def test_lineage_runs_simulator_to_raw_to_staging_to_marts():
    graph = asset_graph()

    def parents(key: str) -> set[str]:
        node = graph.get(dg.AssetKey.from_user_string(key))
        return {k.to_user_string() for k in node.parent_keys}

    assert "simulated_bundle" in parents("raw/judgments")
    assert "raw/judgments" in parents("staging/stg_judgments")
    assert "staging/stg_judgments" in parents("intermediate/int_question_validity")
    assert "intermediate/int_hcq_group_views" in parents("marts/fct_hcq_leaderboard")


def test_dbt_tests_are_asset_checks():
    checks = {
        key.name
        for key in asset_graph().asset_check_keys
        if key.asset_key == dg.AssetKey(["marts", "fct_hcq_leaderboard"])
    }
    assert any(name.startswith("unique_fct_hcq_leaderboard") for name in checks)


def test_demo_job_materialises_end_to_end(tmp_path, monkeypatch):
    warehouse = tmp_path / "qct2i.duckdb"
    monkeypatch.setenv("QCT2I_WAREHOUSE", str(warehouse))
    bundle = tmp_path / "bundle"
    result = defs.get_job_def("demo").execute_in_process(
        run_config={
            "ops": {
                "simulated_bundle": {"config": {"concepts": 24, "seed": 3, "out_dir": str(bundle)}},
                "import_bundle": {"config": {"folder": str(bundle)}},
            }
        }
    )
    assert result.success
    materialized = {e.asset_key.to_user_string() for e in result.get_asset_materialization_events()}
    assert {"simulated_bundle", "raw/judgments", "marts/fct_hcq_leaderboard"} <= materialized
    n_judgment_lines = sum(1 for _ in (bundle / "judgments.jsonl").open())
    assert query(warehouse, "select count(*) from raw.judgments") == [(n_judgment_lines,)]
    scopes = query(
        warehouse,
        "select language_scope, count(*) from marts.fct_hcq_leaderboard group by 1 order by 1",
    )
    assert scopes == [("bilingual", 13), ("en", 13), ("pooled", 13), ("zh", 13)]
    check_results = [
        e.event_specific_data
        for e in result.all_events
        if e.event_type_value == "ASSET_CHECK_EVALUATION"
    ]
    assert check_results and all(c.passed for c in check_results)
