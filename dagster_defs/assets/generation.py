"""GPU ingestion assets: draw every prompt (partitioned by generator x prompt shard), then judge
every image (partitioned by generator).

Both append to a GPU bundle folder (default <warehouse folder>/bundles/gpu, holding prompts.jsonl
and questions.jsonl put there beforehand); `import_bundle` with that folder loads the result into
the raw tables, which is why they are upstream of `raw/images` and `raw/judgments` in the asset
graph (jobs `demo` and `import_and_build` leave them out). See `ingestion.backends.drivers.runs`
for the resumability contract, where the judge's identity is part of "already judged". Judging
(and OCR, evidence.py) first refuses a bundle with an image path outside its folder and the
config's `image_roots` (`runs.image_rows`, the import's rule), before the judge loads: the run
fails with the import's file:line messages (`refused_as_failure`).

Spreading one generator over GPUs (docs/distributed_generation.md): `generated_images` has one
partition per (generator, shard); a concept's shard is `ingestion.backends.drivers.shards`' stable
hash mod QCT2I_GENERATION_SHARDS (default 1; every process of a deployment must agree on it). Each
step claims a slot of the Dagster concurrency pool `gpu` (set its limit to the GPU count:
`dagster instance concurrency set gpu 8`), and each process drawing sees one device (its own
CUDA_VISIBLE_DEVICES, or QCT2I_GENERATOR_DEVICE; dagster_defs/ml_resources.py). Shards append
to the one images.jsonl under a lock that also drops an image_id already recorded, so neither a
concurrent shard nor a rerun of a killed one can record an image twice. Only shard 0 measures
the generator's cost (the calibration is per generator, not per shard), and only once per bundle
and revision: a rerun keeps the measured row, so the bundle's rows stay what was imported.

The partitions come from seeds/generators.csv and QCT2I_GENERATION_SHARDS, so the assets are
built by `generation_assets()` when the definitions load (`defs()` of definitions.py and of
distributed.py), never at import: an unreadable seed or a bad shard count fails the load, not
the import.

Progress: each asset hands its driver `progress_lines(context, ...)`, so the run's logs carry
plain count lines (`3 of 10 images drawn (0:05 elapsed, about 0:12 left)`, one per tenth or half
minute and the last) through `context.log.info`, and a process that is `watching` (`qct2i
evaluate`, which materialises these assets in-process) sees the same counts.
"""

import dataclasses
import os
from pathlib import Path

import dagster as dg
from pydantic import Field

from dagster_defs.ml_resources import ImageGeneratorResource, QuestionJudgeResource
from ingestion.backends.api.generators import generator_model_ids
from ingestion.backends.drivers.calibration import calibrate_cost, record_generator
from ingestion.backends.drivers.progress import CountLines, Progress, with_watchers
from ingestion.backends.drivers.runs import (
    generation_requests,
    image_rows,
    read_rows,
    run_adjudication,
    run_generation,
)
from ingestion.backends.drivers.shards import prompts_of_shard, shard_count_from_env
from ingestion.bundle.problems import BundleError
from ingestion.paths import warehouse_path

GENERATED_IMAGES_KEY = dg.AssetKey(["gpu", "generated_images"])
JUDGED_IMAGES_KEY = dg.AssetKey(["gpu", "judged_images"])
GPU_POOL = "gpu"  # Dagster concurrency pool of the steps that hold a GPU; limit = GPU count
# where a step runs under the distributed executors (dagster_defs/distributed.py): the Celery
# queue that GPU workers consume, and for dagster-k8s a pod that requests one GPU
GPU_STEP_TAGS = {
    "dagster-celery/queue": "gpu",
    "dagster-k8s/config": {"container_config": {"resources": {"limits": {"nvidia.com/gpu": 1}}}},
}
FAIL_AFTER_ENV = "QCT2I_FAIL_AFTER_IMAGES"  # fault injection for tests: crash after k images
# Judging and reading follow a generator partition's generation by themselves (the sensor
# `gpu_chain`, dagster_defs/gpu_chain.py): requested once every shard is materialised (none
# missing, none in progress) and one of them changed since they last ran.
FOLLOWS_GENERATION = dg.AutomationCondition.eager()


