"""Print, as JSON, each mart's row count and a fingerprint of its rows, read from a DuckDB file
read-only: `python mart_fingerprints.py WAREHOUSE`.

Run by the project's DuckDB and by the older DuckDB releases BI tools bundle (`.venv-duckdb-*`,
which hold duckdb and nothing else: this file imports nothing else), so that each reader computes
its own figures and the test compares them. The fingerprint is Python's: the SHA-256 of the rows'
`repr`s, sorted, so neither DuckDB's row order nor its text casts (which may change between
releases) enter it; a value a release reads differently (a float, a decimal, a timestamp, a list)
changes it.
"""

from __future__ import annotations

import hashlib
import json
import sys

import duckdb


def fingerprints(warehouse: str) -> dict:
    con = duckdb.connect(warehouse, read_only=True)
    try:
        marts = [
            name
            for (name,) in con.execute(
                "select table_name from information_schema.tables "
                "where table_schema = 'marts' order by table_name"
            ).fetchall()
        ]
        figures = {mart: _fingerprint(con, mart) for mart in marts}
    finally:
        con.close()
    return {"duckdb": duckdb.__version__, "marts": figures}


def _fingerprint(con, mart: str) -> dict:
    cursor = con.execute(f'select * from marts."{mart}"')
    columns = [column[0] for column in cursor.description]
    rows = sorted(repr(row) for row in cursor.fetchall())
    digest = hashlib.sha256("\n".join(rows).encode("utf-8")).hexdigest()
    return {"columns": columns, "rows": len(rows), "sha256": digest}


if __name__ == "__main__":
    json.dump(fingerprints(sys.argv[1]), sys.stdout, indent=1, sort_keys=True)
