"""Where the project's files live, resolved once, and what a warehouse build of them runs."""

import os
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parent.parent
SEEDS_DIR = PROJECT_ROOT / "seeds"
DEFAULT_WAREHOUSE = PROJECT_ROOT / "warehouse" / "qct2i.duckdb"

# A warehouse build (`qct2i build`, the Dagster dbt assets, the benches) runs the seeds, models and
# data tests but not dbt's unit tests: those check the SQL on fixed fixtures, whatever the evidence,
# so they run once per `make test` (tests/marts/test_dbt_unit_tests.py), as dbt advises for
# production builds. They were about a quarter of a small build's time.
DBT_BUILD_EXCLUDES = ("--exclude-resource-type", "unit_test")


def warehouse_path() -> Path:
    """The DuckDB file named by QCT2I_WAREHOUSE (relative paths are taken from the project root)."""
    configured = os.environ.get("QCT2I_WAREHOUSE")
    if not configured:
        return DEFAULT_WAREHOUSE
    path = Path(configured)
    return path if path.is_absolute() else PROJECT_ROOT / path
