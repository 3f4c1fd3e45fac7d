"""SQL string literals the raw-table writers build by hand (DuckDB's ATTACH takes no parameters):
a quote in a value or a warehouse path is doubled; holes `make mutation` found (issue 36)."""

from __future__ import annotations

import os
import time
from datetime import UTC, datetime

import duckdb
import pyarrow as pa
import pytest

from ingestion.bundle.format import TABLES
from ingestion.bundle.raw_tables import (
    _create_warehouse_file,
    _sql_string,
    create_raw_table,
    replace_raw_tables,
)


def test_a_quote_in_a_value_is_doubled():
    """Guards the literal: `it's` becomes 'it''s', which DuckDB reads back as it was."""
    assert _sql_string("it's") == "'it''s'"
    with duckdb.connect() as con:
        literal = _sql_string("o'brien's")
        assert con.execute(f"select {literal}").fetchone() == ("o'brien's",)


def test_a_warehouse_path_with_a_quote_is_created_there(tmp_path):
    """Guards the quoted path of the new warehouse file: a folder named with a quote gets the
    file, which DuckDB then opens."""
    path = tmp_path / "o'brien" / "warehouse.duckdb"
    path.parent.mkdir()
    _create_warehouse_file(path)
    assert path.is_file()
    with duckdb.connect(str(path)) as con:
        assert con.execute("select 1").fetchone() == (1,)


def test_a_replace_logs_its_utc_time_and_leaves_no_rows_registered(tmp_path):
    """Guards against raw_tables.record_import_23 (the log's imported_at left null), _24 (the
    local time stored instead of UTC: told apart here under Tokyo's zone, 9 hours ahead) and
    replace_raw_tables_20 (the bundle's rows left registered on the caller's connection under
    "bundle_rows", the wrong name unregistered)."""
    original_zone = os.environ.get("TZ")
    os.environ["TZ"] = "Asia/Tokyo"
    time.tzset()
    try:
        con = duckdb.connect()
        create_raw_table(con, "transcriptions", replace=True)
        generators = pa.Table.from_pylist(
            [{"model_id": "m1", "display_name": "M"}], schema=TABLES["generators"].schema
        )
        before = datetime.now(UTC).replace(tzinfo=None)
        replace_raw_tables(con, tmp_path, {"generators": generators})
        after = datetime.now(UTC).replace(tzinfo=None)
    finally:  # the process's zone back as it was, for every later test
        if original_zone is None:
            del os.environ["TZ"]
        else:
            os.environ["TZ"] = original_zone
        time.tzset()

    (imported_at,) = con.execute("SELECT imported_at FROM raw.bundle_imports").fetchone()
    assert before <= imported_at <= after
    assert con.execute("SELECT model_id FROM raw.generators").fetchall() == [("m1",)]
    with pytest.raises(duckdb.CatalogException):
        con.execute("SELECT * FROM bundle_rows")
