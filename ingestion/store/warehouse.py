"""The published warehouse, its working copy, and the writer lock (CONTRACTS: `QCT2I_WAREHOUSE`).

Readers (BI tools, notebooks, `qct2i leaderboard`, `qct2i route`) open the *published* file, the
one `QCT2I_WAREHOUSE` names, read-only. Writers never open it: `import` and `build` take the
writer lock, work on the *working copy* beside it (`<name>.working.duckdb`), and a build that
passed every dbt test publishes the working copy with one atomic rename. A reader that holds the
old file keeps reading it (POSIX: the rename swaps the directory entry, the reader's open file
keeps the old inode); the next connection sees the new build. A failed build leaves the published
file as it was and the working copy in place for inspection; the next import or build continues
from it.

The published file is stored in DuckDB's storage version `PUBLISHED_STORAGE_VERSION`, which the
DuckDB releases BI tools bundle can read (docs/warehouse.md, "Storage version"): the importer
creates a working copy in it, so publishing stays one rename; a working copy in another version
(one copied from a warehouse published before this rule) is rewritten in it once, before the
rename.

The writer lock is an advisory `flock` on `<name>.lock`: the kernel releases it when its holder
exits, even on kill -9, so a crashed writer needs no cleanup. POSIX only (`fcntl`); on Windows a
file that a reader holds open cannot be replaced, so publishing there would fail while any reader
is connected.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import duckdb

from ingestion.bundle.raw_tables import WAREHOUSE_STORAGE_VERSION, upgrade_raw_tables
from ingestion.paths import PROJECT_ROOT
from ingestion.store.build_inputs import record_inputs


class WarehouseBusy(RuntimeError):
    """Another writer holds the lock; the message names it."""


class PublishRefused(RuntimeError):
    """The working copy cannot be published safely; the message says why."""


@dataclass(frozen=True)
class Warehouse:
    """The three paths of one warehouse, derived from the published file."""

    published: Path

    @property
    def working(self) -> Path:
        return self.published.with_name(f"{self.published.stem}.working.duckdb")

    @property
    def lock(self) -> Path:
        return self.published.with_name(f"{self.published.name}.lock")


# the storage version the importer creates warehouse files in (ingestion/bundle/raw_tables.py)
PUBLISHED_STORAGE_VERSION = WAREHOUSE_STORAGE_VERSION

CRASH_POINT_ENV = "QCT2I_CRASH_AT"  # fault injection for the crash-safety tests


def crash_point(name: str) -> None:
    """Kill this process (SIGKILL, as kill -9 would) if `QCT2I_CRASH_AT` names this point: the
    crash-safety tests stop a writer exactly between the steps of a publish."""
    if os.environ.get(CRASH_POINT_ENV) == name:
        os.kill(os.getpid(), signal.SIGKILL)


def writer_wait_s() -> float:
    """How long a writer waits for the lock: `QCT2I_WRITER_WAIT_S` seconds, default 0 (fail at
    once, naming the holder)."""
    return float(os.environ.get("QCT2I_WRITER_WAIT_S", "0"))


def _wal(path: Path) -> Path:
    return path.with_name(path.name + ".wal")


@contextlib.contextmanager
def writer_lock(warehouse: Warehouse, what: str, wait_s: float = 0.0) -> Iterator[None]:
    """Hold the writer lock for the block. Another holder makes this wait up to `wait_s` seconds,
    then raise `WarehouseBusy` naming that holder (its pid, command and start time)."""
    warehouse.lock.parent.mkdir(parents=True, exist_ok=True)
    with open(warehouse.lock, "a+") as handle:
        deadline = time.monotonic() + wait_s
        while True:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise WarehouseBusy(_busy_message(warehouse, handle, wait_s)) from None
                time.sleep(min(0.2, max(0.0, deadline - time.monotonic())))
        handle.seek(0)
        handle.truncate()
        holder = {"pid": os.getpid(), "what": what, "since": _now().isoformat(timespec="seconds")}
        handle.write(json.dumps(holder) + "\n")
        handle.flush()
        try:
            yield
        finally:
            handle.seek(0)
            handle.truncate()
            handle.flush()
            fcntl.flock(handle, fcntl.LOCK_UN)


def _busy_message(warehouse: Warehouse, handle, wait_s: float) -> str:
    handle.seek(0)
    try:
        holder = json.loads(handle.read() or "{}")
    except json.JSONDecodeError:
        holder = {}
    who = (
        f"pid {holder.get('pid')} ({holder.get('what')}, since {holder.get('since')} UTC)"
        if holder
        else "another process"
    )
    waited = f" after waiting {wait_s:g} s" if wait_s else ""
    return (
        f"{warehouse.published}: another writer holds {warehouse.lock}{waited}: {who}. "
        "Imports and builds take turns; run again when it has finished (or pass --wait SECONDS)."
    )


def prepare_working_copy(warehouse: Warehouse) -> Path:
    """The working copy to write into (call with the writer lock held).

    A working copy left by an import not yet built, or by a failed or killed build, is reused;
    otherwise the published file is copied (through a temporary name, so a crash never leaves a
    half copy under the working name); with neither, the working copy starts empty. Raw tables
    stored by an older version gain the contract's newer columns (`upgrade_raw_tables`)."""
    working = warehouse.working
    if not working.exists():
        working.parent.mkdir(parents=True, exist_ok=True)
        if not warehouse.published.exists():
            return working
        partial = working.with_name(working.name + ".partial")
        shutil.copyfile(warehouse.published, partial)
        crash_point("copy:before-rename")
        os.replace(partial, working)
    upgrade_raw_tables(working)
    return working


