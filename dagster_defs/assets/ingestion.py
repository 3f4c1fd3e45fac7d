"""Evidence in: the simulator and the bundle import, feeding the raw tables that dbt reads.

Each asset opens DuckDB, writes and closes inside `ingestion`, so no connection is held while dbt
runs (DuckDB allows one writer process per file). The import writes the working copy under the
writer lock (`ingestion.store.warehouse`); readers see it when the dbt assets publish.

The bundle's validation shows as an asset check on every raw table, `bundle_valid`: passed when
the import took the bundle; when it refused it, failed on each table whose file holds a problem,
the problems (file:line: reason) in the check's metadata, so the UI shows which table refused an
import. A problem of no table's file (the manifest, the command line's --replace-model) refuses
the bundle as a whole and fails every table's check.
"""

from collections.abc import Iterator
from dataclasses import fields
from pathlib import Path, PurePosixPath

import dagster as dg
import duckdb
from pydantic import Field

from dagster_defs.assets.dbt import WAREHOUSE_WRITER_POOL
from dagster_defs.assets.evidence import TRANSCRIBED_IMAGES_KEY
from dagster_defs.assets.generation import GENERATED_IMAGES_KEY, JUDGED_IMAGES_KEY
from ingestion.bundle import BundleError, load_bundle
from ingestion.bundle.append import append_bundle
from ingestion.bundle.format import TABLES
from ingestion.bundle.problems import Problem
from ingestion.paths import warehouse_path
from ingestion.sources import simulator
from ingestion.store.warehouse import Warehouse, prepare_working_copy, writer_lock, writer_wait_s
from reporting.facts import row_counts

RAW_TABLE_KEYS = {name: dg.AssetKey(["raw", name]) for name in TABLES}
BUNDLE_CHECK = "bundle_valid"  # the bundle's validation, one asset check per raw table
SHOWN_PROBLEMS = 50  # in a check's metadata, as the importer shows the first 50 per table


def default_simulated_bundle_dir() -> Path:
    return warehouse_path().parent / "bundles" / "simulated"


_SIMULATION = simulator.SimulationConfig()  # the defaults a run config starts from


class SimulatorConfig(dg.Config):
    """The `simulated_bundle` run config: the `SimulationConfig` fields a run may set, with its
    defaults, and the bundle's folder."""

    concepts: int = _SIMULATION.concepts
    seed: int = _SIMULATION.seed
    coupling: float = _SIMULATION.coupling
    bundle_format: str = _SIMULATION.fmt
    out_dir: str | None = None

    def simulation(self) -> simulator.SimulationConfig:
        """The world this run simulates; the fields a run config cannot set keep their defaults."""
        return simulator.SimulationConfig(
            concepts=self.concepts, seed=self.seed, coupling=self.coupling, fmt=self.bundle_format
        )

    @classmethod
    def of(cls, simulation: simulator.SimulationConfig) -> "SimulatorConfig":
        """The run config that simulates `simulation` (`qct2i demo` builds its run with it);
        refused when `simulation` sets a field a run config cannot carry."""
        carried = {"concepts", "seed", "coupling", "fmt"}
        lost = [
            f.name
            for f in fields(simulation)
            if f.name not in carried and getattr(simulation, f.name) != getattr(_SIMULATION, f.name)
        ]
        if lost:
            raise ValueError(f"the simulated_bundle run config cannot set {', '.join(lost)}")
        return cls(
            concepts=simulator.parse_scale(simulation.concepts),
            seed=simulation.seed,
            coupling=simulation.coupling,
            bundle_format=simulation.fmt,
        )


@dg.asset(
    group_name="ingestion",
    description="A calibrated simulated world written as an evidence bundle.",
)
def simulated_bundle(
    context: dg.AssetExecutionContext, config: SimulatorConfig
) -> dg.MaterializeResult:
    out_dir = Path(config.out_dir) if config.out_dir else default_simulated_bundle_dir()
    summary = simulator.simulate(out_dir, config.simulation())
    context.log.info(f"simulated {config.concepts} concepts into {out_dir}")
    return dg.MaterializeResult(
        metadata={
            "path": str(out_dir),
            "concepts": config.concepts,
            "seed": config.seed,
            **{f"rows_{k}": v for k, v in summary.row_counts.items()},
        }
    )


class BundleImportConfig(dg.Config):
    folder: str | None = None  # default: the simulated bundle's folder
    # `qct2i import --append`: add to the stored evidence by natural key (docs/importing.md,
    # "Adding evidence"), swapping the named generators' and judges' slices
    append: bool = False
    replace_models: list[str] = Field(default_factory=list)
    replace_judges: list[str] = Field(default_factory=list)
    # `qct2i import --image-root`: folders besides the bundle's that images.path may lead into
    image_roots: list[str] = Field(default_factory=list)


