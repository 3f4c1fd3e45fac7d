"""The good evidence bundle of the bundle tests: every table of CONTRACTS.md, written out by
hand (`GOOD`; line numbers in the tests are positions in its lists, counted from 1), and the
helpers that write it, break it in one place and read back what the importer said or stored.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from pathlib import Path

import duckdb
import pytest

from ingestion.bundle import BundleError, Problem, read_bundle
from ingestion.bundle.format import write_bundle

TAXONOMY = {"animals", "color", "spatial", "text_rendering", "style"}


def rows(columns: str, *values: tuple) -> list[dict]:
    names = columns.split()
    return [dict(zip(names, row, strict=True)) for row in values]


GOOD: dict[str, list[dict]] = {
    "prompts": rows(
        "prompt_id concept_id language source text",
        ("p1", "c1", "en", "dsg", "a dog"),
        ("p2", "c1", "zh", "dsg", "一只狗"),
        ("p3", "c2", "en", "own", "a sign"),
    ),
    # p1's questions interleave with p2's so that question_order is not the line number.
    "questions": rows(
        "prompt_id question_id text capability parents entity text_target",
        ("p1", "q1", "dog?", "animals", [], "dog", None),
        ("p1", "q2", "red?", "color", ["q1"], None, None),
        ("p2", "q1", "狗?", "animals", [], "dog", None),
        ("p1", "q3", "left?", "spatial", ["q1", "q2"], None, None),
        ("p2", "q2", "红?", "color", ["q1"], None, None),
        ("p3", "q1", "says hi?", "text_rendering", [], None, "hi"),
    ),
    "generators": rows(
        "model_id display_name cost_gpu_s_per_mp",
        ("m1", "Model One", 10.5),
        ("m2", "Model Two", None),
    ),
    "images": rows(
        "image_id prompt_id model_id width height latency_s gpus path",
        ("i1", "p1", "m1", 1024, 1024, 3.5, 1, "img/i1.png"),
        ("i2", "p2", "m1", 1024, 768, 0.0, 2, None),
        ("i3", "p1", "m2", 512, 512, 1.25, 1, None),
    ),
    "judgments": rows(
        "prompt_id model_id question_id answer p_yes",
        ("p1", "m1", "q1", "yes", 0.9),
        ("p1", "m1", "q2", "no", 0.2),
        ("p1", "m1", "q3", "yes", 1.0),
        ("p2", "m1", "q1", "yes", None),
        ("p2", "m1", "q2", "no", 0.0),
        ("p3", "m1", "q1", "yes", 0.7),
        ("p1", "m2", "q1", "yes", 0.6),
        ("p1", "m2", "q2", "yes", 0.8),
        ("p1", "m2", "q3", None, None),
    ),
    "transcriptions": rows(
        "prompt_id model_id status blocks",
        ("p3", "m1", "ok", ["hi", "there"]),
        ("p3", "m2", "unavailable", []),
    ),
}


def good() -> dict[str, list[dict]]:
    return copy.deepcopy(GOOD)


# The rows of each table of `good()`, counted by hand from the tables above.
GOOD_ROWS = {
    "prompts": 3,
    "questions": 6,
    "generators": 2,
    "images": 3,
    "judgments": 9,
    "transcriptions": 2,
    "ratings": 0,
    "conversion_report": 0,
}


def write(folder: Path, tables: dict[str, list[dict]], fmt: str = "jsonl") -> Path:
    write_bundle(folder, tables, fmt)
    return folder


def problems_of(folder: Path, capabilities: set[str] = TAXONOMY) -> list[Problem]:
    with pytest.raises(BundleError) as refused:
        read_bundle(folder, capabilities)
    return refused.value.problems


def the_problem(folder: Path) -> Problem:
    """The single problem of a bundle broken in one place: no echoes of it elsewhere."""
    problems = problems_of(folder)
    assert len(problems) == 1, [str(p) for p in problems]
    return problems[0]


def assert_problem(problem: Problem, file: str, line: int | None, fragment: str) -> None:
    assert (problem.file, problem.line) == (file, line), str(problem)
    assert fragment in problem.reason, str(problem)


def raw_rows(warehouse: Path, *, skip: tuple[str, ...] = ()) -> dict[str, list[tuple]]:
    """Every raw table's rows in a stable order (the import time is left out where asked)."""
    with duckdb.connect(str(warehouse), read_only=True) as con:
        names = [
            row[0]
            for row in con.execute(
                "SELECT table_name FROM information_schema.tables WHERE table_schema = 'raw'"
            ).fetchall()
        ]
        result = {}
        for name in sorted(names):
            columns = [
                c
                for (c,) in con.execute(
                    "SELECT column_name FROM information_schema.columns "
                    "WHERE table_schema = 'raw' AND table_name = ? ORDER BY ordinal_position",
                    [name],
                ).fetchall()
                if c not in skip
            ]
            listed = ", ".join(columns)
            query = f"SELECT {listed} FROM raw.{name} ORDER BY ALL"
            result[name] = [tuple(columns), *con.execute(query).fetchall()]
        return result


Build = Callable[[Path], None]  # writes a (broken) bundle into an empty folder


def with_value(table: str, row: int, column: str, value, fmt: str = "jsonl") -> Build:
    """GOOD with one value replaced, written by the project's own writer."""

    def build(folder: Path) -> None:
        tables = good()
        tables[table][row - 1][column] = value
        write(folder, tables, fmt)

    return build
