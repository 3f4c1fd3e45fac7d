"""GPU ingestion assets, partitioned by generator: draw every prompt, then judge every image.

Both append to a GPU bundle folder (default <warehouse folder>/bundles/gpu, holding prompts.jsonl
and questions.jsonl put there beforehand); `import_bundle` with that folder loads the result into
the raw tables, which is why they are upstream of `raw/images` and `raw/judgments` in the asset
graph (jobs `demo` and `import_and_build` leave them out). See ingestion/backends/runs.py for the
resumability contract, where the judge's identity is part of "already judged".
"""

import dataclasses
import os
from pathlib import Path

import dagster as dg

from dagster_defs.ml_resources import ImageGeneratorResource, QuestionJudgeResource
from ingestion.backends.generators import generator_model_ids
from ingestion.backends.runs import read_rows, run_adjudication, run_generation
from ingestion.paths import warehouse_path

generator_partitions = dg.StaticPartitionsDefinition(generator_model_ids())
FAIL_AFTER_ENV = "QCT2I_FAIL_AFTER_IMAGES"  # fault injection for tests: crash after k images


def default_gpu_bundle_dir() -> Path:
    return warehouse_path().parent / "bundles" / "gpu"


class GenerationConfig(dg.Config):
    bundle: str | None = None  # default: default_gpu_bundle_dir()
    batch_size: int | None = None  # default: the resource's


class _InjectedCrash(RuntimeError):
    pass


def _crash_after(k: int):
    def hook(done: int) -> None:
        if done >= k:
            raise _InjectedCrash(f"{FAIL_AFTER_ENV}={k}: crashing after {done} images")

    return hook


@dg.asset(
    key_prefix=["gpu"],
    group_name="gpu",
    partitions_def=generator_partitions,
    description="Every prompt of the GPU bundle drawn by one generator: PNGs, images.jsonl rows.",
)
def generated_images(
    context: dg.AssetExecutionContext,
    config: GenerationConfig,
    image_generator: ImageGeneratorResource,
) -> dg.MaterializeResult:
    bundle = Path(config.bundle) if config.bundle else default_gpu_bundle_dir()
    model_id = context.partition_key
    spec = image_generator.spec(model_id)
    prompts = list(read_rows(bundle / "prompts.jsonl"))
    fail_after = os.environ.get(FAIL_AFTER_ENV)
    stats = run_generation(
        spec,
        prompts,
        image_generator.load(spec),
        bundle,
        batch_size=config.batch_size or image_generator.batch_size,
        log=context.log.info,
        after_image=_crash_after(int(fail_after)) if fail_after else None,
    )
    return dg.MaterializeResult(
        metadata={
            "bundle": str(bundle),
            "planned": stats.planned,
            "skipped": stats.skipped,
            "drawn": stats.done,
            "images_per_s": stats.rate,
            "gpu_s_per_mp": stats.gpu_s_per_mp,
            "device_s": stats.gpu_seconds,
            "megapixels": stats.megapixels,
        }
    )


@dg.asset(
    key_prefix=["gpu"],
    group_name="gpu",
    partitions_def=generator_partitions,
    deps=[generated_images],
    description="Every question of every image of one generator judged yes/no (judgments.jsonl); "
    "a new judge (model, revision or prompt template) answers every image again.",
)
def judged_images(
    context: dg.AssetExecutionContext,
    config: GenerationConfig,
    question_judge: QuestionJudgeResource,
) -> dg.MaterializeResult:
    bundle = Path(config.bundle) if config.bundle else default_gpu_bundle_dir()
    judge = question_judge.load()
    stats = run_adjudication(judge, bundle, context.partition_key, log=context.log.info)
    questions = stats.questions
    return dg.MaterializeResult(
        metadata={
            "bundle": str(bundle),
            **dataclasses.asdict(judge.identity),  # what "already judged" was keyed on
            "images_judged": stats.done,
            "skipped": stats.skipped,
            "questions": questions,
            "questions_per_s": questions / stats.seconds if stats.seconds else 0.0,
        }
    )