# The GPU path writes its bundle with these assets (dagster_defs/assets/generation.py); the
# import loads whichever bundle the run names, so both sources are upstream of the raw tables.
GPU_PRODUCERS = {
    "images": GENERATED_IMAGES_KEY,
    "judgments": JUDGED_IMAGES_KEY,
    "transcriptions": TRANSCRIBED_IMAGES_KEY,
}


def raw_table_deps(name: str) -> list:
    """The simulator, and the GPU asset that writes this table's bundle file, if any."""
    return [simulated_bundle, *([GPU_PRODUCERS[name]] if name in GPU_PRODUCERS else [])]


def _table_of(problem: Problem) -> str | None:
    """The raw table whose bundle file (`judgments.jsonl`, `.parquet`) the problem is in."""
    table = PurePosixPath(problem.file).name.split(".")[0]
    return table if table in RAW_TABLE_KEYS else None


def bundle_check_results(problems: list[Problem]) -> Iterator[dg.AssetCheckResult]:
    """Each raw table's `bundle_valid`: failed with its file's problems and with those of the
    bundle as a whole (no problems: passed)."""
    whole = [str(problem) for problem in problems if _table_of(problem) is None]
    for name, key in RAW_TABLE_KEYS.items():
        own = [str(problem) for problem in problems if _table_of(problem) == name]
        metadata: dict = {"problems": len(own)}
        if whole:
            metadata["bundle_problems"] = len(whole)
        if own or whole:
            shown = (own + whole)[:SHOWN_PROBLEMS]
            metadata["refused"] = dg.MetadataValue.md("```\n" + "\n".join(shown) + "\n```")
        yield dg.AssetCheckResult(
            asset_key=key, check_name=BUNDLE_CHECK, passed=not (own or whole), metadata=metadata
        )


@dg.multi_asset(
    specs=[
        dg.AssetSpec(
            key,
            deps=raw_table_deps(name),
            group_name="raw",
            description=f"Raw `{name}` table of the imported evidence bundle.",
        )
        for name, key in RAW_TABLE_KEYS.items()
    ],
    check_specs=[
        dg.AssetCheckSpec(
            BUNDLE_CHECK,
            asset=key,
            description=f"The bundle's `{name}` file passed the import's validation "
            "(docs/refusals.md); failed with its problems when the import refused the bundle.",
        )
        for name, key in RAW_TABLE_KEYS.items()
    ],
    name="import_bundle",
    pool=WAREHOUSE_WRITER_POOL,
)
def import_bundle(context: dg.AssetExecutionContext, config: BundleImportConfig):
    """Validate a bundle; replace (or, with `append`, add to) the working copy's raw tables in one
    transaction (refusal writes nothing); the dbt assets publish the working copy once every test
    passed."""
    folder = Path(config.folder) if config.folder else default_simulated_bundle_dir()
    if (config.replace_models or config.replace_judges) and not config.append:
        raise dg.Failure(description="replace_models / replace_judges need append: true")
    warehouse = Warehouse(warehouse_path())
    with writer_lock(warehouse, f"dagster run {context.run_id}", writer_wait_s()):
        working = prepare_working_copy(warehouse)
        try:
            added = _import(folder, working, config)
        except BundleError as refused:  # the problems, not a traceback, in the run's failure
            yield from bundle_check_results(refused.problems)
            raise dg.Failure(description=str(refused)) from None
        with duckdb.connect(str(working), read_only=True) as con:
            totals = row_counts(con, "raw")
    context.log.info(f"imported {folder}: {added}")
    passed = {result.asset_key: result for result in bundle_check_results([])}
    for name, key in RAW_TABLE_KEYS.items():
        rows = totals.get(name, 0)
        metadata = {"rows": rows, "dagster/row_count": rows, "bundle": str(folder)}
        if config.append:
            metadata["rows_added"] = added.get(name, 0)
        yield dg.MaterializeResult(asset_key=key, metadata=metadata, check_results=[passed[key]])


def _import(folder: Path, working: Path, config: BundleImportConfig) -> dict[str, int]:
    """Rows the bundle brought per table (for an append: the rows it added)."""
    image_roots = [Path(root) for root in config.image_roots]
    if not config.append:
        return load_bundle(folder, working, image_roots=image_roots)
    result = append_bundle(
        folder,
        working,
        config.replace_models,
        replace_judges=config.replace_judges,
        image_roots=image_roots,
    )
    return result.added
