"""Test helpers: build a warehouse from a bundle with the real loader and a real dbt build."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import duckdb
import pytest

from ingestion.paths import PROJECT_ROOT

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("DBT_SEND_ANONYMOUS_USAGE_STATS", "False")
_SESSION_DBT_TARGET = Path(tempfile.mkdtemp(prefix="qct2i-dbt-target-"))


def dbt_build(warehouse: Path) -> None:
    """`dbt build` (every model and test) against `warehouse` in a child process, as a user runs it.

    A child process, not dbtRunner: dbt-duckdb keeps its DuckDB instance open in the process that
    ran it, which would block the tests' own read-only connections to the same file.
    """
    env = {**os.environ, "QCT2I_WAREHOUSE": str(warehouse)}
    dbt = Path(sys.executable).parent / "dbt"
    # A target folder of this test session's own, so parallel sessions never share dbt state.
    target = _SESSION_DBT_TARGET
    result = subprocess.run(
        [
            str(dbt),
            "build",
            "--project-dir",
            str(PROJECT_ROOT),
            "--profiles-dir",
            str(PROJECT_ROOT),
            "--target-path",
            str(target),
            "--log-path",
            str(target),
        ],
        env=env,
        capture_output=True,
        text=True,
    )
    if result.returncode != 0:
        pytest.fail(f"dbt build failed:\n{result.stdout[-5000:]}\n{result.stderr[-2000:]}")


def build_warehouse(bundle: Path, warehouse: Path) -> Path:
    from ingestion.bundle import load_bundle

    load_bundle(bundle, warehouse)
    dbt_build(warehouse)
    return warehouse


def query(warehouse: Path, sql: str) -> list[tuple]:
    with duckdb.connect(str(warehouse), read_only=True) as con:
        return con.sql(sql).fetchall()
