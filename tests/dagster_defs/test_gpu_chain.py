"""The GPU chain runs itself (dagster_defs/gpu_chain.py; docs/deployment.md): one generator
partition drawn by hand, in two prompt shards, then nothing but what Dagster's own machinery
asks for, as the daemon would: the automation conditions evaluated on the instance
(`dg.evaluate_automation_conditions`, with its cursor from tick to tick) and the import sensor's
tick, each requested run executed in process on that instance, until neither asks for more.

The world: a copy of the published hand world (tests/worlds/hand.py), its every prompt and
question written as the GPU bundle beside it (`bundles/gpu`, the chain's default), on the CPU
profile's tiny models: the tiny Stable Diffusion draws, the tiny Qwen3-VL judges "yes" and reads
one text block. One dbt build in all (the import's)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import dagster as dg
import pytest

from dagster_defs.assets.evidence import TRANSCRIBED_IMAGES_KEY
from dagster_defs.assets.generation import (
    GENERATED_IMAGES_KEY,
    JUDGED_IMAGES_KEY,
    generation_assets,
)
from dagster_defs.gpu_chain import (
    CHAIN_ENV,
    RUN_KEY_TAG,
    evaluate_chain_imports,
    gpu_chain_sensors,
)
from dagster_defs.ml_resources import QuestionJudgeResource
from ingestion.store.plans import write_every_prompt
from tests.helpers import copy_warehouse, query
from tests.ingestion.backends.forced_answers import force_answer, force_judge_answer

pytestmark = pytest.mark.dbt  # the chain's import builds the warehouse

GENERATOR = "lens"  # a generator of seeds/generators.csv: a partition of the GPU assets
SHARDS = 2
FOLLOWERS = (JUDGED_IMAGES_KEY, TRANSCRIBED_IMAGES_KEY)


@pytest.fixture(scope="module")
def cpu_models(tiny_sd, tiny_vl, tmp_path_factory) -> Path:
    """QCT2I_TINY_MODELS of the CPU profile: the session's tiny Stable Diffusion, and its tiny
    Qwen3-VL judging every question "yes" and reading one block (a judge with no usable answer
    would leave the generator with no estimate, METHOD 6)."""
    root = tmp_path_factory.mktemp("chain-models")
    (root / "stable_diffusion").symlink_to(tiny_sd)
    shutil.copytree(tiny_vl, root / "qwen3_vl")
    force_judge_answer(root / "qwen3_vl", "yes")
    force_answer(root / "qwen3_vl", '{"blocks": ["x"]}')
    return root


@pytest.fixture()
def world(hand_published, cpu_models, tmp_path, monkeypatch) -> tuple[Path, Path]:
    """(published warehouse, GPU bundle): a copy of the hand world and every prompt of it
    planned into the default GPU bundle, the CPU profile in two shards."""
    warehouse = copy_warehouse(hand_published, tmp_path / "warehouse")
    monkeypatch.setenv("QCT2I_WAREHOUSE", str(warehouse))
    monkeypatch.setenv("QCT2I_ML_PROFILE", "cpu")
    monkeypatch.setenv("QCT2I_TINY_MODELS", str(cpu_models))
    monkeypatch.setenv("QCT2I_GENERATION_SHARDS", str(SHARDS))
    monkeypatch.delenv(CHAIN_ENV, raising=False)
    bundle = warehouse.parent / "bundles" / "gpu"
    write_every_prompt(warehouse, bundle)
    return warehouse, bundle


def _rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def _draw(defs: dg.Definitions, instance: dg.DagsterInstance, shard: int) -> None:
    """The one step by hand: a shard of the generator's partition, with no run config."""
    result = dg.materialize(
        [defs.get_assets_def(GENERATED_IMAGES_KEY)],
        partition_key=dg.MultiPartitionKey({"generator": GENERATOR, "shard": str(shard)}),
        resources=defs.resources,
        instance=instance,
    )
    assert result.success


class Daemon:
    """What the daemon does on each tick, in process: the automation conditions evaluated
    (the `gpu_chain` sensor's work), the import sensor ticked, every requested run executed."""

    def __init__(self, defs: dg.Definitions, instance: dg.DagsterInstance):
        self.defs, self.instance, self.cursor = defs, instance, None
        sensors = {sensor.name: sensor for sensor in defs.sensors}
        self.import_sensor = sensors["gpu_chain_import"]
        self.targeted = sensors["gpu_chain"].asset_selection  # what the daemon evaluates

    def automation(self) -> dict[dg.AssetKey, set]:
        result = dg.evaluate_automation_conditions(
            defs=self.defs,
            instance=self.instance,
            asset_selection=self.targeted,
            cursor=self.cursor,
        )
        self.cursor = result.cursor
        requested = {key: set(result.get_requested_partitions(key)) for key in FOLLOWERS}
        for key, partitions in requested.items():
            for partition in partitions:  # as the daemon launches them: no run config
                run = dg.materialize(
                    [self.defs.get_assets_def(key)],
                    partition_key=partition,
                    resources=self.defs.resources,
                    instance=self.instance,
                )
                assert run.success
        return {key: partitions for key, partitions in requested.items() if partitions}

    def imports(self) -> list[dg.RunRequest]:
        context = dg.build_sensor_context(instance=self.instance)
        requests = list(self.import_sensor.evaluate_tick(context).run_requests or [])
        for request in requests:  # as the daemon launches it: its config, tags and run key
            job = self.defs.resolve_job_def(self.import_sensor.job_name)
            run = job.execute_in_process(
                run_config=request.run_config,
                instance=self.instance,
                tags={**request.tags, RUN_KEY_TAG: request.run_key},
                raise_on_error=False,
            )
            assert run.success
        return requests


