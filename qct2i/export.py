"""`qct2i export-marts DIR`: a Parquet file per mart of the published warehouse, for tools that
read files rather than connect (CONTRACTS "Additions").

Each file is written under a temporary name and renamed into place, so a reader of DIR never sees
half a file; the published warehouse is opened read-only, so a running build is not disturbed.
"""

from __future__ import annotations

import os
from pathlib import Path

import duckdb

from reporting.facts import mart_names


def export_marts(warehouse: Path, folder: Path) -> dict[str, int]:
    """Write `<folder>/<mart>.parquet` for every relation in schema `marts`; returns row counts."""
    folder.mkdir(parents=True, exist_ok=True)
    counts = {}
    with duckdb.connect(str(warehouse), read_only=True) as con:
        for mart in mart_names(con):
            target = folder / f"{mart}.parquet"
            partial = folder / f".{mart}.parquet.partial"
            con.execute(f"copy marts.{mart} to '{partial}' (format parquet)")
            os.replace(partial, target)
            counts[mart] = con.execute(f"select count(*) from marts.{mart}").fetchone()[0]
    return counts
