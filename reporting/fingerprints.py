"""One MD5 per mart over its rows, independent of the order rows were written in: how two builds
(or an exporter's and an importer's warehouse) prove they hold the same numbers to the last bit.

A row is rendered as text with its columns in name order, and the rows are sorted by that text.
Floats render in DuckDB's shortest round-trip form, so a change in any bit of any value changes
the hash.
"""

from __future__ import annotations

from pathlib import Path

import duckdb

from reporting.facts import mart_names


def mart_fingerprints(warehouse: Path) -> dict[str, dict]:
    """{mart: {rows, columns, md5}} for every relation in schema `marts`."""
    with duckdb.connect(str(warehouse), read_only=True) as con:
        return fingerprints_of(con)


def fingerprints_of(con: duckdb.DuckDBPyConnection) -> dict[str, dict]:
    """`mart_fingerprints` on an open connection (an export reads evidence and marts in one)."""
    return {mart: _fingerprint(con, mart) for mart in mart_names(con)}


def _fingerprint(con: duckdb.DuckDBPyConnection, mart: str) -> dict:
    columns = sorted(
        name
        for (name,) in con.execute(
            "select column_name from information_schema.columns "
            "where table_schema = 'marts' and table_name = ?",
            [mart],
        ).fetchall()
    )
    rendered = ", ".join(f"coalesce(cast(\"{c}\" as varchar), '∅')" for c in columns)
    rows, digest = con.execute(
        "select count(*), md5(coalesce(string_agg(r, chr(10) order by r), '')) "
        f"from (select concat_ws('|', {rendered}) as r from marts.\"{mart}\")"
    ).fetchall()[0]
    return {"rows": rows, "columns": columns, "md5": digest}
