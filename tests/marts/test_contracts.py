"""Every mart is SQL with an enforced contract and a described, typed column for every output
(the analyst-facing promise of CONTRACTS.md); Python stays in intermediate adapters."""

from __future__ import annotations

import json

import pytest

from qct2i.dbt_runner import run_dbt


@pytest.fixture(scope="module")
def mart_nodes(tmp_path_factory) -> list[dict]:
    target = tmp_path_factory.mktemp("parse")
    run_dbt("parse", target / "unused.duckdb", target_path=target, extra=("--write-json",))
    manifest = json.loads((target / "manifest.json").read_text())
    return [
        node
        for node in manifest["nodes"].values()
        if node["resource_type"] == "model" and node["fqn"][1] == "marts"
    ]


def test_every_mart_is_sql_with_an_enforced_contract(mart_nodes):
    assert len(mart_nodes) >= 20  # the marts of CONTRACTS.md
    assert [n["name"] for n in mart_nodes if n["language"] != "sql"] == []
    assert [n["name"] for n in mart_nodes if not n["config"]["contract"]["enforced"]] == []


def test_every_mart_and_column_is_described_and_typed(mart_nodes):
    missing = [n["name"] for n in mart_nodes if not n["description"].strip()]
    for node in mart_nodes:
        for name, column in node["columns"].items():
            if not column.get("description", "").strip() or not column.get("data_type"):
                missing.append(f"{node['name']}.{name}")
    assert missing == []


def test_the_contract_marts_keep_their_public_columns(mart_nodes):
    """A sample of CONTRACTS.md's stable names (renaming one needs a migration note)."""
    columns = {n["name"]: set(n["columns"]) for n in mart_nodes}
    assert {"model_id", "language_scope", "hcq_total", "rank", "n_groups"} <= columns[
        "fct_hcq_leaderboard"
    ]
    assert {"router", "reference_model_id", "diff", "ci_lo", "ci_hi", "non_inferior"} <= columns[
        "fct_router_paired"
    ]
    assert {"language", "capability", "variance_ratio", "n_prompts", "scale"} <= columns[
        "fct_aggregation_robustness"
    ]
