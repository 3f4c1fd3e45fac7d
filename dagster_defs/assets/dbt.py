"""The dbt project as Dagster assets; dbt tests become asset checks.

Groups follow the dbt folder: `models/intermediate/<area>` and `models/marts/<area>` share the
area's group (scoring, failures, structure, reliability, routing, ...), so the graph shows the
architecture rather than one `marts` box; staging and seeds keep their layer's name.
"""

import contextlib
import json
import os
import re
import shutil
import uuid
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import dagster as dg
from dagster_dbt import DagsterDbtTranslator, DbtCliResource, DbtProject, dbt_assets
from pydantic import Field

from ingestion.paths import DBT_BUILD_EXCLUDES, dbt_environment, warehouse_path
from ingestion.store.build_inputs import (
    dbt_exclusion,
    describe,
    prepare_build,
    standing_nodes,
)
from ingestion.store.dbt_parse import reused_parse
from ingestion.store.warehouse import (
    Warehouse,
    prepare_working_copy,
    publish,
    writer_lock,
    writer_wait_s,
)
from reporting.facts import published_facts
from reporting.leaderboard import leaderboard_markdown

# Every asset that writes the warehouse (the import and the dbt build) runs in this pool; give it
# a limit of 1 (dagster.yaml in the repository root, copied to $DAGSTER_HOME by `make dev`) so
# Dagster queues its writers instead of letting the writer lock refuse the second.
WAREHOUSE_WRITER_POOL = "warehouse_writer"

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


def dbt_build_args(config: DbtBuildConfig, incremental: bool = False) -> list[str]:
    """`dbt build` without the unit tests (`DBT_BUILD_EXCLUDES`), with `--vars` (JSON is valid
    YAML) when the run sets any or the build is incremental. Never quiet: dagster-dbt makes the
    materialisations from dbt's per-node log events, and a `DBT_QUIET` in the environment would
    leave a run that succeeds with no dbt asset materialised and nothing downstream (the report)
    run."""
    build = ["build", "--no-quiet", *DBT_BUILD_EXCLUDES]
    # `incremental_build` changes how, never what, the models build: not one of the run's vars
    dbt_vars = {**config.vars, "incremental_build": True} if incremental else config.vars
    return [*build, "--vars", json.dumps(dbt_vars)] if dbt_vars else build


@dataclass(frozen=True)
class PlannedBuild:
    """What a dbt asset run builds: dbt's arguments, the inputs to record at publish (None: keep
    no record), what the build does in one line, and the dbt assets it leaves standing."""

    args: list[str]
    inputs: Mapping[str, str] | None
    summary: str
    standing: tuple[dg.AssetKey, ...] = ()  # each after those it depends on


def planned_build(
    context: dg.AssetExecutionContext, working: Path, config: DbtBuildConfig, manifest: Mapping
) -> PlannedBuild:
    """Plan a run of the dbt assets on the working copy.

    A run of every dbt asset plans as `qct2i build` does (ingestion/store/build_inputs.py;
    docs/warehouse.md, "Incremental builds"): incremental on the generators whose evidence
    changed since the recorded build, full otherwise, and its publish records what it was built
    from. An incremental build leaves out the nodes that read no evidence, as `qct2i build` does
    (`dbt_exclusion` of the `standing_nodes`: dagster-dbt selects every node itself). A subset
    run (models picked in the UI) builds what it picked and records nothing, so the next build
    is full."""
    if context.is_subset:
        subset = "subset build (the models selected; no record kept)"
        return PlannedBuild(dbt_build_args(config), None, subset)
    plan, inputs = prepare_build(working, config.vars)
    args = dbt_build_args(config, incremental=not plan.full)
    if plan.full:
        return PlannedBuild(args, inputs, describe(plan))
    standing = standing_nodes(manifest)
    translator = AreaTranslator()
    keys = tuple(
        translator.get_asset_key(manifest["nodes"][uid])
        for uid in standing
        if manifest["nodes"][uid]["resource_type"] != "test"
    )
    return PlannedBuild([*args, *dbt_exclusion(manifest, standing)], inputs, describe(plan), keys)


@contextlib.contextmanager
def dbt_writes_to(working: Path) -> Iterator[None]:
    """Point dbt's profile (`QCT2I_WAREHOUSE`) at the working copy for the block, with the rest of
    the environment a dbt process gets (`ingestion.paths.dbt_environment`).

    DbtCliResource passes this process's environment to dbt and takes no other, so the variables
    are set here and restored after; each Dagster step runs in its own process, or in order in
    one."""
    wanted = dbt_environment(os.environ) | {"QCT2I_WAREHOUSE": str(working)}
    changed = {name: value for name, value in wanted.items() if os.environ.get(name) != value}
    saved = {name: os.environ.get(name) for name in changed}
    os.environ.update(changed)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


@contextlib.contextmanager
def saved_parse(
    context: dg.AssetExecutionContext, dbt: DbtCliResource, working: Path, args: Sequence[str]
) -> Iterator[Path]:
    """The folder for one `dbt.cli` call, seeded with the parse saved for this working copy and
    these vars (`ingestion.store.dbt_parse`); the call's parse is saved back when the block ends,
    and the log says how much of the project dbt parsed.

    dagster-dbt would seed the folder with the project's `target/partial_parse.msgpack`, made by
    the definitions' `dbt parse` or a CLI build for another warehouse path, so dbt parsed the
    whole project on every build ("profile has changed", about 3 s here). The folder is named as
    dagster-dbt names its own (op, run, token)."""
    op_run = f"{context.op_execution_context.op.name}-{context.run.run_id[:7]}"
    target = Path(dbt.project_dir) / "target" / f"{op_run}-{uuid.uuid4().hex[:7]}"
    profiles = dbt.profiles_dir or os.environ.get("DBT_PROFILES_DIR") or dbt.project_dir
    try:
        with reused_parse(str(working), args, Path(profiles), target):
            yield target
    finally:
        context.log.info(parse_summary(target))


