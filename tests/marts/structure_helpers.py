"""Helpers for the structural-diagnostics tests: build only what the structure marts need."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import build_warehouse

# The structure marts with everything upstream, and the seeds that upstream tests read.
STRUCTURE_SELECTOR = ("+path:models/marts/structure", "resource_type:seed")


def build_structure_warehouse(
    bundle: Path, warehouse: Path, *extra: str, command: str = "build"
) -> Path:
    """Import, then `dbt build --select +<structure marts>` (`command="run"`: no data tests)."""
    # tests that also read marts outside the selection (singular tests) stay out
    extra = ("--indirect-selection", "cautious", *extra)
    return build_warehouse(bundle, warehouse, STRUCTURE_SELECTOR, extra, command)
