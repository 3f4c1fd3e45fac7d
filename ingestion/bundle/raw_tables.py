"""The warehouse's raw tables: their columns, their row order, and the import log.

Every raw table is stored sorted by its natural key (`TableSpec.key`). The order rows arrived in
(file order, JSONL or Parquet, one import or several appends) then never reaches dbt, which is what
makes the marts byte-identical however the same evidence was imported: a float sum depends on the
order of its terms.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from datetime import UTC, datetime
from pathlib import Path

import duckdb
import pyarrow as pa

from ingestion.bundle.format import QUESTION_ORDER, TABLES

IMPORT_LOG = "raw.bundle_imports"

# The DuckDB storage version of the warehouse files the importer creates, and so of the published
# warehouse (docs/warehouse.md, "Storage version"): DuckDB 2.0 writes its own version, v2.0.0, by
# default, which no DuckDB 1.x opens, and keeps a file's version when it writes to it. Apache
# Superset 6.1.0's `duckdb` extra requires duckdb>=1.4.2,<2; v1.4.0 is the newest version every
# such release reads (1.4 is also DuckDB's 1.x long-term-support line). An older one would reach
# older readers at a cost (v1.0.0: the demo warehouse 8 % larger).
WAREHOUSE_STORAGE_VERSION = "v1.4.0"


@contextlib.contextmanager
def raw_transaction(warehouse: Path) -> Iterator[duckdb.DuckDBPyConnection]:
    """One transaction on the warehouse file (created if missing, in `WAREHOUSE_STORAGE_VERSION`):
    committed when the block ends, rolled back when it raises, so an import is all or nothing."""
    warehouse.parent.mkdir(parents=True, exist_ok=True)
    if not warehouse.exists():
        _create_warehouse_file(warehouse)
    con = duckdb.connect(str(warehouse))
    try:
        con.begin()
        try:
            yield con
            con.commit()
        except BaseException:
            con.rollback()
            raise
    finally:
        con.close()


def _create_warehouse_file(path: Path) -> None:
    literal = "'" + str(path).replace("'", "''") + "'"  # ATTACH takes no parameters
    with duckdb.connect() as con:
        con.execute(f"attach {literal} as new_file (storage_version '{WAREHOUSE_STORAGE_VERSION}')")


def raw_columns(name: str) -> list[tuple[str, str]]:
    """(column, DuckDB type) of the raw warehouse table `raw.<name>`."""
    columns = [(c.name, c.duckdb_type) for c in TABLES[name].columns]
    if name == "questions":
        position = [column for column, _ in columns].index("question_id") + 1
        columns.insert(position, (QUESTION_ORDER, "BIGINT"))
    return columns


def quoted(columns) -> str:
    return ", ".join(f'"{column}"' for column in columns)


def key_order(name: str) -> str:
    return quoted(TABLES[name].key)


def create_raw_table(con: duckdb.DuckDBPyConnection, name: str, replace: bool) -> None:
    """Create `raw.<name>` (anew, or if missing); a kept table gains the columns it lacks."""
    definitions = ", ".join(f'"{column}" {type_}' for column, type_ in raw_columns(name))
    create = "CREATE OR REPLACE TABLE" if replace else "CREATE TABLE IF NOT EXISTS"
    con.execute("CREATE SCHEMA IF NOT EXISTS raw")
    con.execute(f"{create} raw.{name} ({definitions})")
    if not replace:
        _add_missing_columns(con, name)


def upgrade_raw_tables(warehouse: Path) -> None:
    """Bring a warehouse stored by an older version to the current contract: every raw table it
    holds gains the columns it lacks (the writers call this on the working copy, so a build of
    an old warehouse works without a re-import)."""
    with duckdb.connect(str(warehouse)) as con:
        stored = {
            name
            for (name,) in con.execute(
                "SELECT table_name FROM information_schema.tables WHERE table_schema = 'raw'"
            ).fetchall()
        }
        for name in TABLES.keys() & stored:
            _add_missing_columns(con, name)
        if stored:  # a table the contract gained since (`ratings`): empty, as an absent file reads
            for name in TABLES.keys() - stored:
                create_raw_table(con, name, replace=False)


def _add_missing_columns(con: duckdb.DuckDBPyConnection, name: str) -> None:
    """Columns the contract gained since the table was stored (CONTRACTS "Additions"), appended
    as the contract appends them; stored rows read as the column's default, else null (unknown),
    as a bundle leaving the column out would."""
    for column in TABLES[name].columns:
        default = "" if column.default is None else f" DEFAULT {_sql_string(column.default)}"
        con.execute(
            f'ALTER TABLE raw.{name} ADD COLUMN IF NOT EXISTS "{column.name}" '
            f"{column.duckdb_type}{default}"
        )


def _sql_string(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def replace_raw_tables(con, folder: Path, tables: Mapping[str, pa.Table]) -> None:
    """Replace every raw table with the bundle's rows (sorted by key) and restart the log."""
    for name, table in tables.items():
        create_raw_table(con, name, replace=True)
        listed = quoted(column for column, _ in raw_columns(name))
        con.register("bundle_rows", table)
        try:
            con.execute(
                f"INSERT INTO raw.{name} ({listed}) SELECT {listed} FROM bundle_rows "
                f"ORDER BY {key_order(name)}"
            )
        finally:
            con.unregister("bundle_rows")
    counts = {name: table.num_rows for name, table in tables.items()}
    record_import(con, folder, "replace", counts, restart=True)


def resort_raw_table(con: duckdb.DuckDBPyConnection, name: str) -> None:
    """Rewrite `raw.<name>` in key order after rows were added or removed."""
    con.execute(f"CREATE OR REPLACE TABLE raw.{name} AS FROM raw.{name} ORDER BY {key_order(name)}")


def record_import(
    con: duckdb.DuckDBPyConnection,
    folder: Path,
    mode: str,
    counts: Mapping[str, int],
    restart: bool,
) -> None:
    """One row in `raw.bundle_imports` per import: the bundle, when, `replace` or `append`, and
    the rows it brought per table (for an append: the rows it added). A replacing import restarts
    the log, since the evidence it describes is gone."""
    numbers = ", ".join(f"n_{name} BIGINT" for name in TABLES)
    create = "CREATE OR REPLACE TABLE" if restart else "CREATE TABLE IF NOT EXISTS"
    con.execute(
        f"{create} {IMPORT_LOG} (bundle_path VARCHAR, imported_at TIMESTAMP, "
        f"has_transcriptions BOOLEAN, {numbers}, mode VARCHAR)"
    )
    for column in [f"n_{name} BIGINT" for name in TABLES] + ["mode VARCHAR"]:  # older logs
        con.execute(f"ALTER TABLE {IMPORT_LOG} ADD COLUMN IF NOT EXISTS {column}")
    has_transcriptions = con.execute("SELECT count(*) > 0 FROM raw.transcriptions").fetchone()[0]
    imported_at = datetime.now(UTC).replace(tzinfo=None)  # UTC, stored without a zone
    values = [str(folder.resolve()), imported_at, has_transcriptions]
    values += [counts.get(name, 0) for name in TABLES] + [mode]
    columns = ["bundle_path", "imported_at", "has_transcriptions"]
    columns += [f"n_{name}" for name in TABLES] + ["mode"]
    placeholders = ", ".join("?" for _ in values)
    con.execute(f"INSERT INTO {IMPORT_LOG} ({quoted(columns)}) VALUES ({placeholders})", values)
