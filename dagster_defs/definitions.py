"""Definitions: simulator / GPU bundle -> raw tables -> staging -> intermediate -> marts ->
report.

Built by a factory (`@dg.definitions`), so importing this module does no work: Dagster (`dagster
dev`, `dagster asset materialize`, a run worker), the CLI demo and the tests call `defs()`, which
builds the GPU assets from the generator seed and QCT2I_GENERATION_SHARDS, prepares the dbt project
(a parse only when its manifest is stale) and reads the manifest.
"""

import dagster as dg
from dagster_dbt import DbtCliResource

from dagster_defs.assets.dbt import build_dbt_assets
from dagster_defs.assets.evidence import (
    attributed_questions,
    constructed_questions,
    transcribed_images_asset,
)
from dagster_defs.assets.generation import generation_assets
from dagster_defs.assets.ingestion import import_bundle, simulated_bundle
from dagster_defs.assets.report import report
from dagster_defs.evaluation import evaluate_generator_job
from dagster_defs.ml_resources import ml_resources_from_env
from dagster_defs.project import DBT_EXECUTABLE, prepared_dbt_project

# GPU ingestion (partitioned by generator) is materialised on its own, partition by partition.
GPU_ASSETS = dg.AssetSelection.groups("gpu")

demo_job = dg.define_asset_job(
    "demo",
    selection=dg.AssetSelection.all() - GPU_ASSETS,
    description="Simulate the calibrated bilingual benchmark, import it, build every mart and "
    "write the HTML report.",
)

import_and_build_job = dg.define_asset_job(
    "import_and_build",
    selection=dg.AssetSelection.all() - dg.AssetSelection.assets(simulated_bundle) - GPU_ASSETS,
    description="Import the bundle named in the run config, build every mart and write the report.",
)


@dg.definitions
def defs() -> dg.Definitions:
    generation = generation_assets()  # first: a bad seed or shard count fails before dbt runs
    project = prepared_dbt_project()
    return dg.Definitions(
        assets=[
            simulated_bundle,
            import_bundle,
            build_dbt_assets(project),
            generation.generated_images,
            generation.judged_images,
            transcribed_images_asset(generation),
            constructed_questions,
            attributed_questions,
            report,
        ],
        jobs=[demo_job, import_and_build_job, evaluate_generator_job],
        resources={
            "dbt": DbtCliResource(project_dir=project, dbt_executable=DBT_EXECUTABLE),
            **ml_resources_from_env(),
        },
    )