def default_gpu_bundle_dir() -> Path:
    return warehouse_path().parent / "bundles" / "gpu"


class GenerationConfig(dg.Config):
    bundle: str | None = None  # default: default_gpu_bundle_dir()
    batch_size: int | None = None  # default: the resource's
    # GPU-s/MP as the paper defines it (`ingestion.backends.drivers.calibration`): an untimed
    # warm-up, then this many batch-1 draws; 0 records the generator without a measured cost
    calibration_images: int = 3


class JudgingConfig(GenerationConfig):
    # as `import_bundle`'s (`qct2i import --image-root`): folders besides the bundle's that
    # images.path may lead into; any other path outside the bundle refuses the run before the
    # judge loads, as the import would refuse the bundle
    image_roots: list[str] = Field(default_factory=list)


def bundle_to_follow(context: dg.AssetExecutionContext, configured: str | None) -> Path:
    """The bundle a judging or reading step works on: the configured one; with none (a run that
    automation started carries no config), the bundle the partition's latest drawing names, so
    the chain follows the images wherever they were drawn; else the default GPU bundle."""
    if configured:
        return Path(configured)
    shards = [f"{context.partition_key}|{s}" for s in range(shard_count_from_env())]
    records = context.instance.fetch_materializations(
        dg.AssetRecordsFilter(asset_key=GENERATED_IMAGES_KEY, asset_partitions=shards), limit=1
    ).records
    drawn = records[0].asset_materialization.metadata.get("bundle") if records else None
    return Path(drawn.value) if drawn is not None else default_gpu_bundle_dir()


def progress_lines(context: dg.AssetExecutionContext, label: str) -> Progress:
    """A driver's progress as count lines in the run's logs, and to this process's watchers."""
    return with_watchers(CountLines(context.log.info, label))


def refused_as_failure(refused: BundleError) -> dg.Failure:
    """A refused bundle as the run's failure: its problems, not a traceback (as the import)."""
    return dg.Failure(description=str(refused))


class _InjectedCrash(RuntimeError):
    pass


def _crash_after(k: int):
    def hook(done: int) -> None:
        if done >= k:
            raise _InjectedCrash(f"{FAIL_AFTER_ENV}={k}: crashing after {done} images")

    return hook


@dataclasses.dataclass(frozen=True)
class GenerationAssets:
    """The GPU assets partitioned by generator, from one reading of the generator seed and the
    shard count (`generation_assets`); the OCR asset shares `generator_partitions`."""

    generator_partitions: dg.StaticPartitionsDefinition
    shards: int
    generated_images: dg.AssetsDefinition
    judged_images: dg.AssetsDefinition


def generation_assets() -> GenerationAssets:
    """Build the generation and judging assets: their partitions come from seeds/generators.csv
    and QCT2I_GENERATION_SHARDS, read here, not at import (the definitions factories call this)."""
    generator_partitions = dg.StaticPartitionsDefinition(generator_model_ids())
    shards = shard_count_from_env()
    generated_images = _generated_images_asset(generator_partitions, shards)
    judged_images = _judged_images_asset(generator_partitions, generated_images)
    return GenerationAssets(generator_partitions, shards, generated_images, judged_images)


