"""Facts about a published warehouse that the report's header and Dagster's asset metadata share:
the marts it holds and their row counts, where its evidence came from, and how many judgments
are missing or masked (METHOD 2)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import duckdb


def relation_names(con: duckdb.DuckDBPyConnection, schema: str) -> list[str]:
    """Every table or view in `schema`, by name."""
    return [
        row[0]
        for row in con.execute(
            "select table_name from information_schema.tables "
            "where table_schema = ? order by table_name",
            [schema],
        ).fetchall()
    ]


def mart_names(con: duckdb.DuckDBPyConnection) -> list[str]:
    """Every relation in schema `marts`, by name."""
    return relation_names(con, "marts")


def has_relation(con: duckdb.DuckDBPyConnection, schema: str, name: str) -> bool:
    return name in relation_names(con, schema)


def row_counts(con: duckdb.DuckDBPyConnection, schema: str) -> dict[str, int]:
    """Rows of every relation in `schema`."""
    return {
        name: con.execute(f'select count(*) from {schema}."{name}"').fetchall()[0][0]
        for name in relation_names(con, schema)
    }


def column_names(con: duckdb.DuckDBPyConnection, schema: str, name: str) -> list[str]:
    return [
        row[0]
        for row in con.execute(
            "select column_name from information_schema.columns "
            "where table_schema = ? and table_name = ? order by ordinal_position",
            [schema, name],
        ).fetchall()
    ]


@dataclass(frozen=True)
class JudgmentCounts:
    """Question records (model x prompt x question, METHOD 1) and how many lack evidence.

    `missing`: no usable answer (a null answer or no judgment row at all); `masked`: answered, but
    a prerequisite failed or is missing, so the record is invalid (METHOD 2)."""

    records: int
    missing: int
    masked: int


def judgment_counts(con: duckdb.DuckDBPyConnection) -> JudgmentCounts:
    records, missing, masked = con.execute(
        "select count(*), count(*) filter (where outcome is null), "
        "count(*) filter (where outcome is not null and not is_valid) "
        "from marts.fct_question_records"
    ).fetchall()[0]
    return JudgmentCounts(records=records, missing=missing, masked=masked)


def published_facts(warehouse: Path) -> tuple[dict[str, int], JudgmentCounts]:
    """Row counts of every mart and the judgment counts, read-only from `warehouse`."""
    with duckdb.connect(str(warehouse), read_only=True) as con:
        return row_counts(con, "marts"), judgment_counts(con)
