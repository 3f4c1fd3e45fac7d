"""The Dagster definitions: one lineage graph grouped by area, stable asset keys, a lazy load, and a
real end-to-end run with dbt vars from run config."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import dagster as dg
import pytest
import yaml

from dagster_defs import definitions, distributed
from dagster_defs.assets.dbt import DbtBuildConfig, dbt_build_args
from dagster_defs.definitions import defs
from dagster_defs.project import dbt_project, manifest_is_stale
from ingestion.backends.drivers.shards import SHARDS_ENV
from ingestion.paths import PROJECT_ROOT, SEEDS_DIR
from tests.helpers import query

pytestmark = pytest.mark.dbt  # `defs()` parses the dbt project; the demo job builds it

SNAPSHOT = Path(__file__).with_name("asset_keys.snapshot.txt")
AREAS = {
    "scoring",
    "failures",
    "structure",
    "reliability",
    "routing",
    "subsets",
    "judges",
    "evidence",
}
AREA_LAYERS = ("intermediate", "marts")  # staging and semantic (the time spine) are layer groups


@pytest.fixture(scope="module")
def loaded() -> dg.Definitions:
    return defs()


@pytest.fixture(scope="module")
def graph(loaded):
    return loaded.resolve_asset_graph()


def _groups(graph) -> dict[str, str]:
    return {k.to_user_string(): graph.get(k).group_name for k in graph.get_all_asset_keys()}


def test_asset_keys_and_groups_match_the_snapshot(graph):
    """A renamed, dropped or regrouped asset shows up here as a diff (UPDATE_SNAPSHOTS=1 rewrites
    it). One line per asset: its group, then its key, grouped by group."""
    lines = [f"{group:<12} {key}" for key, group in sorted(_groups(graph).items(), key=_by_group)]
    if os.environ.get("UPDATE_SNAPSHOTS"):
        SNAPSHOT.write_text("\n".join(lines) + "\n")
    assert lines == SNAPSHOT.read_text().splitlines()


def _by_group(item: tuple[str, str]) -> tuple[str, str]:
    key, group = item
    return group, key


def test_every_model_is_grouped_by_the_folder_it_lives_in(graph):
    """Expected groups read from the model files on disk: models/<layer>/<area>/<name>.sql|py
    belongs to <area> for intermediate and marts, to <layer> for staging."""
    groups = _groups(graph)
    expected = {}
    for path in (PROJECT_ROOT / "models").rglob("*"):
        if path.suffix not in (".sql", ".py"):
            continue
        layer, *folders = path.relative_to(PROJECT_ROOT / "models").parts[:-1]
        expected[f"{layer}/{path.stem}"] = folders[0] if folders else layer
    assert expected and {key: groups.get(key) for key in expected} == expected
    intermediate_and_marts = {g for k, g in expected.items() if k.split("/")[0] in AREA_LAYERS}
    assert intermediate_and_marts == AREAS  # no `marts` or `intermediate` group
    assert groups["seeds/generators"] == "seeds" and groups["raw/judgments"] == "raw"


def test_lineage_runs_simulator_and_gpu_assets_to_raw_to_staging_to_marts(graph):
    def parents(key: str) -> set[str]:
        node = graph.get(dg.AssetKey.from_user_string(key))
        return {k.to_user_string() for k in node.parent_keys}

    assert parents("raw/judgments") == {"simulated_bundle", "gpu/judged_images"}
    assert parents("raw/images") == {"simulated_bundle", "gpu/generated_images"}
    assert parents("raw/prompts") == {"simulated_bundle"}
    assert "gpu/generated_images" in parents("gpu/judged_images")
    assert "raw/judgments" in parents("staging/stg_judgments")
    assert "staging/stg_judgments" in parents("intermediate/int_official_judgments")
    assert "intermediate/int_official_judgments" in parents("intermediate/int_question_validity")
    assert "intermediate/int_hcq_group_views" in parents("marts/fct_hcq_leaderboard")


def test_jobs_run_every_asset_but_the_gpu_ones(loaded, graph):
    """The GPU lineage edges add nothing to the jobs: `demo` runs everything outside group gpu,
    `import_and_build` the same less the simulator."""
    not_gpu = {k for k, g in _groups(graph).items() if g != "gpu"}

    def selected(job: str) -> set[str]:
        keys = loaded.resolve_job_def(job).asset_layer.selected_asset_keys
        return {k.to_user_string() for k in keys}

    assert selected("demo") == not_gpu
    assert selected("import_and_build") == not_gpu - {"simulated_bundle"}


def test_dbt_tests_are_asset_checks(graph):
    checks = {
        key.name
        for key in graph.asset_check_keys
        if key.asset_key == dg.AssetKey(["marts", "fct_hcq_leaderboard"])
    }
    assert any(name.startswith("unique_fct_hcq_leaderboard") for name in checks)


def test_every_dbt_test_of_a_mart_is_an_asset_check_on_that_mart(graph):
    """Issue 33: the UI shows which dbt test refused a build, on the mart it tests. Guards
    against tests lost as checks (dagster-dbt's `enable_asset_checks` off) or attached to another
    asset; the expected pairs are read from dbt's manifest as JSON, not through dagster-dbt."""
    manifest = json.loads(dbt_project().manifest_path.read_text(encoding="utf-8"))
    nodes = manifest["nodes"].values()
    marts = {
        node["unique_id"]: node["name"]
        for node in nodes
        if node["resource_type"] == "model" and node["fqn"][1] == "marts"
    }
    expected = {
        (marts[node["attached_node"]], node["name"])
        for node in nodes
        if node["resource_type"] == "test" and node.get("attached_node") in marts
    }
    checks = {
        (key.asset_key.path[-1], key.name)
        for key in graph.asset_check_keys
        if key.asset_key.path[0] == "marts"
    }
    assert expected and expected <= checks


def test_dbt_vars_from_run_config_become_one_vars_argument():
    build = ["build", "--no-quiet", "--exclude-resource-type", "unit_test"]
    assert dbt_build_args(DbtBuildConfig()) == build
    args = dbt_build_args(DbtBuildConfig(vars={"router_seed": 7, "bilingual_languages": ["en"]}))
    assert args[:5] == [*build, "--vars"]
    assert len(args) == 6
    assert yaml.safe_load(args[5]) == {"router_seed": 7, "bilingual_languages": ["en"]}


def test_importing_the_definitions_runs_no_dbt():
    """Even under `dagster dev` (where loading re-parses), the import alone must not call dbt:
    every way dagster-dbt runs it raises in this child process."""
    code = (
        "import dagster_dbt.dbt_project as p, dagster_dbt.core.resource as r\n"
        "def refuse(*a, **k): raise SystemExit('dbt ran at import')\n"
        "p.DagsterDbtProjectPreparer.prepare = refuse\n"
        "r.DbtCliResource.cli = refuse\n"
        "import dagster_defs.definitions\n"
    )
    env = {**os.environ, "DAGSTER_IS_DEV_CLI": "1"}
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=PROJECT_ROOT, env=env, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr[-2000:]


def test_importing_reads_neither_the_generator_seed_nor_the_shard_count():
    """The GPU assets' partitions come from seeds/generators.csv and QCT2I_GENERATION_SHARDS:
    in a child process where opening any file under seeds/ raises and the shard count is garbage,
    every definitions module still imports."""
    code = (
        "import sys\n"
        f"SEEDS = {str(SEEDS_DIR)!r}\n"
        "def no_seeds(event, args):\n"
        "    if event == 'open' and isinstance(args[0], str) and args[0].startswith(SEEDS):\n"
        "        raise PermissionError(f'{args[0]} read at import')\n"
        "sys.addaudithook(no_seeds)\n"
        "import dagster_defs.definitions, dagster_defs.distributed\n"
        "import dagster_defs.assets.generation, dagster_defs.assets.evidence\n"
        "print('imported')\n"
        "open(SEEDS + '/generators.csv')  # and the hook does refuse a read of the seed\n"
    )
    env = {**os.environ, SHARDS_ENV: "not-a-number"}
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=PROJECT_ROOT, env=env, capture_output=True, text=True
    )
    assert result.stdout == "imported\n", result.stderr[-2000:]
    assert result.returncode == 1
    assert result.stderr.strip().splitlines()[-1] == (
        f"PermissionError: {SEEDS_DIR / 'generators.csv'} read at import"
    )


