"""Readers and writers (ingestion/store/warehouse.py through the console script): readers (DuckDB,
and BI tools through SQLAlchemy) keep the published file, writers work on the working copy, take
turns, and publish only a passing build."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import duckdb
import sqlalchemy as sa

from ingestion.store.warehouse import Warehouse, writer_lock
from tests.helpers import QCT2I, cli_env, query, run_cli
from tests.worlds.hand import write_hand_bundle

BOARD = (
    "select model_id, language_scope, hcq_total, text from marts.fct_hcq_leaderboard "
    "order by model_id, language_scope"
)


def bi_engine(warehouse: Path) -> sa.Engine:
    return sa.create_engine(f"duckdb:///{warehouse}", connect_args={"read_only": True})


def leaderboard(con: duckdb.DuckDBPyConnection) -> list[tuple]:
    return con.execute(BOARD).fetchall()


def build_id(warehouse: Path) -> str:
    return stamp(warehouse)["build_id"]


def stamp(warehouse: Path) -> dict:
    with duckdb.connect(str(warehouse), read_only=True) as con:
        cursor = con.execute("select * from main.build_id")
        rows = cursor.fetchall()
        assert len(rows) == 1
        return dict(zip([d[0] for d in cursor.description], rows[0], strict=True))


def test_a_reader_keeps_the_old_build_until_it_reconnects(published, tmp_path):
    """A BI connection (SQLAlchemy over duckdb-engine, read-only, as BI tools connect) stays open
    through an import and a build in other processes, and another connects during the build:
    nothing waits for them, both read the published build meanwhile, and a new connection after
    the build sees the new one. (One process holds one DuckDB configuration per file, so every
    connection here goes through duckdb-engine until the last one, after they have all closed.)"""
    bundle_b = write_hand_bundle(tmp_path / "b", with_transcriptions=False)
    first = stamp(published)
    held_engine = bi_engine(published)
    with held_engine.connect() as held:
        before = [tuple(row) for row in held.execute(sa.text(BOARD))]

        # the reader stays connected through import, build and publish: nothing waits for it
        assert run_cli(["import", str(bundle_b)], published).returncode == 0
        build = subprocess.Popen(
            [QCT2I, "build"], env=cli_env(published), stdout=subprocess.PIPE, text=True
        )
        lock = published.with_name("w.duckdb.lock")
        deadline = time.monotonic() + 60
        while not lock.read_text().strip() and time.monotonic() < deadline:  # the build's lock
            time.sleep(0.05)
        assert build.poll() is None, "the build ended before the BI tool connected"
        during_engine = bi_engine(published)
        with during_engine.connect() as bi:
            marts = set(sa.inspect(bi).get_table_names(schema="marts"))
            during = [tuple(row) for row in bi.execute(sa.text(BOARD))]
        during_engine.dispose()
        assert {"fct_hcq_leaderboard", "fct_router_paired", "fct_coupling"} <= marts
        assert len(marts) >= 20
        assert during == before  # the published build, not a half-built one
        out, _ = build.communicate(timeout=600)  # read its output: a full pipe stalls the build
        assert build.returncode == 0, out[-3000:]

        assert [tuple(row) for row in held.execute(sa.text(BOARD))] == before  # the old file
    held_engine.dispose()
    after_engine = bi_engine(published)
    with after_engine.connect() as bi:  # a new BI connection sees the new build
        after = [tuple(row) for row in bi.execute(sa.text(BOARD))]
    after_engine.dispose()
    assert after != before  # Text Content now comes from the judgments
    with duckdb.connect(str(published), read_only=True) as fresh:
        assert leaderboard(fresh) == after
    second = stamp(published)
    assert second["build_id"] != first["build_id"]
    # the stamp says which evidence built the file: the transcriptions went, the judgments stayed
    assert second["evidence_fingerprint"] != first["evidence_fingerprint"]
    judgments = [p for p in first["evidence_fingerprint"].split(";") if p.startswith("judgments:")]
    assert judgments and judgments[0] in second["evidence_fingerprint"]
    assert len(second["code_version"]) == 40 or second["code_version"] == "unknown"
    assert not published.with_name("w.working.duckdb").exists()  # renamed into place


def test_a_failing_dbt_test_keeps_the_published_warehouse(published, tmp_path):
    with duckdb.connect(str(published), read_only=True) as con:
        before = leaderboard(con)
    first_build = build_id(published)
    assert (
        run_cli(
            ["import", str(write_hand_bundle(tmp_path / "b", with_transcriptions=False))], published
        ).returncode
        == 0
    )
    working = published.with_name("w.working.duckdb")
    # evidence the validator would refuse, slipped in behind it: a duplicate prompt id fails the
    # `unique` test of stg_prompts
    with duckdb.connect(str(working)) as con:
        con.execute("insert into raw.prompts select * from raw.prompts limit 1")

    failed = run_cli(["build"], published)
    assert failed.returncode == 1
    assert "Not published" in failed.stderr and "Traceback" not in failed.stderr
    assert build_id(published) == first_build
    with duckdb.connect(str(published), read_only=True) as con:
        assert leaderboard(con) == before
    assert working.exists()  # kept for inspection

    # the next import replaces the bad evidence and the next build publishes, no cleanup needed
    assert (
        run_cli(
            ["import", str(write_hand_bundle(tmp_path / "c", with_transcriptions=False))], published
        ).returncode
        == 0
    )
    assert run_cli(["build"], published).returncode == 0
    assert build_id(published) != first_build


def test_two_builds_at_once_publish_one_and_name_the_other_writer(published):
    env = cli_env(published)
    first_build = build_id(published)
    builds = [
        subprocess.Popen(
            [QCT2I, "build"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        for _ in range(2)
    ]
    # communicate, not wait: a build whose output fills the pipe would stall until it is read
    results = [(*b.communicate(timeout=600), b.returncode) for b in builds]
    results = [(code, out, err) for out, err, code in results]
    codes = sorted(code for code, _, _ in results)
    assert codes == [0, 2], [r[2][-2000:] for r in results]
    loser = next(err for code, _, err in results if code == 2)
    assert "another writer holds" in loser and "qct2i build" in loser
    assert "Traceback" not in loser
    assert build_id(published) != first_build  # the winner published, whole
    with duckdb.connect(str(published), read_only=True) as con:
        assert leaderboard(con)


def test_a_waiting_writer_runs_after_the_holder(published, tmp_path):
    """`--wait` turns the refusal into taking turns: an import started while another writer holds
    the lock (the store's own lock, held here) waits for it, then imports. (Every writer command
    takes `--wait` from one place, qct2i/writer_commands.py `add_wait`; an import, not a build,
    keeps the test at seconds.)"""
    bundle = write_hand_bundle(tmp_path / "b", with_transcriptions=False)
    working = published.with_name("w.working.duckdb")
    with writer_lock(Warehouse(published), "a test holding the writer lock"):
        waiting = subprocess.Popen(
            [QCT2I, "import", "--wait", "300", str(bundle)],
            env=cli_env(published),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        time.sleep(3)  # the console script is up and asking for the lock by now
        assert waiting.poll() is None, "the import did not wait for the holder"
        assert not working.exists()  # nothing begun
    assert waiting.wait(timeout=600) == 0
    # it imported after the holder: the working copy holds the new evidence (no transcriptions)
    assert query(working, "select count(*) from raw.transcriptions") == [(0,)]
    assert query(published, "select count(*) from raw.transcriptions") != [(0,)]


def test_readers_are_told_when_nothing_is_published(tmp_path):
    board = run_cli(["leaderboard"], tmp_path / "none.duckdb")
    assert board.returncode == 2
    assert "no published warehouse yet" in board.stderr and "Traceback" not in board.stderr


def test_a_warehouse_stored_before_the_judge_columns_builds_without_a_reimport(published):
    with duckdb.connect(str(published)) as con:  # what an older version stored
        for column in ("judge_id", "judge_model", "judge_revision", "prompt_template_sha"):
            con.execute(f"alter table raw.judgments drop column {column}")
        board = con.execute(BOARD).fetchall()

    built = run_cli(["build"], published)

    assert built.returncode == 0, built.stderr[-3000:]
    assert query(published, BOARD) == board
    assert query(published, "select distinct judge_id from raw.judgments") == [("default",)]
