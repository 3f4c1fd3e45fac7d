"""Where the project's files live, resolved once."""

import os
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parent.parent
SEEDS_DIR = PROJECT_ROOT / "seeds"
DEFAULT_WAREHOUSE = PROJECT_ROOT / "warehouse" / "qct2i.duckdb"


def warehouse_path() -> Path:
    """The DuckDB file named by QCT2I_WAREHOUSE (relative paths are taken from the project root)."""
    configured = os.environ.get("QCT2I_WAREHOUSE")
    if not configured:
        return DEFAULT_WAREHOUSE
    path = Path(configured)
    return path if path.is_absolute() else PROJECT_ROOT / path