def test_one_partitions_generation_leads_to_its_judging_reading_import_and_build(world):
    """Guards against: judging or reading started before every shard of the generation is
    materialised (or never started); the import not following them, importing the wrong bundle
    or another generator's evidence instead of appending, or importing the same judging twice;
    the build not publishing the new generator's rows."""
    from dagster_defs.definitions import defs as load_definitions

    warehouse, bundle = world
    defs = load_definitions()
    instance = dg.DagsterInstance.ephemeral()
    daemon = Daemon(defs, instance)
    before = dict(query(warehouse, "select model_id, count(*) from raw.judgments group by 1"))

    assert daemon.automation() == {}  # the daemon already running: nothing drawn yet
    _draw(defs, instance, 0)
    assert daemon.automation() == {}  # shard 1 is missing: no judging of half the images
    assert daemon.imports() == []
    _draw(defs, instance, 1)
    assert daemon.automation() == {key: {GENERATOR} for key in FOLLOWERS}
    (request,) = daemon.imports()
    assert request.run_config["ops"]["import_bundle"]["config"] == {
        "folder": str(bundle),
        "append": True,
        "replace_models": [GENERATOR],
    }
    assert daemon.automation() == {} and daemon.imports() == []  # settled: nothing twice
    kinds = sorted(run.job_name for run in instance.get_runs())
    assert kinds.count("import_and_build") == 1 and len(kinds) == 5  # 2 shards, judge, read

    # expected from the bundle's plan files, by plain Python: every prompt drawn once, every
    # question of its prompt judged once, every image whose prompt has a text target read once
    prompts = [row["prompt_id"] for row in _rows(bundle / "prompts.jsonl")]
    questions = _rows(bundle / "questions.jsonl")
    per_prompt = {p: sum(q["prompt_id"] == p for q in questions) for p in prompts}
    with_text = {q["prompt_id"] for q in questions if q.get("text_target")}
    images = [row for row in _rows(bundle / "images.jsonl") if row["model_id"] == GENERATOR]
    assert sorted(row["prompt_id"] for row in images) == sorted(prompts)
    counts = dict(query(warehouse, "select model_id, count(*) from raw.judgments group by 1"))
    assert counts == {**before, GENERATOR: sum(per_prompt.values())}
    (read,) = query(
        warehouse, f"select count(*) from raw.transcriptions where model_id = '{GENERATOR}'"
    )[0]
    assert read == len(with_text) > 0
    scopes = query(  # on the leaderboard in every scope the hand world's m1 is
        warehouse,
        "select model_id, list(language_scope order by language_scope) "
        f"from marts.fct_hcq_leaderboard where model_id in ('m1', '{GENERATOR}') group by 1",
    )
    assert len(scopes) == 2 and scopes[0][1] == scopes[1][1]


def test_the_chain_waits_while_the_warehouse_has_unpublished_changes(tmp_path, monkeypatch):
    """Guards against the chain's build publishing someone's unbuilt import."""
    warehouse = tmp_path / "w.duckdb"
    monkeypatch.setenv("QCT2I_WAREHOUSE", str(warehouse))
    warehouse.with_name("w.working.duckdb").write_bytes(b"")
    context = dg.build_sensor_context(instance=dg.DagsterInstance.ephemeral())
    result = evaluate_chain_imports(context)
    assert isinstance(result, dg.SkipReason) and "unpublished" in result.skip_message


def test_one_setting_starts_both_sensors_stopped(monkeypatch):
    """Guards against the chain running in a deployment that turned it off (or not running by
    default under `make dev`)."""
    monkeypatch.delenv(CHAIN_ENV, raising=False)
    assert {s.default_status for s in gpu_chain_sensors()} == {dg.DefaultSensorStatus.RUNNING}
    monkeypatch.setenv(CHAIN_ENV, "off")
    assert {s.default_status for s in gpu_chain_sensors()} == {dg.DefaultSensorStatus.STOPPED}


class _NeverLoadedJudge(QuestionJudgeResource):
    def load(self):
        raise AssertionError("the judge was loaded for a bundle that must be refused first")


def test_judging_with_no_run_config_follows_the_bundle_its_generation_drew_into(
    tmp_path, monkeypatch
):
    """Guards against a judging that automation started (no run config) judging the default
    GPU bundle while the partition was drawn into another: the bundle its latest drawing names
    is the one judged (here refused before the judge loads, by its name)."""
    monkeypatch.setenv("QCT2I_WAREHOUSE", str(tmp_path / "warehouse" / "w.duckdb"))
    drawn_into = tmp_path / "elsewhere"
    drawn_into.mkdir()
    image = {"prompt_id": "c001-en", "model_id": GENERATOR, "path": "../outside.png"}
    (drawn_into / "images.jsonl").write_text(json.dumps(image) + "\n")
    instance = dg.DagsterInstance.ephemeral()
    for shard in ("0", "1"):  # as generation records a drawn shard
        instance.report_runless_asset_event(
            dg.AssetMaterialization(
                GENERATED_IMAGES_KEY,
                partition=f"{GENERATOR}|{shard}",
                metadata={"bundle": str(drawn_into)},
            )
        )
    monkeypatch.setenv("QCT2I_GENERATION_SHARDS", "2")
    judged_images = generation_assets().judged_images
    with pytest.raises(dg.Failure) as refused:
        dg.materialize(
            [judged_images],
            partition_key=GENERATOR,
            resources={"question_judge": _NeverLoadedJudge()},
            instance=instance,
        )
    assert refused.value.description.startswith(f"bundle {drawn_into} refused (1 problems):")
