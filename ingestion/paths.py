"""Where the project's files live, resolved once, and what a warehouse build of them runs."""

import os
from collections.abc import Mapping
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parent.parent
SEEDS_DIR = PROJECT_ROOT / "seeds"
DEFAULT_WAREHOUSE = PROJECT_ROOT / "warehouse" / "qct2i.duckdb"

# A warehouse build (`qct2i build`, the Dagster dbt assets, the benches) runs the seeds, models and
# data tests but not dbt's unit tests: those check the SQL on fixed fixtures, whatever the evidence,
# so they run once per `make test` (tests/marts/test_dbt_unit_tests.py), as dbt advises for
# production builds. They were about a quarter of a small build's time.
DBT_BUILD_EXCLUDES = ("--exclude-resource-type", "unit_test")

# numpy asks the kernel for transparent huge pages for each large array (madvise). Where the
# kernel's THP defrag setting is `madvise` (a common default), such a page fault may first compact
# memory, and once the warehouse files' page cache has fragmented it, the Python models stalled
# in the kernel: at paper scale the subset validation's call took 11.5-11.9 s with 4.7-5.0 s of
# system time, against 7.9-8.1 s and 0.9-1.0 s without (the same rows to the bit), and a full
# `dbt build` spent 28-30 s in the kernel against 14-16 s (bench/RESULTS.md, "Seventh session").
# So dbt runs without it, unless the user's environment says otherwise.
DBT_CHILD_DEFAULTS = {"NUMPY_MADVISE_HUGEPAGE": "0"}


def dbt_environment(environ: Mapping[str, str]) -> dict[str, str]:
    """The environment a dbt process gets: `environ`, with `DBT_CHILD_DEFAULTS` where it is
    silent."""
    return {**DBT_CHILD_DEFAULTS, **environ}


# What one of the project's own DuckDB connections may hold in memory: the dbt profile's limit
# (profiles.yml: QCT2I_DUCKDB_MEMORY_LIMIT, default 8 GB), so the Python side spills past it as
# dbt's side does, instead of taking DuckDB's default of 80 % of the machine's memory.
DEFAULT_DUCKDB_MEMORY_LIMIT = "8GB"


def duckdb_config() -> dict[str, str]:
    """`duckdb.connect(..., config=duckdb_config())` for a connection that may read or write a
    whole warehouse (mart fingerprints, an evidence release's export)."""
    limit = os.environ.get("QCT2I_DUCKDB_MEMORY_LIMIT", DEFAULT_DUCKDB_MEMORY_LIMIT)
    return {"memory_limit": limit}


def warehouse_path() -> Path:
    """The DuckDB file named by QCT2I_WAREHOUSE (relative paths are taken from the project root)."""
    configured = os.environ.get("QCT2I_WAREHOUSE")
    if not configured:
        return DEFAULT_WAREHOUSE
    path = Path(configured)
    return path if path.is_absolute() else PROJECT_ROOT / path
