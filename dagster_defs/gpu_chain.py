"""The GPU chain runs itself (issue 33; docs/deployment.md, "The GPU chain runs itself"): a
generator partition's generation leads to its judging and its text reading, and those to the
import (appending) and build, with no other command.

    gpu/generated_images [generator|shard]   drawn by hand, by a backfill or by qct2i's jobs
        -> gpu/judged_images, gpu/transcribed_images [generator]
           declarative automation (`AutomationCondition.eager()` on both assets): requested once
           every shard of the generator is materialised and none is in progress; the sensor
           `gpu_chain` below evaluates it
        -> import_and_build (import_bundle appending the partition's bundle, the dbt build, the
           report): the sensor `gpu_chain_import`, because the import needs run config (the
           bundle's folder, append, the generator replaced) that automation cannot pass

The runs take the pools their steps declare: the GPU steps `gpu`, the import and the dbt build
`warehouse_writer`, so an import the chain starts queues behind another writer instead of
failing on the writer lock. QCT2I_GPU_CHAIN=off starts both sensors stopped (the UI's toggles
start them either way).
"""

import dagster as dg

from dagster_defs.assets.evidence import TRANSCRIBED_IMAGES_KEY
from dagster_defs.assets.generation import GENERATED_IMAGES_KEY, JUDGED_IMAGES_KEY
from dagster_defs.pipeline import default_sensor_status, import_and_build_job
from ingestion.paths import warehouse_path

CHAIN_ENV = "QCT2I_GPU_CHAIN"  # "off": both sensors start stopped
RUN_KEY_TAG = "dagster/run_key"  # the tag Dagster gives a sensor's run
CHAIN_TAG = "qct2i/gpu_chain"  # the generator partition an import run takes, on its run
# what the import waits for: the partition's judging and its reading, both after its last drawing
FOLLOWED = (JUDGED_IMAGES_KEY, TRANSCRIBED_IMAGES_KEY)


def judging_sensor() -> dg.AutomationConditionSensorDefinition:
    """Evaluates the GPU assets' automation conditions (judging and reading follow generation).
    Named, rather than Dagster's `default_automation_condition_sensor`, so it runs by default
    under `make dev` and QCT2I_GPU_CHAIN turns it off."""
    return dg.AutomationConditionSensorDefinition(
        "gpu_chain",
        target=dg.AssetSelection.groups("gpu"),
        default_status=default_sensor_status(CHAIN_ENV),
        minimum_interval_seconds=30,
        description="Judges and reads a generator partition once every shard of its generation "
        "is materialised (AutomationCondition.eager on gpu/judged_images and "
        "gpu/transcribed_images; docs/deployment.md).",
    )


# -- the import sensor ------------------------------------------------------------------------


def _latest(instance: dg.DagsterInstance, key: dg.AssetKey) -> dict[str, int]:
    """Per partition, the storage id of the asset's latest materialisation."""
    return dict(
        instance.get_latest_storage_id_by_partition(key, dg.DagsterEventType.ASSET_MATERIALIZATION)
    )


def _latest_drawing(instance: dg.DagsterInstance) -> dict[str, int]:
    """Per generator, the storage id of its latest drawn shard (partition `generator|shard`)."""
    latest: dict[str, int] = {}
    for partition, storage_id in _latest(instance, GENERATED_IMAGES_KEY).items():
        generator = partition.split("|")[0]
        latest[generator] = max(latest.get(generator, 0), storage_id)
    return latest


def _bundle_of(instance: dg.DagsterInstance, key: dg.AssetKey, storage_id: int) -> str | None:
    """The `bundle` its materialisation with this storage id names."""
    records = instance.fetch_materializations(
        dg.AssetRecordsFilter(asset_key=key, storage_ids=[storage_id]), limit=1
    ).records
    if not records:
        return None
    bundle = records[0].asset_materialization.metadata.get("bundle")
    return bundle.value if bundle is not None else None


def import_run_key(generator: str, storage_ids: list[int]) -> str:
    """The partition and the materialisations an import takes: a run is never asked twice for
    the same judging and reading (Dagster starts no second run with one key)."""
    return f"gpu-chain:{generator}:" + ":".join(map(str, storage_ids))


def import_run_request(generator: str, bundle: str, key: str) -> dg.RunRequest:
    """`qct2i import --append BUNDLE --replace-model GENERATOR`, then the build: the bundle is
    the generator's evidence of record, so a redrawn or rejudged partition replaces its rows
    (other generators' rows in a shared bundle are no-ops when equal to the stored ones)."""
    config = {"folder": bundle, "append": True, "replace_models": [generator]}
    return dg.RunRequest(
        run_key=key,
        run_config={"ops": {"import_bundle": {"config": config}}},
        tags={CHAIN_TAG: generator},
    )


def evaluate_chain_imports(context: dg.SensorEvaluationContext):
    """The import sensor's tick: an import_and_build run per generator partition whose judging
    and reading are both materialised after its latest drawn shard and not yet imported."""
    from ingestion.store.warehouse import Warehouse

    working = Warehouse(warehouse_path()).working
    if working.exists():  # a build of the chain would publish someone's unbuilt import
        return dg.SkipReason(f"waiting: {working} holds unpublished changes (build or remove it)")
    instance = context.instance
    judged, read = (_latest(instance, key) for key in FOLLOWED)
    drawn = _latest_drawing(instance)
    requests = []
    for generator in sorted(judged.keys() & read.keys()):
        storage_ids = [judged[generator], read[generator]]
        if min(storage_ids) < drawn.get(generator, 0):
            continue  # drawn again since: its judging and reading follow, then the import
        key = import_run_key(generator, storage_ids)
        if instance.get_runs(filters=dg.RunsFilter(tags={RUN_KEY_TAG: key}), limit=1):
            continue
        bundles = {_bundle_of(instance, k, i) for k, i in zip(FOLLOWED, storage_ids, strict=True)}
        if len(bundles) != 1 or None in bundles:
            context.log.warning(f"{generator}: judged and read in different bundles {bundles}")
            continue
        requests.append(import_run_request(generator, bundles.pop(), key))
    return requests or dg.SkipReason("no generator partition judged and read since its import")


def import_sensor() -> dg.SensorDefinition:
    return dg.SensorDefinition(
        name="gpu_chain_import",
        evaluation_fn=evaluate_chain_imports,
        job=import_and_build_job,
        minimum_interval_seconds=30,
        default_status=default_sensor_status(CHAIN_ENV),
        description="Imports (appending, the generator replaced) and builds a generator "
        "partition's GPU bundle once its judging and text reading are materialised after its "
        "latest generation; one run per judging and reading (docs/deployment.md).",
    )


def gpu_chain_sensors() -> list[dg.SensorDefinition]:
    return [judging_sensor(), import_sensor()]
