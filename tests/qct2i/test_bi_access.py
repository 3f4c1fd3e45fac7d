"""The BI path: the Parquet export for tools that read files, and dbt's documentation site. (A BI
connection held open while a build runs: tests/qct2i/test_publish.py, with the other readers.)"""

from __future__ import annotations

import re
from pathlib import Path

import pyarrow.parquet as pq
import sqlalchemy as sa

from tests.helpers import run_cli

BOARD = sa.text(
    "select model_id, language_scope, hcq_total from marts.fct_hcq_leaderboard "
    "order by model_id, language_scope"
)


def bi_engine(warehouse: Path) -> sa.Engine:
    return sa.create_engine(f"duckdb:///{warehouse}", connect_args={"read_only": True})


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
