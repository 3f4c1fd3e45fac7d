"""The evidence bundle's tables: one home for their names, columns and types (CONTRACTS.md).

A bundle is a folder holding one file per table, `<table>.jsonl` or `<table>.parquet`, with the same
columns either way. The raw warehouse tables carry the same columns, plus `question_order` on
`questions` (the question's 1-based position within its prompt, in file order), which the structural
analyses use to order question pairs.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq


@dataclass(frozen=True)
class Column:
    name: str
    type: pa.DataType
    nullable: bool = False

    @property
    def duckdb_type(self) -> str:
        return _DUCKDB_TYPES[self.type]


_LIST_OF_STRINGS = pa.list_(pa.string())
_DUCKDB_TYPES = {
    pa.string(): "VARCHAR",
    pa.float64(): "DOUBLE",
    pa.int64(): "BIGINT",
    _LIST_OF_STRINGS: "VARCHAR[]",
}


@dataclass(frozen=True)
class TableSpec:
    name: str
    required: bool
    columns: tuple[Column, ...]

    @property
    def schema(self) -> pa.Schema:
        return pa.schema([pa.field(c.name, c.type, nullable=c.nullable) for c in self.columns])

    @property
    def column_names(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.columns)


_STRING = pa.string()


def _c(name: str, type_: pa.DataType = _STRING, nullable: bool = False) -> Column:
    return Column(name, type_, nullable)


TABLES: dict[str, TableSpec] = {
    spec.name: spec
    for spec in (
        TableSpec(
            "prompts",
            True,
            (_c("prompt_id"), _c("concept_id"), _c("language"), _c("source"), _c("text")),
        ),
        TableSpec(
            "questions",
            True,
            (
                _c("prompt_id"),
                _c("question_id"),
                _c("text"),
                _c("capability"),
                _c("parents", _LIST_OF_STRINGS),
                _c("entity", nullable=True),
                _c("text_target", nullable=True),
            ),
        ),
        TableSpec(
            "generators",
            False,
            (
                _c("model_id"),
                _c("display_name"),
                _c("cost_gpu_s_per_mp", pa.float64(), nullable=True),
            ),
        ),
        TableSpec(
            "images",
            False,
            (
                _c("image_id"),
                _c("prompt_id"),
                _c("model_id"),
                _c("width", pa.int64()),
                _c("height", pa.int64()),
                _c("latency_s", pa.float64()),
                _c("gpus", pa.int64()),
                _c("path", nullable=True),
            ),
        ),
        TableSpec(
            "judgments",
            True,
            (
                _c("prompt_id"),
                _c("model_id"),
                _c("question_id"),
                _c("answer", nullable=True),
                _c("p_yes", pa.float64(), nullable=True),
            ),
        ),
        TableSpec(
            "transcriptions",
            False,
            (
                _c("prompt_id"),
                _c("model_id"),
                _c("status"),
                _c("blocks", _LIST_OF_STRINGS),
            ),
        ),
    )
}

BUNDLE_FORMATS = ("jsonl", "parquet")


def write_bundle(
    folder: Path, tables: Mapping[str, Iterable[Mapping]], fmt: str = "jsonl"
) -> list[Path]:
    """Write rows (dicts keyed by the contract's column names) as a bundle folder in `fmt`."""
    if fmt not in BUNDLE_FORMATS:
        raise ValueError(f"unknown bundle format {fmt!r}; expected one of {BUNDLE_FORMATS}")
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for name, rows in tables.items():
        spec = TABLES[name]
        path = folder / f"{name}.{fmt}"
        if fmt == "jsonl":
            with path.open("w", encoding="utf-8") as out:
                for row in rows:
                    record = {col: row.get(col) for col in spec.column_names}
                    out.write(json.dumps(record, ensure_ascii=False) + "\n")
        else:
            rows = list(rows)
            columns = {c: [row.get(c) for row in rows] for c in spec.column_names}
            pq.write_table(pa.table(columns, schema=spec.schema), path)
        written.append(path)
    return written