def _generated_images_asset(
    generator_partitions: dg.StaticPartitionsDefinition, shards: int
) -> dg.AssetsDefinition:
    generation_partitions = dg.MultiPartitionsDefinition(
        {
            "generator": generator_partitions,
            "shard": dg.StaticPartitionsDefinition([str(i) for i in range(shards)]),
        }
    )

    @dg.asset(
        key=GENERATED_IMAGES_KEY,
        group_name="gpu",
        partitions_def=generation_partitions,
        pool=GPU_POOL,
        op_tags=GPU_STEP_TAGS,
        description="Every prompt of one shard of the GPU bundle drawn by one generator: PNGs, "
        "images.jsonl rows.",
    )
    def generated_images(
        context: dg.AssetExecutionContext,
        config: GenerationConfig,
        image_generator: ImageGeneratorResource,
    ) -> dg.MaterializeResult:
        bundle = Path(config.bundle) if config.bundle else default_gpu_bundle_dir()
        keys = context.partition_key.keys_by_dimension
        model_id, shard = keys["generator"], int(keys["shard"])
        spec = image_generator.spec(model_id)
        all_prompts = list(read_rows(bundle / "prompts.jsonl"))
        prompts = prompts_of_shard(all_prompts, shard, shards)
        batch_size = config.batch_size or image_generator.batch_size
        generator = image_generator.load(spec, batch_size)
        generator_row = {"cost_gpu_s_per_mp": None, "cost_source": None}
        measured = _measured_row(bundle, model_id, generator.revision) if shard == 0 else None
        if measured:  # a rerun keeps the cost it measured: the rows stay equal to the import's
            generator_row = measured
        elif shard == 0:  # one calibration and one generators row per generator
            calibration = None
            if config.calibration_images > 0 and all_prompts:
                requests = generation_requests(spec, all_prompts)
                calibration = calibrate_cost(generator, requests, config.calibration_images)
            generator_row = record_generator(bundle, spec, generator.revision, calibration)
        fail_after = os.environ.get(FAIL_AFTER_ENV)
        label = model_id if shards == 1 else f"{model_id} shard {shard}"
        stats = run_generation(
            spec,
            prompts,
            generator,
            bundle,
            batch_size=batch_size,
            log=context.log.info,
            after_image=_crash_after(int(fail_after)) if fail_after else None,
            progress=progress_lines(context, label),
        )
        return dg.MaterializeResult(
            metadata={
                "bundle": str(bundle),
                "shard": f"{shard}/{shards}",
                "device": image_generator.device,
                "planned": stats.planned,
                "skipped": stats.skipped,
                "drawn": stats.done,
                "images_per_s": stats.rate,
                "gpu_s_per_mp": stats.gpu_s_per_mp,  # over this run's batches (warm-up included)
                "measured_gpu_s_per_mp": generator_row["cost_gpu_s_per_mp"],  # batch 1, warm
                "cost_source": generator_row["cost_source"],
                "device_s": stats.gpu_seconds,
                "megapixels": stats.megapixels,
            }
        )

    return generated_images


def _measured_row(bundle: Path, model_id: str, revision: str) -> dict | None:
    """The bundle's generators row of `model_id` when it holds a cost measured at `revision`."""
    path = bundle / "generators.jsonl"
    rows = read_rows(path) if path.exists() else []
    return next(
        (
            row
            for row in rows
            if row.get("model_id") == model_id
            and row.get("cost_source") == "measured"
            and row.get("revision") == revision
        ),
        None,
    )


def _judged_images_asset(
    generator_partitions: dg.StaticPartitionsDefinition, generated_images: dg.AssetsDefinition
) -> dg.AssetsDefinition:
    @dg.asset(
        key=JUDGED_IMAGES_KEY,
        group_name="gpu",
        partitions_def=generator_partitions,
        deps=[generated_images],
        pool=GPU_POOL,
        automation_condition=FOLLOWS_GENERATION,
        description="Every question of every image of one generator judged yes/no "
        "(judgments.jsonl); a new judge (model, revision or prompt template) answers every image "
        "again.",
    )
    def judged_images(
        context: dg.AssetExecutionContext,
        config: JudgingConfig,
        question_judge: QuestionJudgeResource,
    ) -> dg.MaterializeResult:
        bundle = bundle_to_follow(context, config.bundle)
        image_roots = [Path(root) for root in config.image_roots]
        try:
            image_rows(bundle, image_roots)  # an image path outside refuses before the judge loads
            judge = question_judge.load()
            stats = run_adjudication(
                judge,
                bundle,
                context.partition_key,
                log=context.log.info,
                chunk_images=question_judge.chunk_images,
                judge_id=question_judge.judge_id,
                image_roots=image_roots,
                progress=progress_lines(context, context.partition_key),
            )
        except BundleError as refused:
            raise refused_as_failure(refused) from None
        questions = stats.questions
        return dg.MaterializeResult(
            metadata={
                "bundle": str(bundle),
                "judge_id": question_judge.judge_id,
                **dataclasses.asdict(judge.identity),  # what "already judged" was keyed on
                "images_judged": stats.done,
                "skipped": stats.skipped,
                "questions": questions,
                "questions_per_s": questions / stats.seconds if stats.seconds else 0.0,
            }
        )

    return judged_images
