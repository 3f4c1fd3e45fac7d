"""dbt runs without a target of their own (the CLI's builds) each work in a folder of their own
under `target/runs/` and move their artifacts into `target/` when they end
(`qct2i.dbt_runner`). Before, two at once shared `target/partial_parse.msgpack`: one read the
parse seeded for the other warehouse and parsed the whole project again."""

from __future__ import annotations

import os
import re
import secrets
import shutil
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from ingestion.paths import PROJECT_ROOT
from ingestion.store.dbt_parse import PARTIAL_PARSE, cached_parse
from qct2i import dbt_runner
from qct2i.dbt_runner import RUNS, SHARED_TARGET, run_dbt

FULL_PARSE = "Unable to do partial parsing"


def _parse_both_at_once(warehouses):
    with ThreadPoolExecutor(len(warehouses)) as pool:
        return list(pool.map(lambda w: run_dbt("parse", w).stdout, warehouses))


def test_two_runs_at_once_each_reuse_their_own_parse(tmp_path):
    # names no other run uses, so that the first round parses and stores one entry for each
    token = secrets.token_hex(4)
    warehouses = [tmp_path / name / f"{name}_{token}.duckdb" for name in ("x", "y")]
    for warehouse in warehouses:
        warehouse.parent.mkdir()
    cached = [cached_parse(w.name, (), PROJECT_ROOT) for w in warehouses]
    started = time.time()
    try:
        first = _parse_both_at_once(warehouses)
        assert all(FULL_PARSE in output for output in first)  # new names: nothing to reuse
        second = _parse_both_at_once(warehouses)
        assert [FULL_PARSE in output for output in second] == [False, False], second
    finally:
        for entry in cached:
            entry.unlink(missing_ok=True)
    # each run worked in a folder of its own, its artifacts reached the shared target, and its
    # folder is gone
    for output in second:
        (written,) = re.findall(r"Performance info: (\S+)", output)
        assert Path(written).parent.parent == RUNS, written
    assert (SHARED_TARGET / "perf_info.json").stat().st_mtime >= started
    assert not [f for f in RUNS.iterdir() if f.name.startswith(f"{os.getpid()}-")]


def test_a_new_run_removes_the_folders_of_dead_runs_only():
    dead = subprocess.Popen(["true"])  # a process id that has ended
    dead.wait()
    RUNS.mkdir(parents=True, exist_ok=True)
    left_by_a_killed_run = RUNS / f"{dead.pid}-{secrets.token_hex(4)}"
    of_a_live_run = RUNS / f"{os.getpid()}-{secrets.token_hex(4)}"
    for folder in (left_by_a_killed_run, of_a_live_run):
        (folder / "compiled").mkdir(parents=True)
    mine = dbt_runner._private_target()
    try:
        assert not left_by_a_killed_run.exists()
        assert (of_a_live_run / "compiled").is_dir()
        assert mine.parent == RUNS and mine != of_a_live_run
    finally:
        for folder in (of_a_live_run, mine):
            shutil.rmtree(folder)


def test_publishing_moves_files_and_folders_into_the_shared_target_and_drops_the_parse(tmp_path):
    """What `_publish_artifacts` does with a finished run's folder: every file and folder moved
    into the shared target (a folder there replaced whole, not merged), the parse left out (it
    went to the cache), the run's folder removed."""
    run, shared = tmp_path / "runs" / "123-abcd", tmp_path / "target"
    (run / "compiled" / "m").mkdir(parents=True)
    (run / "compiled" / "m" / "new.sql").write_text("select 2")
    (run / "run_results.json").write_text('{"new": true}')
    (run / PARTIAL_PARSE).write_bytes(b"this run's parse")
    (shared / "compiled" / "m").mkdir(parents=True)
    (shared / "compiled" / "m" / "old.sql").write_text("select 1")
    (shared / "run_results.json").write_text('{"old": true}')
    dbt_runner._publish_artifacts(run, shared)
    assert not run.exists()
    assert (shared / "run_results.json").read_text() == '{"new": true}'
    assert sorted(p.name for p in (shared / "compiled" / "m").iterdir()) == ["new.sql"]
    assert not (shared / PARTIAL_PARSE).exists()
