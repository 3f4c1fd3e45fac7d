"""Shared test helpers: build a warehouse from a bundle with the real loader and a real dbt build
(through the app's one dbt runner), and read it."""

from __future__ import annotations

import tempfile
from pathlib import Path

import duckdb
import pytest

from qct2i.dbt_runner import DbtFailed, run_dbt

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


# The structure marts with everything upstream, and the seeds that upstream tests read.
STRUCTURE_SELECTOR = ("+path:models/marts/structure", "resource_type:seed")


def build_structure_warehouse(
    bundle: Path, warehouse: Path, *extra: str, command: str = "build"
) -> Path:
    """Import, then `dbt build --select +<structure marts>` (`command="run"`: no data tests)."""
    # tests that also read marts outside the selection (singular tests) stay out
    extra = ("--indirect-selection", "cautious", *extra)
    return build_warehouse(bundle, warehouse, STRUCTURE_SELECTOR, extra, command)
