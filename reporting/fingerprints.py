"""One MD5 per mart over its rows, independent of the order rows were written in: how two builds
(or an exporter's and an importer's warehouse) prove they hold the same numbers to the last bit.

A row is rendered as text with its columns in name order, and the rows are sorted by that text.
Floats render in DuckDB's shortest round-trip form, so a change in any bit of any value changes
the hash.

The MD5 is of the sorted rows joined by newlines, fed to the hash as DuckDB streams them: the
joined text was once built whole in DuckDB (`string_agg`), which took 17 GB for
`fct_question_records` at 10x paper scale (24.5 M rows); sorted under the connection's memory
limit (`duckdb_config`) and streamed, the same digest holds a batch at a time.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import duckdb
import numpy as np
import pyarrow as pa

from ingestion.paths import duckdb_config
from reporting.facts import mart_names

ROWS_PER_BATCH = 100_000


def mart_fingerprints(warehouse: Path) -> dict[str, dict]:
    """{mart: {rows, columns, md5}} for every relation in schema `marts`."""
    with duckdb.connect(str(warehouse), read_only=True, config=duckdb_config()) as con:
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
    # sorted by the row; each row with its newline, so a batch's string data is its rows joined
    batches = con.sql(
        f"select r || chr(10) from (select concat_ws('|', {rendered}) as r "
        f'from marts."{mart}") order by r'
    ).to_arrow_reader(ROWS_PER_BATCH)
    digest, rows, last_newline = hashlib.md5(), 0, b""
    for batch in batches:
        if not batch.num_rows:
            continue
        text = _string_data(batch.column(0))
        digest.update(last_newline)  # the newline that ends the previous row, now not the last
        digest.update(text[:-1])
        last_newline, rows = text[-1:], rows + batch.num_rows
    return {"rows": rows, "columns": columns, "md5": digest.hexdigest()}


def _string_data(strings: pa.Array) -> memoryview:
    """The UTF-8 bytes of a string array's values, end to end (a view, not a copy)."""
    width = np.int64 if pa.types.is_large_string(strings.type) else np.int32
    _, offsets, data = strings.buffers()
    ends = np.frombuffer(offsets, dtype=width)[strings.offset : strings.offset + len(strings) + 1]
    return memoryview(data)[int(ends[0]) : int(ends[-1])]
