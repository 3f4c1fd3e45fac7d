"""The published warehouse opens in the older DuckDB releases BI tools bundle (docs/warehouse.md,
"Storage version"; docs/bi.md): every mart read there equals what the project's DuckDB reads.

Each reader is its own environment holding only that DuckDB (`.venv-duckdb-<version>`, built by
`make envs` and `make test`); each computes its figures itself (mart_fingerprints.py, run by that
environment's python)."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import duckdb
import pytest

from ingestion.bundle.raw_tables import raw_transaction
from ingestion.store.warehouse import (
    PUBLISHED_STORAGE_VERSION,
    Warehouse,
    prepare_working_copy,
    publish,
    storage_version,
)
from tests.helpers import running_under_ci
from tests.qct2i.mart_fingerprints import fingerprints

ROOT = Path(__file__).resolve().parents[2]
FINGERPRINTS = Path(__file__).with_name("mart_fingerprints.py")
# the releases the Makefile installs, one environment each
READERS = re.search(r"^DUCKDB_READERS := (.+)$", (ROOT / "Makefile").read_text(), re.M)[1].split()


def reader_python(version: str) -> Path:
    """The python of the environment holding DuckDB `version`; without it the test skips, or fails
    under CI=true."""
    venv = ROOT / f".venv-duckdb-{version}"
    if (venv / ".installed-duckdb").exists():
        return venv / "bin" / "python"
    message = f"{venv} is missing: `make envs` (or `make {venv.name}/.installed-duckdb`)"
    if running_under_ci():
        pytest.fail(f"{message}; CI=true requires it", pytrace=False)
    pytest.skip(message)


def read_with(version: str, warehouse: Path) -> dict:
    """The marts' figures as DuckDB `version` reads them, in its own process."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    done = subprocess.run(
        [str(reader_python(version)), str(FINGERPRINTS), str(warehouse)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    read = json.loads(done.stdout)
    assert read["duckdb"] == version  # the environment's own DuckDB, not the project's
    return read["marts"]


@pytest.mark.parametrize("version", READERS)
def test_the_published_warehouse_reads_the_same_in_an_older_duckdb(small_demo, version):
    """Guards against publishing a file older readers refuse (DuckDB 2.0's own storage version:
    'version number 69 ... we can only read versions between 64 and 68') or read differently:
    the small demo, published by `qct2i demo`, opens read-only in DuckDB `version`, and every mart
    has the same columns, row count and row fingerprint there as in the project's DuckDB."""
    warehouse, _ = small_demo
    native = fingerprints(str(warehouse))["marts"]
    assert len(native) >= 28 and sum(mart["rows"] > 0 for mart in native.values()) >= 20
    assert read_with(version, warehouse) == native


def _working_copy_in_duckdb_2_storage(warehouse: Warehouse) -> None:
    """A working copy as DuckDB 2.0 writes a new file (its own storage version), as one copied
    from a warehouse published before the storage rule would be: a mart of each kind of column
    the marts hold, a view, a NOT NULL constraint."""
    with duckdb.connect(str(warehouse.working)) as con:
        con.execute("create schema marts")
        con.execute(
            "create table marts.fct_kinds (model_id varchar not null, hcq double, n bigint, "
            "share decimal(9, 4), built_at timestamp, tags varchar[], ci struct(lo double, "
            "hi double), ok boolean)"
        )
        con.execute(
            "insert into marts.fct_kinds values "
            "('a', 0.1::double + 0.2::double, 3, 12.3456, '2026-12-03 22:00:00.123456', "
            "['x', 'y'], {'lo': 1e-300, 'hi': 2.5}, true), "
            "('b', null, -1, null, null, [], null, null)"
        )
        con.execute("create view marts.v_kinds as select model_id, hcq from marts.fct_kinds")


def test_a_working_copy_in_a_newer_storage_version_is_published_in_the_readers_version(
    tmp_path,
):
    """Guards against publishing a working copy as it is stored: one in DuckDB 2.0's storage
    version (copied from a warehouse published before the rule) is rewritten in the published
    version before the rename, its values, view and constraint kept, and opens in the oldest
    promised DuckDB with the same marts."""
    warehouse = Warehouse(tmp_path / "w.duckdb")
    _working_copy_in_duckdb_2_storage(warehouse)
    assert storage_version(warehouse.working) == "v2.0.0"
    before = fingerprints(str(warehouse.working))["marts"]

    publish(warehouse, code_version="test")

    assert storage_version(warehouse.published) == PUBLISHED_STORAGE_VERSION
    assert fingerprints(str(warehouse.published))["marts"] == before
    assert before["fct_kinds"]["rows"] == 2
    with duckdb.connect(str(warehouse.published), read_only=True) as con:
        assert con.execute("select * from marts.v_kinds order by 1").fetchall() == [
            ("a", 0.1 + 0.2),
            ("b", None),
        ]
        nullable = con.execute(
            "select is_nullable from information_schema.columns "
            "where table_name = 'fct_kinds' and column_name = 'model_id'"
        ).fetchone()
    assert nullable == ("NO",)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["w.duckdb"]  # no rewrite left behind
    assert read_with(READERS[0], warehouse.published) == before


def test_an_imported_working_copy_is_published_by_a_rename(tmp_path):
    """Guards against rewriting every build (about as long as copying the file: 13-18 s at demo
    scale): the importer creates a working copy in the published version, so its publish is the
    rename alone (the published file is the working copy's inode), and DuckDB 2.0 keeps that
    version in the next working copy it writes to."""
    warehouse = Warehouse(tmp_path / "w.duckdb")
    working = prepare_working_copy(warehouse)
    with raw_transaction(working) as con:  # what every import writes through
        con.execute("create schema marts")
        con.execute("create table marts.fct_one as select 1 as one")
    assert storage_version(working) == PUBLISHED_STORAGE_VERSION
    inode = working.stat().st_ino

    publish(warehouse, code_version="test")

    assert warehouse.published.stat().st_ino == inode
    assert storage_version(warehouse.published) == PUBLISHED_STORAGE_VERSION
    with duckdb.connect(str(prepare_working_copy(warehouse))) as con:
        con.execute("create table marts.fct_two as select range as n from range(100000)")
        con.execute("checkpoint")
    assert storage_version(warehouse.working) == PUBLISHED_STORAGE_VERSION
