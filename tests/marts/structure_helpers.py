"""Helpers for the structural-diagnostics tests: build only what the structure marts need."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from ingestion.paths import PROJECT_ROOT

# The structure marts with everything upstream, and the seeds that upstream tests read.
STRUCTURE_SELECTOR = ("+path:models/marts/structure", "resource_type:seed")
_TARGET = Path(tempfile.mkdtemp(prefix="qct2i-structure-target-"))


def dbt_build_structure(warehouse: Path, *extra: str, command: str = "build") -> None:
    """`dbt build --select +<structure marts>` against `warehouse` in a child process.

    `command="run"` skips the data tests (for repeated simulator worlds)."""
    env = {**os.environ, "QCT2I_WAREHOUSE": str(warehouse)}
    dbt = Path(sys.executable).parent / "dbt"
    argv = [
        str(dbt),
        command,
        "--project-dir",
        str(PROJECT_ROOT),
        "--profiles-dir",
        str(PROJECT_ROOT),
        "--target-path",
        str(_TARGET),
        "--log-path",
        str(_TARGET),
        "--select",
        *STRUCTURE_SELECTOR,
        # tests that also read marts outside the selection (singular tests) stay out
        "--indirect-selection",
        "cautious",
        *extra,
    ]
    result = subprocess.run(argv, env=env, capture_output=True, text=True)
    if result.returncode != 0:
        pytest.fail(f"dbt build failed:\n{result.stdout[-5000:]}\n{result.stderr[-2000:]}")


def build_structure_warehouse(
    bundle: Path, warehouse: Path, *extra: str, command: str = "build"
) -> Path:
    from ingestion.bundle import load_bundle

    load_bundle(bundle, warehouse)
    dbt_build_structure(warehouse, *extra, command=command)
    return warehouse
