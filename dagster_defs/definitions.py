"""Definitions: simulator / bundle import -> raw tables -> staging -> intermediate -> marts."""

import dagster as dg
from dagster_dbt import DbtCliResource

from dagster_defs.assets.dbt import qct2i_dbt_models
from dagster_defs.assets.ingestion import import_bundle, simulated_bundle
from dagster_defs.project import DBT_PROJECT

demo_job = dg.define_asset_job(
    "demo",
    selection=dg.AssetSelection.all(),
    description="Simulate the calibrated bilingual benchmark, import it and build every mart.",
)

import_and_build_job = dg.define_asset_job(
    "import_and_build",
    selection=dg.AssetSelection.all() - dg.AssetSelection.assets(simulated_bundle),
    description="Import the bundle named in the run config and build every mart.",
)

defs = dg.Definitions(
    assets=[simulated_bundle, import_bundle, qct2i_dbt_models],
    jobs=[demo_job, import_and_build_job],
    resources={"dbt": DbtCliResource(project_dir=DBT_PROJECT)},
)
