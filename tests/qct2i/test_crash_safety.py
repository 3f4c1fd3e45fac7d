"""Kill -9 during import, build and publish: the published warehouse is afterwards the old build
or the new one, whole, and the next run succeeds without any cleanup (ingestion/store/warehouse.py).

Two kinds of kill: at each named step of a publish (`QCT2I_CRASH_AT`, a SIGKILL the writer sends
itself), and from outside at seeded random times while `qct2i import` (replacing or appending)
and `qct2i build` run.
"""

from __future__ import annotations

import random
import signal
import subprocess
import time
from pathlib import Path

import duckdb
import pytest

from ingestion.bundle.format import write_bundle
from tests.helpers import QCT2I, cli_env, copy_warehouse, run_cli
from tests.worlds.hand import hand_bundle_tables, write_hand_bundle

BOARD = (
    "select model_id, language_scope, round(hcq_total, 9), round(text, 9) "
    "from marts.fct_hcq_leaderboard order by model_id, language_scope"
)


def published_state(warehouse: Path) -> tuple[str, list[tuple]]:
    """(build id, leaderboard) of the published file; it must open and carry one stamp."""
    with duckdb.connect(str(warehouse), read_only=True) as con:
        stamps = con.execute("select build_id from main.build_id").fetchall()
        assert len(stamps) == 1
        return stamps[0][0], con.execute(BOARD).fetchall()


@pytest.fixture(scope="module")
def worlds(tmp_path_factory, hand_published, hand_published_without_transcriptions) -> dict:
    """The old evidence published (the session's hand warehouse, which each test copies through
    `published`), the new evidence's bundle, and the board each of the two builds."""
    new_bundle = write_hand_bundle(
        tmp_path_factory.mktemp("crash") / "new", with_transcriptions=False
    )
    boards = {
        "old": published_state(hand_published),
        "new": published_state(hand_published_without_transcriptions),
    }
    assert boards["old"][1] != boards["new"][1]
    return {"old_file": hand_published, "new_bundle": new_bundle, "boards": boards}


def assert_old_or_new_whole(warehouse: Path, worlds: dict) -> str:
    build, board = published_state(warehouse)
    old_build, old_board = worlds["boards"]["old"]
    if build == old_build:
        assert board == old_board
        return "old"
    assert board == worlds["boards"]["new"][1]
    return "new"


def finish_without_cleanup(warehouse: Path, worlds: dict) -> None:
    """The next import and build succeed as a user would run them, and publish the new build."""
    imported = run_cli(["import", str(worlds["new_bundle"])], warehouse)
    assert imported.returncode == 0, imported.stderr
    built = run_cli(["build"], warehouse)
    assert built.returncode == 0, built.stderr[-3000:]
    assert assert_old_or_new_whole(warehouse, worlds) == "new"


def crashing(args: list[str], warehouse: Path, point: str) -> subprocess.CompletedProcess:
    return run_cli(args, warehouse, QCT2I_CRASH_AT=point)


# Each named step, in the order a writer reaches them, with what the published file must be after
# a kill there.
NAMED_STEPS = (
    ("copy:before-rename", "old"),  # `qct2i import` copying the published file
    ("publish:before-stamp", "old"),  # `qct2i build`, dbt done, before the build stamp
    ("publish:before-rename", "old"),  # stamped, before the rename over the published file
    ("publish:after-rename", "new"),  # renamed, before the folder is synced
)


def test_killed_at_each_named_step_then_the_next_run_goes_on_without_cleanup(published, worlds):
    """A writer killed at each named step in turn, each run starting from the state the kill
    before it left, with no cleanup between: after each kill the published file is the old build
    or the new one, whole; the next `qct2i import` succeeds and the next `qct2i build` runs its
    whole dbt build from that state up to the next step; the last build publishes the new one.
    (One chain rather than a fresh start per step: each recovery is the next step's run, which
    saves a full dbt build per step.)"""
    for point, expected in NAMED_STEPS:
        if point.startswith("copy:"):
            killed = crashing(["import", str(worlds["new_bundle"])], published, point)
        else:
            imported = run_cli(["import", str(worlds["new_bundle"])], published)
            assert imported.returncode == 0, (point, imported.stderr)
            killed = crashing(["build"], published, point)
        assert killed.returncode == -signal.SIGKILL, point
        if point == "copy:before-rename":
            assert published.with_name("w.working.duckdb.partial").exists()  # the half copy
        assert assert_old_or_new_whole(published, worlds) == expected, point
    finish_without_cleanup(published, worlds)


