"""Shared test helpers: build a warehouse from a bundle with the real loader and a real dbt build
(through the app's one dbt runner), and read it."""

from __future__ import annotations

import tempfile
from itertools import permutations
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


# Independent references for Eq. 3, written from the definition (METHOD 3), sharing no code with
# method.text_match: the text-match tests and the router replay compare against them.


def reference_units(text: str) -> list[int]:
    """UTF-16 code units by the surrogate formula, not by the codec the code under test uses."""
    units = []
    for char in text:
        code = ord(char)
        if code < 0x10000:
            units.append(code)
        else:
            code -= 0x10000
            units += [0xD800 + (code >> 10), 0xDC00 + (code & 0x3FF)]
    return units


def reference_levenshtein(a: list[int], b: list[int]) -> int:
    """Textbook Wagner-Fischer table: unit-cost insert, delete and substitute."""
    table = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i in range(len(a) + 1):
        table[i][0] = i
    for j in range(len(b) + 1):
        table[0][j] = j
    for i in range(1, len(a) + 1):
        for j in range(1, len(b) + 1):
            substitute = table[i - 1][j - 1] + (0 if a[i - 1] == b[j - 1] else 1)
            table[i][j] = min(table[i - 1][j] + 1, table[i][j - 1] + 1, substitute)
    return table[len(a)][len(b)]


def reference_capped(target: str, block: str) -> int:
    target_units = reference_units(target)
    return min(reference_levenshtein(target_units, reference_units(block)), len(target_units))


def reference_text_match(targets: list[str], blocks: list[str]) -> tuple[int, int]:
    """Every injective assignment of targets to blocks (or to nothing), the cheapest kept."""
    lengths = [len(reference_units(t)) for t in targets]
    best = sum(lengths)
    slots = list(range(len(blocks))) + [None] * len(targets)
    for chosen in permutations(slots, len(targets)):
        cost = sum(
            lengths[i] if j is None else reference_capped(targets[i], blocks[j])
            for i, j in enumerate(chosen)
        )
        best = min(best, cost)
    return best, sum(lengths)
