"""The evidence bundle's tables: one home for their names, columns and types (CONTRACTS.md).

A bundle is a folder holding one file per table, `<table>.jsonl` or `<table>.parquet`, with the same
columns either way. The raw warehouse tables carry the same columns (a column's `default` stored
in place of a null), plus `question_order` on `questions` (the question's 1-based position within
its prompt, in file order), which the structural analyses use to order question pairs.
"""

from __future__ import annotations

import json
import re
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
    # The value a missing or null entry stands for (CONTRACTS "Additions": `judge_id` defaults to
    # `default`). The reader stores it in place of the null, so the duplicate check, the append's
    # key matching and the raw tables all see one value.
    default: str | None = None

    @property
    def duckdb_type(self) -> str:
        return _DUCKDB_TYPES[self.type]

    @property
    def is_safe_id_column(self) -> bool:
        """Whether the column holds an id that must be safe as a file name (`is_safe_id`). A hub
        id (`owner/name`) names a repository on the model hub, never a file here."""
        return self.type == pa.string() and self.name.endswith("_id") and self.name != "hub_id"


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
    # The natural key: unique within a bundle, and what an appended row is matched on.
    key: tuple[str, ...]

    @property
    def schema(self) -> pa.Schema:
        return pa.schema([pa.field(c.name, c.type, nullable=c.nullable) for c in self.columns])

    @property
    def column_names(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.columns)


_STRING = pa.string()

# Ids may name files (the image store writes <model_id>/<prompt_id>__s<seed>.png), so every `*_id`
# of a bundle is 1-128 characters of [A-Za-z0-9._-], not starting with '.' or '-', holding no '..':
# no id can then name an absolute path, a parent folder, a hidden file, a separator, a NUL byte or a
# drive letter. Python's re and DuckDB's RE2 read the pattern alike.
SAFE_ID_PATTERN = r"[A-Za-z0-9_][A-Za-z0-9._-]{0,127}"
SAFE_ID_RULE = "1-128 characters of A-Z a-z 0-9 . _ -, not starting with . or -, no '..'"


def is_safe_id(value: object) -> bool:
    return (
        isinstance(value, str)
        and re.fullmatch(SAFE_ID_PATTERN, value) is not None
        and ".." not in value
    )


# The judge of a judgment whose bundle names none: the official judge of the marts unless the dbt
# var `official_judge` says otherwise (dbt_project.yml).
DEFAULT_JUDGE_ID = "default"


def _c(
    name: str, type_: pa.DataType = _STRING, nullable: bool = False, default: str | None = None
) -> Column:
    return Column(name, type_, nullable, default)


TABLES: dict[str, TableSpec] = {
    spec.name: spec
    for spec in (
        TableSpec(
            "prompts",
            True,
            (_c("prompt_id"), _c("concept_id"), _c("language"), _c("source"), _c("text")),
            ("prompt_id",),
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
                # CONTRACTS "Additions of the open issues": where the capability came from (the
                # release's own label, `rule:<name>`, `default:<category>`, `model:<id>`; null:
                # the bundle does not say), and the answer a compliant image gives (null = yes;
                # "no" where a converter stored the judges' answers turned to target-yes)
                _c("capability_source", nullable=True),
                _c("compliant_answer", nullable=True),
                # issue 32: the capability the question had before a model attributed it (the
                # rules', a default's or the release's), kept beside the model's; null otherwise
                _c("rule_capability", nullable=True),
            ),
            ("prompt_id", "question_id"),
        ),
        TableSpec(
            "generators",
            False,
            (
                _c("model_id"),
                _c("display_name"),
                _c("cost_gpu_s_per_mp", pa.float64(), nullable=True),
                # CONTRACTS "Additions": where the weights came from and how the cost was known
                _c("hub_id", nullable=True),
                _c("revision", nullable=True),
                _c("pipeline_class", nullable=True),
                _c("cost_source", nullable=True),
                # where a measured cost was measured (`qct2i calibrate`): the GPU model, when,
                # and the library versions (JSON), so costs from different GPUs never mix unseen
                _c("cost_gpu_model", nullable=True),
                _c("cost_measured_at", nullable=True),
                _c("cost_versions", nullable=True),
            ),
            ("model_id",),
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
                # null for images drawn elsewhere without timings: their cost is unknown
                _c("latency_s", pa.float64(), nullable=True),
                _c("gpus", pa.int64(), nullable=True),
                _c("path", nullable=True),
                # CONTRACTS "Additions": how the image was drawn
                _c("seed", pa.int64(), nullable=True),
                _c("steps", pa.int64(), nullable=True),
                _c("guidance", pa.float64(), nullable=True),
                _c("generator_revision", nullable=True),
                _c("backend", nullable=True),
            ),
            ("image_id",),
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
                # CONTRACTS "Additions": which judge answered. Several judges may answer the same
                # question of the same image, so the judge is part of the key.
                _c("judge_id", nullable=True, default=DEFAULT_JUDGE_ID),
                _c("judge_model", nullable=True),
                _c("judge_revision", nullable=True),
                _c("prompt_template_sha", nullable=True),
                # where the judge ran (issue 23): engine, its version, the GPU ("cpu" on none)
                _c("judge_engine", nullable=True),
                _c("judge_engine_version", nullable=True),
                _c("judge_gpu_model", nullable=True),
                # a Thinking judge's reasoning before its answer (issue 35), kept for audit; null
                # for a judge that answers at once. Not in the marts.
                _c("reasoning", nullable=True),
            ),
            ("prompt_id", "model_id", "question_id", "judge_id"),
        ),
        TableSpec(
            "transcriptions",
            False,
            (
                _c("prompt_id"),
                _c("model_id"),
                _c("status"),
                _c("blocks", _LIST_OF_STRINGS),
                # CONTRACTS "Additions": which OCR model read the image, and why nothing was read
                _c("ocr_model", nullable=True),
                _c("ocr_revision", nullable=True),
                _c("reason", nullable=True),
            ),
            ("prompt_id", "model_id"),
        ),
        TableSpec(
            # CONTRACTS "Additions": one human rating of one image (METHOD 15). A rater rates an
            # image once; the image of a (prompt, model) is the one the judges answered about.
            "ratings",
            False,
            (
                _c("prompt_id"),
                _c("model_id"),
                _c("rater_id"),
                _c("rating", pa.float64()),
                _c("scale"),
            ),
            ("prompt_id", "model_id", "rater_id"),
        ),
        TableSpec(
            # What a converter (`qct2i import-dsg`) repaired or dropped on the way into the bundle:
            # one row per dirty thing, with the source file and line it came from, so that the
            # marts can show what the evidence lost (issue 15). Optional: a hand-made bundle has
            # none.
            "conversion_report",
            False,
            (
                _c("source_file"),
                _c("line", pa.int64()),
                _c("dirty_class"),
                _c("action"),
                _c("reason"),
            ),
            ("source_file", "line", "dirty_class", "reason"),
        ),
    )
}

BUNDLE_FORMATS = ("jsonl", "parquet")
# The column `questions` gains in the warehouse: the question's 1-based position in its prompt.
QUESTION_ORDER = "question_order"


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
