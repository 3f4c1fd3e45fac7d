"""Asset metadata in a real materialisation (issue 13): a second copy of the hand world's evidence
appended to its published warehouse through the `import_and_build` job (import, dbt build,
publish, report), then what each asset says."""

from __future__ import annotations

import re

import dagster as dg
import pytest

from dagster_defs.definitions import defs
from ingestion.bundle.format import write_bundle
from ingestion.paths import PROJECT_ROOT
from reporting.fingerprints import mart_fingerprints
from tests.helpers import copy_warehouse, query, run_cli
from tests.worlds.hand import hand_bundle_tables

pytestmark = pytest.mark.dbt  # import_and_build runs dbt through Dagster

# Hand-counted from tests/worlds/hand.py: 2 generators x (7 + 2 questions) x 2 languages.
RECORDS = 36
# One null answer: m2 on cA-en q1.
MISSING = 1
# Answered but invalid: m1 cA-en q3 (its parent q2 is no); m2 cA-en q2 and q3 (below the
# missing q1), q5 (parents q1 and q4), q6 and q7 (under q4, answered no).
MASKED = 6
# a dbt test with a parent that reads evidence (fct_question_records) and one that does not
# (int_question_edges)
MIXED_TEST = "test.qct2i.assert_valid_children_have_valid_yes_parents"


@pytest.fixture(scope="module")
def job_run(hand_published, tmp_path_factory):
    """The import asset's `append` config through the `import_and_build` job, on a copy of the
    session's published hand warehouse: a copy of its evidence under new model ids (`m1-v2`,
    `m2-v2`) appended, built, published and reported. (One job run for every test here: an
    import into an empty warehouse is the demo job's, tests/dagster_defs/test_definitions.py.)"""
    root = tmp_path_factory.mktemp("metadata")
    tables = hand_bundle_tables()
    for name in ("judgments", "transcriptions"):
        for row in tables[name]:
            row["model_id"] += "-v2"
    write_bundle(root / "v2", tables)
    warehouse = copy_warehouse(hand_published, root, "qct2i.duckdb")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("QCT2I_WAREHOUSE", str(warehouse))
        config = {"folder": str(root / "v2"), "append": True}
        result = (
            defs()
            .resolve_job_def("import_and_build")
            .execute_in_process(run_config={"ops": {"import_bundle": {"config": config}}})
        )
    assert result.success
    return warehouse, result


@pytest.fixture(scope="module")
def run(job_run):
    """(the warehouse, each materialised asset's metadata by its key)."""
    warehouse, result = job_run
    materialised = {
        e.asset_key.to_user_string(): e.event_specific_data.materialization.metadata
        for e in result.get_asset_materialization_events()
    }
    return warehouse, materialised


def test_the_dbt_invocation_folder_is_removed_after_a_published_build(job_run):
    """dagster-dbt gives each `dbt.cli` call a folder under the project's target/ named after
    the op and the run (4-14 MB) and leaves it there; one per build piled up under a deployment
    that takes drops all day. A published build removes its own."""
    _, result = job_run
    left = list((PROJECT_ROOT / "target").glob(f"qct2i_dbt_models-{result.run_id[:7]}-*"))
    assert left == []


def test_an_incremental_build_runs_no_node_that_reads_no_evidence(job_run):
    """As `qct2i build` (`dbt_selection`), the append's incremental build leaves the nodes that
    read no evidence standing: the benchmark's staging tests are not evaluated again, the
    evidence's are, and so is a test with a parent on each side. Guards against an exclusion that
    does not reach dbt, or that also drops such a test (dbt's eager exclusion would)."""
    _, result = job_run
    evaluated = {e.check_name for e in result.get_asset_check_evaluations()}
    assert "unique_stg_prompts_prompt_id" not in evaluated
    assert "not_null_stg_judgments_judge_id" in evaluated
    # dagster-dbt reports a test with parents in two assets as an observation, not a check
    observed = {
        e.event_specific_data.asset_observation.metadata["unique_id"].value
        for e in result.get_asset_observation_events()
    }
    assert MIXED_TEST in observed


def test_every_raw_and_mart_asset_carries_its_row_count(run):
    warehouse, metadata = run
    assert metadata["raw/judgments"]["rows_added"].value == RECORDS  # the appended copy
    assert metadata["raw/judgments"]["dagster/row_count"].value == 2 * RECORDS
    assert metadata["raw/prompts"]["dagster/row_count"].value == 4
    marts = [key for key in metadata if key.startswith("marts/")]
    published = {
        r[0]
        for r in query(
            warehouse,
            "select table_name from information_schema.tables where table_schema = 'marts'",
        )
    }
    assert {key.removeprefix("marts/") for key in marts} == published
    for key in marts:
        (rows,) = query(warehouse, f"select count(*) from {key.replace('/', '.')}")[0]
        assert metadata[key]["dagster/row_count"].value == rows, key
    assert metadata["marts/fct_question_records"]["dagster/row_count"].value == 2 * RECORDS
    assert metadata["marts/fct_hcq_leaderboard"]["dagster/row_count"].value == 4 * 4  # x scopes


def test_the_question_records_count_missing_and_masked_judgments(run):
    _, metadata = run
    records = metadata["marts/fct_question_records"]
    assert records["judgments_missing"].value == 2 * MISSING  # m2's and m2-v2's
    assert records["judgments_masked"].value == 2 * MASKED