PARTIAL_PARSE_COUNTS = (
    r"Partial parsing enabled: (\d+) files deleted, (\d+) files added, (\d+) files changed"
)


def parse_summary(target: Path) -> str:
    """What dbt said of its parse, from its log in the call's folder (`DBT_LOG_PATH`; the parse
    is logged in the first kilobytes, the build's debug log after it can run to megabytes)."""
    try:
        with (target / "dbt.log").open(errors="replace") as log:
            text = log.read(1 << 20)
    except FileNotFoundError:
        text = ""
    if whole := re.search(r"Unable to do partial parsing because ([^\"\n]+)", text):
        return f"dbt parse: the whole project ({whole[1].strip()})"
    if partial := re.search(PARTIAL_PARSE_COUNTS, text):
        deleted, added, changed = partial.groups()
        return (
            "dbt parse: the saved parse of this working copy reused "
            f"({deleted} files deleted, {added} added, {changed} changed)"
        )
    return "dbt parse: not in dbt's log (DBT_LOG_LEVEL_FILE=none, or dbt stopped first)"


def build_dbt_assets(project: DbtProject) -> dg.AssetsDefinition:
    """The dbt assets of a prepared project (reads its manifest: call at definitions load).

    `dbt build` runs on the working copy under the writer lock and publishes it only when every
    model and test passed (dagster-dbt raises at the end of the stream otherwise)."""
    manifest = json.loads(project.manifest_path.read_text())

    @dbt_assets(
        manifest=project.manifest_path,
        project=project,
        dagster_dbt_translator=AreaTranslator(),
        pool=WAREHOUSE_WRITER_POOL,
    )
    def qct2i_dbt_models(
        context: dg.AssetExecutionContext, dbt: DbtCliResource, config: DbtBuildConfig
    ):
        warehouse = Warehouse(warehouse_path())
        # Materialisations are reported once the build is published, since readers see nothing
        # before, and then carry figures read from the published file (issue 13); a failed
        # build still reports what dbt built and tested before it fails.
        events = []
        try:
            with writer_lock(warehouse, f"dagster run {context.run_id}", writer_wait_s()):
                working = prepare_working_copy(warehouse)
                build = planned_build(context, working, config, manifest)
                context.log.info(build.summary)
                parse = saved_parse(context, dbt, working, build.args)
                with dbt_writes_to(working), parse as target:
                    invocation = dbt.cli(build.args, context=context, target_path=target)
                    for event in invocation.stream():
                        events.append(event)
                stamp = publish(warehouse, build_vars=config.vars, build_inputs=build.inputs)
                # dagster-dbt gives each invocation a folder of its own under target/ (4-14 MB of
                # compiled SQL and parse) and never removes it; a failed build's stays to be read
                shutil.rmtree(invocation.target_path, ignore_errors=True)
        except Exception:
            yield from events
            raise
        context.log.info(f"published {warehouse.published} (build {stamp['build_id']})")
        metadata = published_metadata(warehouse.published, build.summary)
        # first: a standing asset is upstream of the rebuilt ones, never downstream
        yield from standing_outputs(context, build, events, metadata)
        for event in events:
            is_output = isinstance(event, dg.Output)
            key = context.asset_key_for_output(event.output_name) if is_output else None
            yield (
                event.with_metadata({**event.metadata, **metadata[key]})
                if key in metadata
                else event
            )

    return qct2i_dbt_models


def standing_outputs(
    context: dg.AssetExecutionContext,
    build: PlannedBuild,
    events: Sequence[Any],
    metadata: Mapping[dg.AssetKey, Mapping[str, Any]],
) -> Iterator[dg.Output]:
    """An output for each selected dbt asset that the build left standing (`build.standing`) and
    dbt therefore did not report: its table is in the published file as the last build made it,
    so it is reported with the other tables of that file, its metadata saying so; its tests
    (asset checks) did not run again."""
    yielded = {event.output_name for event in events if isinstance(event, dg.Output)}
    selected = set(context.selected_output_names)
    stood = f"{build.summary}; stands as built (reads no evidence, not rebuilt)"
    for key in build.standing:  # in the order of the graph
        name = context.assets_def.get_output_name_for_asset_key(key)
        if name in selected and name not in yielded:
            yield dg.Output(None, name, metadata={**metadata.get(key, {}), "build": stood})


LEADERBOARD = dg.AssetKey(["marts", "fct_hcq_leaderboard"])
QUESTION_RECORDS = dg.AssetKey(["marts", "fct_question_records"])


def published_metadata(published: Path, build: str) -> dict[dg.AssetKey, dict[str, Any]]:
    """Per mart asset: its row count and what the build did (`build`: full and why, or which
    generators an incremental build rebuilt); on the leaderboard the leaderboard as markdown; on
    the question records the judgments missing (no usable answer) and masked (METHOD 2)."""
    counts, judgments = published_facts(published)
    metadata: dict[dg.AssetKey, dict[str, Any]] = {
        dg.AssetKey(["marts", mart]): {"dagster/row_count": rows, "build": build}
        for mart, rows in counts.items()
    }
    if LEADERBOARD in metadata:
        metadata[LEADERBOARD]["leaderboard"] = dg.MetadataValue.md(leaderboard_markdown(published))
    if QUESTION_RECORDS in metadata:
        metadata[QUESTION_RECORDS].update(
            judgments_missing=judgments.missing, judgments_masked=judgments.masked
        )
    return metadata
