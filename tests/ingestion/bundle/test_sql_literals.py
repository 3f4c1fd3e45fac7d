"""SQL string literals the raw-table writers build by hand (DuckDB's ATTACH takes no parameters):
a quote in a value or a warehouse path is doubled; holes `make mutation` found (issue 36)."""

from __future__ import annotations

import duckdb

from ingestion.bundle.raw_tables import _create_warehouse_file, _sql_string


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