@pytest.mark.parametrize("module", [definitions, distributed])
def test_loading_with_a_bad_shard_count_fails_naming_the_variable(module, monkeypatch):
    """The shard count is read when the definitions load (before dbt is prepared)."""
    monkeypatch.setenv(SHARDS_ENV, "not-a-number")
    message = f"{SHARDS_ENV}='not-a-number': the shard count must be a positive integer"
    with pytest.raises(ValueError, match=re.escape(message)):
        module.defs()


def test_the_manifest_is_stale_when_missing_or_older_than_a_parsed_file(tmp_path):
    (tmp_path / "dbt_project.yml").write_text("name: x\n")
    (tmp_path / "models").mkdir()
    model = tmp_path / "models" / "m.sql"
    model.write_text("select 1")
    manifest = tmp_path / "target" / "manifest.json"

    class Project:  # manifest_is_stale reads these two attributes only
        project_dir = tmp_path
        manifest_path = manifest

    assert manifest_is_stale(Project)  # missing
    manifest.parent.mkdir()
    manifest.write_text("{}")
    os.utime(model, (1_000, 1_000))
    os.utime(tmp_path / "dbt_project.yml", (1_000, 1_000))
    os.utime(manifest, (2_000, 2_000))
    assert not manifest_is_stale(Project)
    os.utime(model, (3_000, 3_000))
    assert manifest_is_stale(Project)


