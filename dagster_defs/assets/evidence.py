"""The OCR asset (Eq. 3's evidence), partitioned by generator like generation and judging, and
the question-construction asset (METHOD 13), which writes the questions judging asks.

The OCR asset reads every image of its generator whose prompt has a text target into the GPU
bundle's transcriptions.jsonl (`ingestion.backends.drivers.transcription_runs`: resumable, one
row per image, the OCR model and revision on every row); truncated or unparseable answers are
written as `unavailable` with their reason and counted in the materialisation's metadata. Question
construction turns every prompt of the bundle without questions into questions (capability tags,
parents, entities) through the configured writer in batches, validated by the bundle's rules;
rejected prompts are kept with their reasons (question_rejections.jsonl) and counted. Attribution
(METHOD 13a) gives every question of a bank the capability the writer's model names for it
(`ingestion.backends.drivers.attribution_runs`: cached by question text and model identity), the
rules' label kept as `rule_capability`, refused answers counted with their reasons.

The OCR asset shares generation's partitions, so `transcribed_images_asset` builds it from
`generation.generation_assets()` when the definitions load, not at import.
"""

from pathlib import Path

import dagster as dg
from pydantic import Field

from dagster_defs.assets.generation import (
    FOLLOWS_GENERATION,
    GPU_POOL,
    GenerationAssets,
    bundle_to_follow,
    default_gpu_bundle_dir,
    progress_lines,
    refused_as_failure,
)
from dagster_defs.ml_resources import QuestionWriterResource, TextTranscriberResource
from ingestion.backends.drivers.attribution_runs import (
    default_attribution_cache,
    run_attribution,
)
from ingestion.backends.drivers.question_runs import run_question_construction
from ingestion.backends.drivers.runs import image_rows
from ingestion.backends.drivers.transcription_runs import run_transcription
from ingestion.bundle.problems import BundleError


class EvidenceConfig(dg.Config):
    bundle: str | None = None  # default: the GPU bundle (generation.default_gpu_bundle_dir)


class AttributionConfig(EvidenceConfig):
    cache: str | None = None  # default: attribution_cache.jsonl beside the warehouse


class TranscriptionConfig(EvidenceConfig):
    # as judging's (generation.JudgingConfig) and the import's: folders besides the bundle's that
    # images.path may lead into; any other path outside refuses the run before the reader loads
    image_roots: list[str] = Field(default_factory=list)


TRANSCRIBED_IMAGES_KEY = dg.AssetKey(["gpu", "transcribed_images"])


def transcribed_images_asset(generation: GenerationAssets) -> dg.AssetsDefinition:
    """The OCR asset, on generation's generator partitions and downstream of its images (built
    by the definitions factories with `generation.generation_assets()`)."""

    @dg.asset(
        key=TRANSCRIBED_IMAGES_KEY,
        group_name="gpu",
        partitions_def=generation.generator_partitions,
        deps=[generation.generated_images],
        pool=GPU_POOL,
        automation_condition=FOLLOWS_GENERATION,
        description="The text blocks of every image of one generator whose prompt has a text "
        "target (transcriptions.jsonl); truncated or unparseable readings are `unavailable` with "
        "a reason.",
    )
    def transcribed_images(
        context: dg.AssetExecutionContext,
        config: TranscriptionConfig,
        text_transcriber: TextTranscriberResource,
    ) -> dg.MaterializeResult:
        bundle = bundle_to_follow(context, config.bundle)
        image_roots = [Path(root) for root in config.image_roots]
        try:
            image_rows(bundle, image_roots)  # an image path outside refuses before the reader loads
            transcriber = text_transcriber.load()
            stats = run_transcription(
                transcriber,
                bundle,
                context.partition_key,
                log=context.log.info,
                image_roots=image_roots,
                progress=progress_lines(context, context.partition_key),
            )
        except BundleError as refused:
            raise refused_as_failure(refused) from None
        return dg.MaterializeResult(
            metadata={
                "bundle": str(bundle),
                "ocr_model": transcriber.ocr_model,
                "ocr_revision": transcriber.ocr_revision,
                "max_new_tokens": text_transcriber.max_new_tokens,
                **stats.metadata(),
            }
        )

    return transcribed_images


@dg.asset(
    key_prefix=["gpu"],
    group_name="gpu",
    pool=GPU_POOL,
    description="Questions (tags, parents, entities, text targets) for every prompt of the GPU "
    "bundle that has none, written by the question-writer LLM and validated by the bundle's "
    "rules; rejected prompts kept with their reasons.",
)
def constructed_questions(
    context: dg.AssetExecutionContext,
    config: EvidenceConfig,
    question_writer: QuestionWriterResource,
) -> dg.MaterializeResult:
    from ingestion.bundle import default_capabilities

    bundle = Path(config.bundle) if config.bundle else default_gpu_bundle_dir()
    capabilities = default_capabilities()
    writer = question_writer.load(sorted(capabilities))
    stats = run_question_construction(
        writer, bundle, capabilities, question_writer.batch_size, log=context.log.info
    )
    return dg.MaterializeResult(metadata={"bundle": str(bundle), **stats.metadata()})


@dg.asset(
    key_prefix=["gpu"],
    group_name="gpu",
    pool=GPU_POOL,
    deps=[constructed_questions],
    description="Every question of the bundle (a question bank) given the capability the "
    "question writer's model attributes by its core predicate (METHOD 13a), the rules' label "
    "kept as rule_capability; answers cached by question text and model identity, refused "
    "answers counted with their reasons (the question keeps its label).",
)
def attributed_questions(
    context: dg.AssetExecutionContext,
    config: AttributionConfig,
    question_writer: QuestionWriterResource,
) -> dg.MaterializeResult:
    from ingestion.backends.api.attribution_contract import read_definitions
    from ingestion.bundle.load import DEFAULT_TAXONOMY_SEED

    bundle = Path(config.bundle) if config.bundle else default_gpu_bundle_dir()
    cache = Path(config.cache) if config.cache else default_attribution_cache()
    definitions = read_definitions(DEFAULT_TAXONOMY_SEED)
    attributor = question_writer.load_attributor(definitions)
    stats = run_attribution(
        attributor, bundle, cache, set(definitions), question_writer.batch_size, context.log.info
    )
    identity = attributor.identity
    return dg.MaterializeResult(
        metadata={
            "bundle": str(bundle),
            "model": identity.model,
            "revision": identity.revision,
            "instruction_sha": identity.instruction_sha,
            **stats.metadata(),
        }
    )
