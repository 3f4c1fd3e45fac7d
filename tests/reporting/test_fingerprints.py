"""Mart fingerprints (reporting/fingerprints.py): the MD5 of a mart's rows rendered as text and
joined by newlines in sorted order, streamed from DuckDB a batch at a time.

The expected digests are written out by hand here (each row's text, the sorted order, the joined
string) and hashed with hashlib, not by the code under test."""

from __future__ import annotations

import hashlib

import duckdb
import pytest

from reporting import fingerprints
from reporting.fingerprints import mart_fingerprints


def _md5(text: str) -> str:
    return hashlib.md5(text.encode("utf-8")).hexdigest()


@pytest.fixture
def warehouse(tmp_path):
    path = tmp_path / "w.duckdb"
    with duckdb.connect(str(path)) as con:
        con.execute("create schema marts")
        con.execute("create table marts.board (name varchar, score double)")
        # a tab (0x09) sorts before the newline (0x0a) that ends a row: the order must be the
        # rows' own, not that of the rows with their newlines
        con.execute(
            "insert into marts.board values ('a', 1.5), ('a' || chr(9) || 'b', null), "
            "('a|b', 2.0), (null, null)"
        )
        con.execute("create table marts.empty (x integer)")
        con.execute("create table marts.seven as select range as n from range(7)")
    return path


def test_a_marts_digest_is_that_of_its_sorted_rows_joined(warehouse):
    # columns in name order (name, score); null renders as ∅; rows sorted by their text:
    # "a\tb|∅" < "a|1.5" < "a|b|2.0" < "∅|∅"
    rows = ["a\tb|∅", "a|1.5", "a|b|2.0", "∅|∅"]
    assert sorted(rows) == rows
    got = mart_fingerprints(warehouse)
    assert got["board"] == {"rows": 4, "columns": ["name", "score"], "md5": _md5("\n".join(rows))}
    assert got["empty"] == {"rows": 0, "columns": ["x"], "md5": _md5("")}


def test_the_digest_does_not_depend_on_the_batches(warehouse, monkeypatch):
    """Seven rows in batches of two (four batches, the last of one row): the newline between
    batches is hashed once, and the last row's is not. The rows sort as text: 0..6."""
    monkeypatch.setattr(fingerprints, "ROWS_PER_BATCH", 2)
    seven = mart_fingerprints(warehouse)["seven"]
    assert seven == {"rows": 7, "columns": ["n"], "md5": _md5("0\n1\n2\n3\n4\n5\n6")}