def publish(
    warehouse: Warehouse,
    code_version: str | None = None,
    build_vars: Mapping | None = None,
    build_inputs: Mapping[str, str] | None = None,
) -> dict:
    """Stamp the working copy with a `build_id` row and rename it over the published file
    (call with the writer lock held, after every dbt test passed). `build_vars` are the dbt vars
    the build overrode (`qct2i build --official-judge`, a Dagster run's `vars`): the stamp keeps
    them, since the same evidence rebuilds the same marts only under the same vars.
    `build_inputs` are the fingerprints the build was built from (`build_inputs.current_inputs`,
    `qct2i build` and a Dagster run of every dbt asset), kept for the next build to compare; a
    publisher that does not pass them (a Dagster run of some dbt assets) leaves no record, so the
    next build is full. Returns the stamp."""
    working, published = warehouse.working, warehouse.published
    if _wal(published).exists():
        raise PublishRefused(
            f"{_wal(published)} exists: a process opened the published warehouse for writing. "
            "Close it (readers must connect read-only) and run the build again; publishing now "
            "would let DuckDB replay that log into the new file."
        )
    crash_point("publish:before-stamp")
    stamp = _stamp(working, code_version, build_vars or {}, build_inputs)
    if storage_version(working) != PUBLISHED_STORAGE_VERSION:
        _rewrite_in_published_storage_version(working)
    crash_point("publish:before-rename")
    _fsync(working)
    os.replace(working, published)
    crash_point("publish:after-rename")
    _fsync(published.parent)
    return stamp


def _stamp(
    working: Path, code_version: str | None, build_vars: Mapping, inputs: Mapping | None
) -> dict:
    """Write `main.build_id` (one row: which evidence and code built this file) and what the next
    build compares (`build_state`, cleared of what was pending), and checkpoint, so the published
    file carries no write-ahead log."""
    with duckdb.connect(str(working)) as con:
        stamp = {
            "build_id": uuid.uuid4().hex,
            "built_at": _now(),
            "evidence_fingerprint": evidence_fingerprint(con),
            "code_version": code_version or code_version_of_checkout(),
            "duckdb_version": duckdb.__version__,
            "python_version": sys.version.split()[0],
            "build_vars": json.dumps(dict(build_vars), sort_keys=True),
        }
        con.execute(
            "create or replace table main.build_id (build_id varchar, built_at timestamp, "
            "evidence_fingerprint varchar, code_version varchar, duckdb_version varchar, "
            "python_version varchar, build_vars varchar)"
        )
        con.execute("insert into main.build_id values (?, ?, ?, ?, ?, ?, ?)", list(stamp.values()))
        record_inputs(con, inputs)
        con.execute("checkpoint")
    return stamp


def storage_version(path: Path) -> str:
    """The DuckDB storage version the file is written in (`v1.4.0`: DuckDB 1.4.0 and newer read
    it)."""
    with duckdb.connect(str(path), read_only=True) as con:
        (tag,) = con.execute(
            "select tags['storage_version'] from duckdb_databases() "
            "where database_name = current_database()"
        ).fetchone()
    return tag.removesuffix("+")  # DuckDB tags it `v1.4.0+`


def _rewrite_in_published_storage_version(working: Path) -> None:
    """Rewrite the working copy in `PUBLISHED_STORAGE_VERSION`: every schema, table, view and
    constraint, copied by DuckDB itself (COPY FROM DATABASE), through a temporary name, so a
    writer killed meanwhile leaves the working copy whole (old or rewritten). About as long as
    reading and writing the whole file once (docs/warehouse.md has the demo's figures)."""
    rewritten = working.with_name(working.name + ".rewrite")
    rewritten.unlink(missing_ok=True)
    with duckdb.connect() as con:
        con.execute(f"attach {_literal(working)} as working_copy (read_only)")
        con.execute(
            f"attach {_literal(rewritten)} as rewritten "
            f"(storage_version '{PUBLISHED_STORAGE_VERSION}')"
        )
        con.execute("copy from database working_copy to rewritten")
    _fsync(rewritten)
    os.replace(rewritten, working)


def _literal(path: Path) -> str:
    """A path as a SQL string literal (ATTACH takes no parameters)."""
    return "'" + str(path).replace("'", "''") + "'"


def judges_held(path: Path) -> list[str]:
    """The judge ids of the warehouse file's raw judgments, sorted (none before an import)."""
    with duckdb.connect(str(path), read_only=True) as con:
        held = con.execute(
            "select count(*) from information_schema.tables "
            "where table_schema = 'raw' and table_name = 'judgments'"
        ).fetchall()[0][0]
        if not held:
            return []
        rows = con.execute("select distinct judge_id from raw.judgments order by 1").fetchall()
    return [judge for (judge,) in rows]


def evidence_fingerprint(con: duckdb.DuckDBPyConnection) -> str:
    """Row counts and an order-free hash (xor of row hashes) of every raw table."""
    tables = [
        r[0]
        for r in con.execute(
            "select table_name from information_schema.tables "
            "where table_schema = 'raw' and table_name <> 'bundle_imports' order by table_name"
        ).fetchall()
    ]
    parts = []
    for table in tables:
        n, digest = con.execute(
            f"select count(*), bit_xor(hash(t)) from raw.{table} as t"
        ).fetchone()
        parts.append(f"{table}:{n}:{digest or 0:016x}")
    return ";".join(parts)


def code_version_of_checkout() -> str:
    """The git commit of the project checkout, or `unknown` outside one."""
    try:
        result = subprocess.run(
            ["git", "-C", str(PROJECT_ROOT), "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            timeout=10,
        )
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return result.stdout.strip() if result.returncode == 0 else "unknown"


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _now() -> datetime:
    return datetime.now(UTC).replace(tzinfo=None)  # UTC, stored without a zone
