"""Definitions: simulator / bundle import -> raw tables -> staging -> intermediate -> marts."""

import dagster as dg
from dagster_dbt import DbtCliResource

from dagster_defs.assets.dbt import qct2i_dbt_models
from dagster_defs.assets.generation import generated_images, judged_images
from dagster_defs.assets.ingestion import import_bundle, simulated_bundle
from dagster_defs.ml_resources import ml_resources_from_env
from dagster_defs.project import DBT_PROJECT

# GPU ingestion (partitioned by generator) is materialised on its own, partition by partition.
GPU_ASSETS = dg.AssetSelection.groups("gpu")

demo_job = dg.define_asset_job(
    "demo",
    selection=dg.AssetSelection.all() - GPU_ASSETS,
    description="Simulate the calibrated bilingual benchmark, import it and build every mart.",
)

import_and_build_job = dg.define_asset_job(
    "import_and_build",
    selection=dg.AssetSelection.all() - dg.AssetSelection.assets(simulated_bundle) - GPU_ASSETS,
    description="Import the bundle named in the run config and build every mart.",
)

defs = dg.Definitions(
    assets=[simulated_bundle, import_bundle, qct2i_dbt_models, generated_images, judged_images],
    jobs=[demo_job, import_and_build_job],
    resources={"dbt": DbtCliResource(project_dir=DBT_PROJECT), **ml_resources_from_env()},
)