def test_the_leaderboard_asset_shows_the_leaderboard_as_markdown(run):
    _, metadata = run
    board = metadata["marts/fct_hcq_leaderboard"]["leaderboard"]
    assert isinstance(board, dg.MarkdownMetadataValue)
    assert "**HCQ leaderboard: bilingual**" in board.value
    # (72 + 96) / 2, the hand world's bilingual total, for m1 and its copy (tied: any rank)
    for model in ("m1", "m1-v2"):
        assert re.search(rf"\| \d \| {re.escape(model)} \| 84\.00 \|", board.value), board.value
        assert re.search(rf"\| \d \| {re.escape(model)} \| 72\.00 \|", board.value)  # en


def test_the_report_asset_wrote_the_file_it_names(run):
    warehouse, metadata = run
    report = metadata["report"]
    path = warehouse.parent / "report.html"
    assert report["path"].value == str(path)
    assert report["url"].value == path.as_uri()
    assert path.stat().st_size == report["bytes"].value
    assert 'data-chart="leaderboard-bilingual"' in path.read_text()


@pytest.mark.e2e  # `qct2i build --full` through the console script
def test_the_append_is_built_incrementally_and_equals_a_full_build(run, tmp_path):
    """The dbt assets plan their build as `qct2i build` does (issue 33): the hand warehouse was
    published by `qct2i build`, which recorded its inputs, so the append's build rebuilds the two
    new generators only, says so on every mart (on the three that read no evidence, that they
    stand as built), and records its own inputs for the next build;
    its marts are those of a full build of the same evidence, byte for byte. Guards against a
    Dagster build that rebuilds everything, keeps no record, or publishes marts that a full build
    would not give."""
    warehouse, metadata = run
    expected = (
        "incremental build (2 of 4 generators changed): per-generator models rebuild m1-v2, m2-v2"
    )
    stood = f"{expected}; stands as built (reads no evidence, not rebuilt)"
    builds = {key: metadata[key]["build"].value for key in metadata if key.startswith("marts/")}
    # by hand: the marts over the question graphs and the attribution alone read no evidence
    standing = {"marts/agg_dsg_atlas", "marts/agg_tag_set_frequencies"}
    standing |= {"marts/fct_attribution_agreement"}
    assert {key for key, build in builds.items() if build == stood} == standing
    assert {build for key, build in builds.items() if key not in standing} == {expected}
    assert query(warehouse, "select count(*) > 0 from build_state.inputs") == [(True,)]
    full = copy_warehouse(warehouse, tmp_path, "qct2i.duckdb")
    built = run_cli(["build", "--full"], full)
    assert built.returncode == 0, built.stderr[-3000:]
    assert mart_fingerprints(full) == mart_fingerprints(warehouse)


def test_a_subset_run_keeps_no_record_so_the_next_build_is_full(hand_published, tmp_path):
    """A run of some dbt assets (one staging model, as picked in the UI) builds those and
    publishes without a record of inputs, so the next build cannot take models it did not
    rebuild for built from the current evidence. Guards against a subset run recording inputs as
    a whole build would."""
    warehouse = copy_warehouse(hand_published, tmp_path, "qct2i.duckdb")
    assert query(warehouse, "select count(*) > 0 from build_state.inputs") == [(True,)]
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("QCT2I_WAREHOUSE", str(warehouse))
        job = defs().resolve_implicit_global_asset_job_def()
        result = job.execute_in_process(asset_selection=[dg.AssetKey(["staging", "stg_prompts"])])
    assert result.success
    schemas = "select count(*) from information_schema.schemata where schema_name = 'build_state'"
    assert query(warehouse, schemas) == [(0,)]


def test_a_refused_append_fails_the_run_with_the_problems(hand_published, tmp_path):
    tables = hand_bundle_tables()
    tables["judgments"][0]["p_yes"] = 0.5  # contradicts the stored 0.9 / 0.1 / null
    write_bundle(tmp_path / "changed", tables)
    warehouse = copy_warehouse(hand_published, tmp_path, "qct2i.duckdb")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("QCT2I_WAREHOUSE", str(warehouse))
        job = defs().resolve_job_def("import_and_build")
        config = {"folder": str(tmp_path / "changed"), "append": True}
        with pytest.raises(dg.Failure, match=r"judgments.jsonl:1: judgment \(prompt_id"):
            job.execute_in_process(run_config={"ops": {"import_bundle": {"config": config}}})


def test_a_second_build_of_a_working_copy_reuses_its_dbt_parse(hand_published, tmp_path):
    """Each Dagster build of a warehouse seeds dbt with the parse its previous build left
    (`saved_parse`), so only the first parses the project. Guards against the build dagster-dbt
    seeds with the project's own `target/partial_parse.msgpack`, made for another warehouse path,
    which made dbt parse every file on every build ("profile has changed")."""
    warehouse = copy_warehouse(hand_published, tmp_path, "qct2i.duckdb")
    parses = []
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("QCT2I_WAREHOUSE", str(warehouse))
        patch.setenv("DBT_LOG_LEVEL_FILE", "debug")  # dbt's default; tests/conftest.py turns it off
        job = defs().resolve_implicit_global_asset_job_def()
        for _ in range(2):
            instance = dg.DagsterInstance.ephemeral()
            result = job.execute_in_process(
                asset_selection=[dg.AssetKey(["staging", "stg_prompts"])], instance=instance
            )
            assert result.success
            logs = [entry.user_message for entry in instance.all_logs(result.run_id)]
            parses += [m for m in logs if m.startswith("dbt parse:")]
    first, second = parses
    # a working path dbt has never seen (tmp_path): the whole project, whatever dbt was seeded with
    assert first.startswith("dbt parse: the whole project ("), first
    assert second == (
        "dbt parse: the saved parse of this working copy reused "
        "(0 files deleted, 0 added, 0 changed)"
    )