def kill_after(args: list[str], warehouse: Path, delay_s: float, *, once_dbt_runs=False) -> int:
    """Start `qct2i ARGS`, SIGKILL it `delay_s` later (counted from its dbt child's start with
    `once_dbt_runs`), and return its exit status (0 when it finished first)."""
    process = subprocess.Popen(
        [QCT2I, *args], env=cli_env(warehouse), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    if once_dbt_runs:
        wait_for_dbt(process)
    time.sleep(delay_s)
    process.send_signal(signal.SIGKILL)  # a no-op if it already finished
    return process.wait(timeout=600)


def wait_for_dbt(process: subprocess.Popen, limit_s: float = 120.0) -> None:
    """Until `process` has started its `dbt` child (Linux: /proc/PID/task/PID/children)."""
    children = Path(f"/proc/{process.pid}/task/{process.pid}/children")
    deadline = time.monotonic() + limit_s
    while process.poll() is None and time.monotonic() < deadline:
        for child in children.read_text().split():
            try:
                argv = Path(f"/proc/{child}/cmdline").read_bytes().split(b"\0")[:2]
            except OSError:  # it ended meanwhile (a `git rev-parse`, say)
                continue
            if any(Path(arg.decode()).name == "dbt" for arg in argv):
                return  # `dbt ...`, or python running the dbt console script
        time.sleep(0.02)
    raise AssertionError(f"`qct2i` (pid {process.pid}) started no dbt within {limit_s:.0f} s")


def timed_cli(args: list[str], warehouse: Path) -> float:
    """Seconds `qct2i ARGS` took, start-up included; it must succeed."""
    began = time.monotonic()
    done = run_cli(args, warehouse)
    assert done.returncode == 0, done.stderr[-3000:]
    return time.monotonic() - began


def test_kill_9_at_seeded_random_times_in_an_import_and_in_a_builds_dbt_run(
    published, worlds, tmp_path
):
    """The import killed at a seeded random point of a clean import's duration on this machine
    (0.30-0.95 of it: the end of its start-up or its work), the build at a seeded random time
    after its dbt child started (0.5-5 s: dbt's start-up and saved parse take about 2 s of the
    8.5 s its child lives in a hand build here, so mostly in its run, tables half built; the
    seed's 3.9 s is). Each time the published file is
    the old build, whole, and the next import and build publish the new one. Timed from what
    each command does rather than from the clock, the kills land in the same phases on a fast
    machine and a slow one. (Two more seeds, each a full dbt build, hit the same windows.)"""
    rng = random.Random(0)
    scratch = copy_warehouse(published, tmp_path / "clean")
    clean_s = timed_cli(["import", str(worlds["new_bundle"])], scratch)
    kill_after(["import", str(worlds["new_bundle"])], published, rng.uniform(0.3, 0.95) * clean_s)
    assert assert_old_or_new_whole(published, worlds) == "old"
    assert run_cli(["import", str(worlds["new_bundle"])], published).returncode == 0

    delay_s = rng.uniform(0.5, 5.0)
    killed = kill_after(["build"], published, delay_s, once_dbt_runs=True)
    assert killed == -signal.SIGKILL, f"the build ended before its kill, {delay_s:.1f} s into dbt"
    assert assert_old_or_new_whole(published, worlds) == "old"
    built = run_cli(["build"], published)  # no orphaned dbt holds the working copy
    assert built.returncode == 0, built.stderr[-3000:]
    assert assert_old_or_new_whole(published, worlds) == "new"


def raw_state(warehouse: Path) -> dict[str, list[tuple]]:
    with duckdb.connect(str(warehouse), read_only=True) as con:
        return {
            name: con.execute(f"select * from raw.{name}").fetchall()
            for name in ("prompts", "questions", "judgments", "transcriptions")
        }


@pytest.fixture(scope="module")
def appended(worlds, tmp_path_factory) -> dict:
    """A second generator's evidence (the hand world's, under new model ids) to append, and the
    raw tables before and after a clean append (on a copy of the old build)."""
    root = tmp_path_factory.mktemp("append")
    tables = hand_bundle_tables()
    for name in ("judgments", "transcriptions"):
        for row in tables[name]:
            row["model_id"] = f"{row['model_id']}-v2"
    bundle = root / "bundle"
    write_bundle(bundle, tables)
    clean = copy_warehouse(worlds["old_file"], root)
    before = raw_state(clean)
    seconds = timed_cli(["import", "--append", str(bundle)], clean)
    after = raw_state(clean.with_name("w.working.duckdb"))
    assert len(after["judgments"]) == 2 * len(before["judgments"])
    return {"bundle": bundle, "before": before, "after": after, "seconds": seconds}


@pytest.mark.parametrize("seed", [0, 1])
def test_kill_9_during_an_append_leaves_the_raw_tables_before_or_after(published, appended, seed):
    """Killed at a seeded random point of a clean append's duration (0.3-0.95 of it)."""
    rng = random.Random(seed)
    delay_s = rng.uniform(0.3, 0.95) * appended["seconds"]
    kill_after(["import", "--append", str(appended["bundle"])], published, delay_s)
    working = published.with_name("w.working.duckdb")
    state = raw_state(working if working.exists() else published)
    assert state in (appended["before"], appended["after"])

    again = run_cli(["import", "--append", str(appended["bundle"])], published)
    assert again.returncode == 0, again.stderr
    assert raw_state(working) == appended["after"]