def test_the_dbt_project_is_the_repository_root():
    assert dbt_project().manifest_path == PROJECT_ROOT / "target" / "manifest.json"


def test_demo_job_materialises_end_to_end_with_dbt_vars_from_run_config(
    loaded, tmp_path, monkeypatch
):
    warehouse = tmp_path / "qct2i.duckdb"
    monkeypatch.setenv("QCT2I_WAREHOUSE", str(warehouse))
    # a quiet dbt in the environment must not silence the events the materialisations come from
    monkeypatch.setenv("DBT_QUIET", "True")
    bundle = tmp_path / "bundle"
    draws = 37  # not a default of any draws var (dbt_project.yml)
    result = loaded.resolve_job_def("demo").execute_in_process(
        run_config={
            "ops": {
                "simulated_bundle": {"config": {"concepts": 24, "seed": 3, "out_dir": str(bundle)}},
                "import_bundle": {"config": {"folder": str(bundle)}},
                "qct2i_dbt_models": {"config": {"vars": {"structure_bootstrap_draws": draws}}},
            }
        }
    )
    assert result.success
    materialized = {e.asset_key.to_user_string() for e in result.get_asset_materialization_events()}
    assert {"simulated_bundle", "raw/judgments", "marts/fct_hcq_leaderboard"} <= materialized
    assert "report" in materialized and (tmp_path / "report.html").exists()  # downstream of dbt
    n_judgment_lines = sum(1 for _ in (bundle / "judgments.jsonl").open())
    assert query(warehouse, "select count(*) from raw.judgments") == [(n_judgment_lines,)]
    scopes = query(
        warehouse,
        "select language_scope, count(*) from marts.fct_hcq_leaderboard group by 1 order by 1",
    )
    assert scopes == [("bilingual", 13), ("en", 13), ("pooled", 13), ("zh", 13)]
    # the run-config var reached dbt: the coupling mart reports the draws it was built with
    assert query(warehouse, "select distinct n_draws from marts.fct_coupling") == [(draws,)]
    check_results = [
        e.event_specific_data
        for e in result.all_events
        if e.event_type_value == "ASSET_CHECK_EVALUATION"
    ]
    assert check_results and all(c.passed for c in check_results)
    # the run wrote the working copy and published it whole: a stamp, no working copy left,
    # and the writer pool on both writing assets
    assert len(query(warehouse, "select build_id from main.build_id")) == 1
    assert not (tmp_path / "qct2i.working.duckdb").exists()
    pools = {
        node.name: node.definition.pool
        for node in loaded.resolve_job_def("demo").graph.node_dict.values()
    }
    assert pools["import_bundle"] == pools["qct2i_dbt_models"] == "warehouse_writer"
