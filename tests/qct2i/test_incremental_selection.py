"""Which dbt nodes an incremental `qct2i build` runs (`ingestion.store.build_inputs.dbt_selection`):
those downstream of the evidence, never one that could change. dbt itself lists the selection
(`dbt ls`, the parse of the tests' other runs reused); the expected set is worked out here from
the parsed graph, by walking each node's parents to the raw sources, without dbt's selector."""

from __future__ import annotations

import json

import yaml

from ingestion.paths import PROJECT_ROOT
from ingestion.store.build_inputs import (
    BENCHMARK_SOURCES,
    EVIDENCE_SOURCES,
    BuildPlan,
    dbt_exclusion,
    dbt_selection,
    standing_nodes,
)
from qct2i.dbt_forkserver import run_forked
from qct2i.dbt_runner import run_dbt
from tests.helpers import WAREHOUSE_NAME, require_tier

INCREMENTAL = BuildPlan(False, ("newcomer",), "1 of 14 generators changed")
FULL = BuildPlan(True, (), "--full")
INCREMENTAL_SELECTION = dbt_selection(INCREMENTAL)


def test_every_raw_source_is_either_benchmark_or_evidence():
    """A raw table added to the project but to neither list would leave its models out of every
    incremental build, stale; one in both is a contradiction."""
    sources = yaml.safe_load((PROJECT_ROOT / "models/staging/_sources.yml").read_text())
    (raw,) = [source for source in sources["sources"] if source["name"] == "raw"]
    tables = [table["name"] for table in raw["tables"]]
    assert sorted(tables) == sorted(BENCHMARK_SOURCES + EVIDENCE_SOURCES)
    assert not set(BENCHMARK_SOURCES) & set(EVIDENCE_SOURCES)


def test_a_full_build_selects_every_node():
    assert dbt_selection(FULL) == ()


def _listed(tmp_path, select=INCREMENTAL_SELECTION, extra=()) -> tuple[set[str], dict]:
    """(the unique ids dbt lists for a selection, by default an incremental build's; the parsed
    manifest)."""
    require_tier("runs dbt", "dbt", "e2e")
    target = tmp_path / "target"
    listed = run_dbt(
        "ls",
        tmp_path / WAREHOUSE_NAME,  # never opened: the name keys the saved parse
        select=select,
        target_path=target,
        extra=("--output", "json", "--output-keys", "unique_id", "--quiet", "--write-json", *extra),
        launcher=run_forked,
    )
    ids = {json.loads(line)["unique_id"] for line in listed.stdout.splitlines() if line.strip()}
    return ids, json.loads((target / "manifest.json").read_text())


def _reads_evidence(manifest: dict) -> set[str]:
    """Every source, model, seed and test with a raw table other than the benchmark's among its
    ancestors (or itself), by walking `depends_on` from each node."""
    parents = {
        uid: node.get("depends_on", {}).get("nodes", []) for uid, node in manifest["nodes"].items()
    }
    evidence = {
        uid
        for uid, source in manifest["sources"].items()
        if source["name"] not in BENCHMARK_SOURCES
    }
    memo: dict[str, bool] = {}

    def reads(uid: str) -> bool:
        if uid not in memo:
            memo[uid] = uid in evidence or any(reads(p) for p in parents.get(uid, ()))
        return memo[uid]

    return {uid for uid in [*manifest["nodes"], *manifest["sources"]] if reads(uid)}


def test_an_incremental_build_runs_every_node_that_reads_evidence_and_no_other(tmp_path):
    listed, manifest = _listed(tmp_path)
    built = ("source.", "seed.", "model.", "test.")  # what `dbt build` runs (unit tests aside)
    listed = {uid for uid in listed if uid.startswith(built)}
    assert listed == _reads_evidence(manifest)
    # by hand: the benchmark's and the seeds' nodes stand, the evidence's run, down to the marts
    for standing in (
        "seed.qct2i.capabilities",
        "model.qct2i.stg_prompts",
        "model.qct2i.int_question_graph",
        "model.qct2i.metricflow_time_spine",
    ):
        assert standing not in listed
    for running in (
        "source.qct2i.raw.judgments",
        "model.qct2i.stg_judgments",
        "model.qct2i.int_prompt_sufficient_stats",
        "model.qct2i.int_subset_validation",
        "model.qct2i.fct_hcq_leaderboard",
        "model.qct2i.agg_router_summary",
    ):
        assert running in listed
    tests = {uid for uid in listed if uid.startswith("test.")}
    assert any("stg_judgments" in uid for uid in tests)
    assert not any(uid.split(".")[2].endswith("_stg_prompts_prompt_id") for uid in tests)


def test_the_standing_nodes_excluded_from_every_node_leave_what_the_selection_selects(tmp_path):
    """Dagster's dbt asset cannot narrow dagster-dbt's `--select fqn:*`, only exclude from it
    (`dbt_exclusion` of the `standing_nodes`). dbt's own selector must then run what
    an incremental `qct2i build` runs: the same nodes, the tests with a standing parent and one
    that reads evidence among them (eager exclusion would drop those). Guards against a Dagster
    build that skips a test or reruns a node that stands."""
    incremental, manifest = _listed(tmp_path / "incremental")
    standing = standing_nodes(manifest)
    assert "model.qct2i.stg_prompts" in standing  # by hand: reads the benchmark only
    assert not any("stg_judgments" in node for node in standing)
    exclusion = dbt_exclusion(manifest, standing)
    assert "fqn:qct2i.staging.stg_prompts" in exclusion[1].split()
    as_excluded, _ = _listed(tmp_path / "excluded", select=("fqn:*",), extra=exclusion)
    # the nodes themselves: `dbt ls` of the selection also names its sources and exposures
    built = ("seed.", "model.", "snapshot.", "test.")
    assert {uid for uid in as_excluded if uid.startswith(built)} == {
        uid for uid in incremental if uid.startswith(built)
    }
    # parents: fct_question_records (reads evidence) and int_question_edges (stands)
    mixed = "test.qct2i.assert_valid_children_have_valid_yes_parents"
    assert mixed in as_excluded and "model.qct2i.int_question_edges" not in as_excluded
