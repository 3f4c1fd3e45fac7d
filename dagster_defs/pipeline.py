"""The warehouse pipeline: simulator / GPU bundle -> raw tables -> staging -> intermediate -> marts
-> report, its resources and the jobs that import and build (`demo`, `import_and_build`).

Below the modules that start those jobs (`evaluation`: `evaluate_generator`; `inbox`: the inbox
sensor's runs) and `definitions`, which adds them: each resolves `import_and_build` from here, so
no module imports the one that imports it (an import-linter contract, pyproject.toml)."""

import os
from collections.abc import Sequence

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


def default_sensor_status(setting: str) -> dg.DefaultSensorStatus:
    """RUNNING, so `make dev` starts the sensor, unless the environment variable `setting` says
    off (`off`, `0`, `false`, `no`); the UI's toggle wins over it once used."""
    off = os.environ.get(setting, "on").strip().lower() in {"off", "0", "false", "no"}
    return dg.DefaultSensorStatus.STOPPED if off else dg.DefaultSensorStatus.RUNNING


def pipeline_definitions(jobs: Sequence = (), sensors: Sequence = ()) -> dg.Definitions:
    """The assets, resources and the two jobs above, with `jobs` and `sensors` added (none: what
    a job run in process needs to resolve `import_and_build`). Builds the GPU assets from the
    generator seed and QCT2I_GENERATION_SHARDS, prepares the dbt project (a parse only when its
    manifest is stale) and reads the manifest."""
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
        jobs=[demo_job, import_and_build_job, *jobs],
        sensors=list(sensors),
        resources={
            "dbt": DbtCliResource(project_dir=project, dbt_executable=DBT_EXECUTABLE),
            **ml_resources_from_env(),
        },
    )


def import_and_build_job_def() -> dg.JobDefinition:
    """`import_and_build`, resolved against the pipeline, to run in process."""
    return pipeline_definitions().resolve_job_def("import_and_build")
