"""Test helpers: build a warehouse from a bundle with the real loader and a real dbt build."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import duckdb
import pytest

from qct2i.dbt_cli import DbtFailed, run_dbt

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("DBT_SEND_ANONYMOUS_USAGE_STATS", "False")
_SESSION_DBT_TARGET = Path(tempfile.mkdtemp(prefix="qct2i-dbt-target-"))


def dbt_build(
    warehouse: Path,
    select: tuple[str, ...] = (),
    extra: tuple[str, ...] = (),
    command: str = "build",
) -> None:
    """`dbt build` (every model and test, or `select`) against `warehouse`, as a user runs it;
    `command="run"` skips the data tests."""
    try:
        run_dbt(command, warehouse, select=select, target_path=_SESSION_DBT_TARGET, extra=extra)
    except DbtFailed as failure:
        pytest.fail(str(failure))


def build_warehouse(
    bundle: Path,
    warehouse: Path,
    select: tuple[str, ...] = (),
    extra: tuple[str, ...] = (),
    command: str = "build",
) -> Path:
    from ingestion.bundle import load_bundle

    load_bundle(bundle, warehouse)
    dbt_build(warehouse, select, extra, command)
    return warehouse


def query(warehouse: Path, sql: str) -> list[tuple]:
    with duckdb.connect(str(warehouse), read_only=True) as con:
        return con.sql(sql).fetchall()
