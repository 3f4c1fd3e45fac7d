"""Loading an evidence bundle into the warehouse (`load_bundle`): every raw table and the import
record are written, absent optional files give empty tables, and a refused or failed import
leaves the warehouse as it was.

The bundle is the hand-written fixture of tests/worlds/good_bundle.py.
"""

from __future__ import annotations

import duckdb
import pytest

from ingestion.bundle import BundleError, load_bundle, raw_tables
from ingestion.bundle.format import TABLES
from tests.worlds.good_bundle import GOOD_ROWS, TAXONOMY, good, raw_rows, write

# ------------------------------------------------------------------------------------------------
# Loading
# ------------------------------------------------------------------------------------------------


def test_load_writes_every_raw_table_and_the_import_record(tmp_path):
    counts = load_bundle(write(tmp_path / "b", good()), tmp_path / "wh" / "w.duckdb", TAXONOMY)

    assert counts == GOOD_ROWS
    with duckdb.connect(str(tmp_path / "wh" / "w.duckdb"), read_only=True) as con:
        columns = con.execute("DESCRIBE raw.questions").fetchall()
        imports = con.execute(
            "SELECT bundle_path, has_transcriptions, n_judgments FROM raw.bundle_imports"
        ).fetchall()
        widths = con.execute("SELECT width FROM raw.images ORDER BY image_id").fetchall()
    assert [(c[0], c[1]) for c in columns[:4]] == [
        ("prompt_id", "VARCHAR"),
        ("question_id", "VARCHAR"),
        ("question_order", "BIGINT"),
        ("text", "VARCHAR"),
    ]
    assert ("parents", "VARCHAR[]") in [(c[0], c[1]) for c in columns]
    assert imports == [(str((tmp_path / "b").resolve()), True, 9)]
    assert widths == [(1024,), (1024,), (512,)]


def test_null_answers_stay_null_in_raw_judgments(tmp_path):
    load_bundle(write(tmp_path / "b", good()), tmp_path / "w.duckdb", TAXONOMY)

    with duckdb.connect(str(tmp_path / "w.duckdb"), read_only=True) as con:
        nulls = con.execute(
            "SELECT prompt_id, model_id, question_id, p_yes FROM raw.judgments WHERE answer IS NULL"
        ).fetchall()
        answers = con.execute("SELECT count(*) FROM raw.judgments WHERE answer = 'no'").fetchone()
    assert nulls == [("p1", "m2", "q3", None)]
    assert answers == (2,)


def test_absent_optional_files_give_empty_raw_tables(tmp_path):
    tables = {name: rows for name, rows in good().items() if TABLES[name].required}

    counts = load_bundle(write(tmp_path / "b", tables), tmp_path / "w.duckdb", TAXONOMY)

    assert counts["generators"] == counts["images"] == counts["transcriptions"] == 0
    with duckdb.connect(str(tmp_path / "w.duckdb"), read_only=True) as con:
        for name in ("generators", "images", "transcriptions"):
            assert con.execute(f"SELECT count(*) FROM raw.{name}").fetchone() == (0,)
            described = [row[0] for row in con.execute(f"DESCRIBE raw.{name}").fetchall()]
            assert described == list(TABLES[name].column_names)
        has = con.execute("SELECT has_transcriptions FROM raw.bundle_imports").fetchone()
    assert has == (False,)


def test_refused_import_leaves_the_warehouse_untouched(tmp_path):
    warehouse = tmp_path / "w.duckdb"
    load_bundle(write(tmp_path / "good", good()), warehouse, TAXONOMY)
    before = raw_rows(warehouse)
    stat, data = warehouse.stat(), warehouse.read_bytes()
    bad = good()
    bad["judgments"][0]["question_id"] = "q9"

    with pytest.raises(BundleError):
        load_bundle(write(tmp_path / "bad", bad), warehouse, TAXONOMY)

    assert warehouse.read_bytes() == data
    assert warehouse.stat().st_mtime_ns == stat.st_mtime_ns
    assert raw_rows(warehouse) == before


def test_refused_import_creates_no_warehouse(tmp_path):
    bad = good()
    del bad["prompts"]

    with pytest.raises(BundleError):
        load_bundle(write(tmp_path / "bad", bad), tmp_path / "wh" / "w.duckdb", TAXONOMY)

    assert not (tmp_path / "wh").exists()


def test_failure_while_writing_rolls_back_to_the_previous_raw_tables(tmp_path, monkeypatch):
    warehouse = tmp_path / "w.duckdb"
    load_bundle(write(tmp_path / "first", good()), warehouse, TAXONOMY)
    before = raw_rows(warehouse)
    second = good()
    del second["transcriptions"]
    second["prompts"][0]["text"] = "a dog, rewritten"

    def fail(*_args, **_kwargs):
        raise RuntimeError("disk full")

    monkeypatch.setattr(raw_tables, "record_import", fail)
    with pytest.raises(RuntimeError, match="disk full"):
        load_bundle(write(tmp_path / "second", second), warehouse, TAXONOMY)

    assert raw_rows(warehouse) == before


def test_a_second_import_replaces_the_raw_tables(tmp_path):
    warehouse = tmp_path / "w.duckdb"
    load_bundle(write(tmp_path / "first", good()), warehouse, TAXONOMY)
    second = good()
    del second["transcriptions"]

    counts = load_bundle(write(tmp_path / "second", second), warehouse, TAXONOMY)

    assert counts["transcriptions"] == 0
    rows = raw_rows(warehouse, skip=("imported_at",))
    assert rows["transcriptions"][1:] == []
    assert len(rows["bundle_imports"]) == 2  # header + the one import
