"""The dbt project as Dagster assets; dbt tests become asset checks.

Groups follow the dbt folder: `models/intermediate/<area>` and `models/marts/<area>` share the
area's group (scoring, structure, reliability, routing), so the graph shows the architecture
rather than one `marts` box; staging and seeds keep their layer's name.
"""

import json
from collections.abc import Mapping
from typing import Any

import dagster as dg
from dagster_dbt import DagsterDbtTranslator, DbtCliResource, DbtProject, dbt_assets
from pydantic import Field

AREA_LAYERS = ("intermediate", "marts")  # layers whose sub-folders name an area


class AreaTranslator(DagsterDbtTranslator):
    """Asset group = the area folder of a model (fqn: project, layer, [area, ...], name)."""

    def get_group_name(self, dbt_resource_props: Mapping[str, Any]) -> str | None:
        if dbt_resource_props["resource_type"] == "seed":
            return "seeds"
        layer, *folders = dbt_resource_props["fqn"][1:-1]
        if layer in AREA_LAYERS and folders:
            return folders[0]
        return layer


class DbtBuildConfig(dg.Config):
    """Run config of the dbt assets, settable from the launchpad."""

    vars: dict[str, Any] = Field(
        default_factory=dict,
        description='dbt vars for this run (`dbt build --vars`), e.g. {"router_seed": 7}',
    )


def dbt_build_args(config: DbtBuildConfig) -> list[str]:
    """`dbt build`, with `--vars` (JSON is valid YAML) when the run sets any."""
    return ["build", "--vars", json.dumps(config.vars)] if config.vars else ["build"]


def build_dbt_assets(project: DbtProject) -> dg.AssetsDefinition:
    """The dbt assets of a prepared project (reads its manifest: call at definitions load)."""

    @dbt_assets(
        manifest=project.manifest_path,
        project=project,
        dagster_dbt_translator=AreaTranslator(),
    )
    def qct2i_dbt_models(
        context: dg.AssetExecutionContext, dbt: DbtCliResource, config: DbtBuildConfig
    ):
        yield from dbt.cli(dbt_build_args(config), context=context).stream()

    return qct2i_dbt_models
