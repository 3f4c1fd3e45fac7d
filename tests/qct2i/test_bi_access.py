"""The BI path: connect as BI tools do (SQLAlchemy over duckdb-engine, read-only) to the
published warehouse while a build runs in another process; and the Parquet export for tools that
read files."""

from __future__ import annotations

import re
import subprocess
import time
from pathlib import Path

import pyarrow.parquet as pq
import sqlalchemy as sa

from tests.helpers import QCT2I, cli_env, run_cli
from tests.worlds.hand import write_hand_bundle

BOARD = sa.text(
    "select model_id, language_scope, hcq_total from marts.fct_hcq_leaderboard "
    "order by model_id, language_scope"
)


def bi_engine(warehouse: Path) -> sa.Engine:
    return sa.create_engine(f"duckdb:///{warehouse}", connect_args={"read_only": True})


def test_a_bi_connection_lists_and_reads_the_marts_while_a_build_runs(published, tmp_path):
    engine = bi_engine(published)
    with engine.connect() as bi:
        before = bi.execute(BOARD).fetchall()
    assert (
        run_cli(
            ["import", str(write_hand_bundle(tmp_path / "b", with_transcriptions=False))], published
        ).returncode
        == 0
    )

    env = cli_env(published)
    build = subprocess.Popen([QCT2I, "build"], env=env, stdout=subprocess.PIPE, text=True)
    lock = published.with_name("w.duckdb.lock")
    deadline = time.monotonic() + 60
    while not lock.read_text().strip() and time.monotonic() < deadline:  # the build holds the lock
        time.sleep(0.05)
    assert build.poll() is None, "the build ended before the reader connected"
    with engine.connect() as bi:
        marts = set(sa.inspect(bi).get_table_names(schema="marts"))
        during = bi.execute(BOARD).fetchall()
    assert {"fct_hcq_leaderboard", "fct_router_paired", "fct_coupling"} <= marts
    assert len(marts) >= 20
    assert during == before  # the published build, not a half-built one
    build.communicate(timeout=600)  # read its output: a full pipe would stall the build
    assert build.returncode == 0

    engine.dispose()  # a new connection sees the new build
    with bi_engine(published).connect() as bi:
        assert bi.execute(BOARD).fetchall() != before


def test_export_marts_writes_every_mart_as_parquet(published, tmp_path):
    out = tmp_path / "export"
    exported = run_cli(["export-marts", str(out)], published)
    assert exported.returncode == 0, exported.stderr
    with bi_engine(published).connect() as bi:
        marts = sa.inspect(bi).get_table_names(schema="marts")
        board = bi.execute(BOARD).fetchall()
        counts = {m: bi.execute(sa.text(f"select count(*) from marts.{m}")).scalar() for m in marts}
    assert sorted(p.stem for p in out.glob("*.parquet")) == sorted(marts)
    assert not list(out.glob(".*partial"))
    assert {m: pq.read_metadata(out / f"{m}.parquet").num_rows for m in marts} == counts
    table = pq.read_table(out / "fct_hcq_leaderboard.parquet").sort_by(
        [("model_id", "ascending"), ("language_scope", "ascending")]
    )
    columns = (table[c].to_pylist() for c in ("model_id", "language_scope", "hcq_total"))
    rows = list(zip(*columns, strict=True))
    assert rows == board


def test_docs_site_is_one_offline_file_describing_the_marts(published, tmp_path):
    out = tmp_path / "docs"
    built = run_cli(["docs", "--out", str(out)], published)
    assert built.returncode == 0, built.stderr[-3000:]
    page = (out / "static_index.html").read_text(encoding="utf-8")
    assert "fct_hcq_leaderboard" in page and "bi_dashboard" in page  # a mart and an exposure
    assert "Competition rank of the observed total" in page  # a column description
    # nothing loaded from the network: no external script, stylesheet or image
    assert re.search(r'<(script|link|img)\b[^>]*\b(src|href)="(https?:)?//', page) is None
    assert published.with_name("w.duckdb.wal").exists() is False  # the published file untouched
