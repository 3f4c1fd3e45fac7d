"""Readers and writers (ingestion/store/warehouse.py through the console script): readers keep the
published file, writers work on the working copy, take turns, and publish only a passing build."""

from __future__ import annotations

import subprocess
from pathlib import Path

import duckdb

from tests.helpers import QCT2I, cli_env, query, run_cli
from tests.worlds.hand import write_hand_bundle

BOARD = (
    "select model_id, language_scope, hcq_total, text from marts.fct_hcq_leaderboard "
    "order by model_id, language_scope"
)


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
    bundle_b = write_hand_bundle(tmp_path / "b", with_transcriptions=False)
    reader = duckdb.connect(str(published), read_only=True)
    before, first = leaderboard(reader), stamp(published)

    # the reader stays connected through import, build and publish: nothing waits for it
    assert run_cli(["import", str(bundle_b)], published).returncode == 0
    built = run_cli(["build"], published)
    assert built.returncode == 0, built.stderr[-3000:]

    assert leaderboard(reader) == before  # the old file, whole
    reader.close()
    with duckdb.connect(str(published), read_only=True) as fresh:
        after = leaderboard(fresh)
    assert after != before  # Text Content now comes from the judgments
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


def test_a_waiting_writer_runs_after_the_holder(published):
    """`--wait` turns the refusal into taking turns: both builds publish, one after the other."""
    env = cli_env(published)
    builds = [
        # dbt's output goes nowhere: a pipe nobody reads while the other build runs would fill
        # and stall the build that writes to it
        subprocess.Popen(
            [QCT2I, "build", "--wait", "300"],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        for _ in range(2)
    ]
    assert [b.wait(timeout=900) for b in builds] == [0, 0]


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
