"""Helpers for the structural-diagnostics tests: build only what the structure marts need."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from qct2i.dbt_cli import DbtFailed, run_dbt

# The structure marts with everything upstream, and the seeds that upstream tests read.
STRUCTURE_SELECTOR = ("+path:models/marts/structure", "resource_type:seed")
DBT_TARGET = Path(tempfile.mkdtemp(prefix="qct2i-structure-target-"))


def dbt_build_structure(warehouse: Path, *extra: str, command: str = "build") -> None:
    """`dbt build --select +<structure marts>` against `warehouse` in a child process.

    `command="run"` skips the data tests (for repeated simulator worlds)."""
    try:
        run_dbt(
            command,
            warehouse,
            select=STRUCTURE_SELECTOR,
            target_path=DBT_TARGET,
            # tests that also read marts outside the selection (singular tests) stay out
            extra=("--indirect-selection", "cautious", *extra),
        )
    except DbtFailed as failure:
        pytest.fail(str(failure))


def build_structure_warehouse(
    bundle: Path, warehouse: Path, *extra: str, command: str = "build"
) -> Path:
    from ingestion.bundle import load_bundle

    load_bundle(bundle, warehouse)
    dbt_build_structure(warehouse, *extra, command=command)
    return warehouse
