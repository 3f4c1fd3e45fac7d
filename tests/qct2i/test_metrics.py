"""The semantic layer (docs/metrics.md): MetricFlow's own `mf query`, run as a user runs it
against a published warehouse opened read-only, returns the marts' numbers. Expected values come
from plain SQL over the marts, not from MetricFlow."""

from __future__ import annotations

import csv
import math
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest

from ingestion.paths import PROJECT_ROOT
from qct2i.dbt_runner import run_dbt
from tests.helpers import copy_warehouse, query

MF = Path(sys.executable).parent / "mf"
TOLERANCE = 1e-9


@pytest.fixture(scope="module")
def warehouse(hand_published, tmp_path_factory) -> Path:
    """A copy of the session's published hand warehouse."""
    return copy_warehouse(hand_published, tmp_path_factory.mktemp("metrics-world"))


@pytest.fixture(scope="module")
def bi_reader(warehouse) -> Iterator[duckdb.DuckDBPyConnection]:
    """A BI tool connected read-only for the whole module: DuckDB refuses a read-write open of a
    file that another process reads, so every `mf` run below proves it opened the file read-only."""
    with duckdb.connect(str(warehouse), read_only=True) as connection:
        yield connection


@pytest.fixture(scope="module")
def mf_project(warehouse, tmp_path_factory) -> Path:
    """The project as `mf` sees it, with a target folder of its own: `mf` reads
    `<project>/target/semantic_manifest.json`, which `dbt parse` writes (naming the warehouse's
    DuckDB catalog); a private target keeps other runs on the checkout out of it."""
    folder = tmp_path_factory.mktemp("mf-project")
    for name in ("dbt_project.yml", "profiles.yml"):
        (folder / name).symlink_to(PROJECT_ROOT / name)
    run_dbt("parse", warehouse, target_path=folder / "target", extra=("--write-json",))
    return folder


def run_mf(
    project: Path, warehouse: Path, metrics: str, group_by: str, target: str = "reader"
) -> subprocess.CompletedProcess:
    """`mf query --metrics METRICS --group-by GROUP_BY --csv FILE` in `project`."""
    out = project / "result.csv"
    out.unlink(missing_ok=True)
    argv = [str(MF), "query", "--metrics", metrics, "--group-by", group_by, "--csv", str(out)]
    env = {
        **os.environ,
        "QCT2I_WAREHOUSE": str(warehouse),
        "QCT2I_DBT_TARGET": target,
        "DBT_SEND_ANONYMOUS_USAGE_STATS": "False",
    }
    return subprocess.run(argv, cwd=project, env=env, capture_output=True, text=True, timeout=300)


def mf_rows(project: Path, warehouse: Path, metrics: str, group_by: str) -> list[dict]:
    result = run_mf(project, warehouse, metrics, group_by)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    with (project / "result.csv").open(newline="") as handle:
        return list(csv.DictReader(handle))


def keyed(rows: list[dict], keys: list[str], values: list[str]) -> dict[tuple, tuple]:
    """mf's CSV rows as {key columns: metric values}; an empty cell is SQL NULL."""

    def number(cell: str) -> float | None:
        return None if cell == "" else float(cell)

    return {tuple(row[k] for k in keys): tuple(number(row[v]) for v in values) for row in rows}


def sql_keyed(warehouse: Path, sql: str, n_keys: int) -> dict[tuple, tuple]:
    return {row[:n_keys]: row[n_keys:] for row in query(warehouse, sql)}


def assert_same(got: dict[tuple, tuple], expected: dict[tuple, tuple]) -> None:
    assert expected and got.keys() == expected.keys()
    for key, values in expected.items():
        for value, want in zip(got[key], values, strict=True):
            assert (value is None) == (want is None), key
            assert want is None or math.isclose(value, want, rel_tol=0, abs_tol=TOLERANCE), key


def test_hcq_total_by_model_and_scope_is_the_leaderboard(warehouse, bi_reader, mf_project):
    rows = mf_rows(mf_project, warehouse, "hcq_total", "model_id,language_scope")
    expected = sql_keyed(
        warehouse,
        "select model_id, language_scope, hcq_total from marts.fct_hcq_leaderboard",
        n_keys=2,
    )
    assert {scope for _, scope in expected} == {"en", "zh", "pooled", "bilingual"}
    assert_same(keyed(rows, ["model_id", "language_scope"], ["hcq_total"]), expected)


def test_capability_score_by_cell_and_by_group(warehouse, bi_reader, mf_project):
    cells = mf_rows(mf_project, warehouse, "capability_score", "model_id,language_scope,capability")
    keys = ["model_id", "language_scope", "capability"]
    assert_same(
        keyed(cells, keys, ["capability_score"]),
        sql_keyed(
            warehouse,
            "select model_id, language_scope, capability, score from marts.fct_capability_scores",
            n_keys=3,
        ),
    )
    # a coarser group-by averages the rows it holds (NULL scores left out)
    group = "capability_score_entry__capability_group"
    groups = mf_rows(mf_project, warehouse, "capability_score", f"model_id,language_scope,{group}")
    assert_same(
        keyed(groups, ["model_id", "language_scope", group], ["capability_score"]),
        sql_keyed(
            warehouse,
            "select model_id, language_scope, capability_group, sum(score) / count(score) "
            "from marts.fct_capability_scores group by all",
            n_keys=3,
        ),
    )


def test_exact_completion_by_tag_count(warehouse, bi_reader, mf_project):
    bucket = "exactness_bucket__n_tags_bucket"
    rows = mf_rows(mf_project, warehouse, "exact_completion", f"model_id,language,{bucket}")
    expected = sql_keyed(
        warehouse,
        "select model_id, language, n_tags_bucket, exact_completion "
        "from marts.agg_exactness_by_tag_count",
        n_keys=3,
    )
    assert_same(keyed(rows, ["model_id", "language", bucket], ["exact_completion"]), expected)


def test_routed_quality_and_cost_per_router(warehouse, bi_reader, mf_project):
    metrics = ["routed_quality", "routed_quality_en", "routed_quality_zh", "routed_cost"]
    rows = mf_rows(mf_project, warehouse, ",".join(metrics), "router")
    expected = sql_keyed(
        warehouse,
        "select router, bilingual, en, zh, gpu_s_per_mp from marts.agg_router_summary",
        n_keys=1,
    )
    assert {"q_profile_q", "q_profile_c", "oracle"} <= {router for (router,) in expected}
    assert_same(keyed(rows, ["router"], metrics), expected)


def test_metric_time_is_the_day_the_build_was_published(warehouse, bi_reader, mf_project):
    rows = mf_rows(mf_project, warehouse, "hcq_total", "metric_time")
    (built_at,) = query(warehouse, "select built_at from main.build_id")[0]
    assert [row["metric_time__day"][:10] for row in rows] == [built_at.date().isoformat()]


def test_mf_reads_the_published_file_read_only(warehouse, bi_reader, mf_project):
    """The reader target ran beside a connected BI tool (above) and left no write-ahead log; the
    writer's target, which opens the file read-write, is refused in the same situation."""
    assert mf_rows(mf_project, warehouse, "hcq_total", "language_scope")
    writer = run_mf(mf_project, warehouse, "hcq_total", "language_scope", target="dev")
    assert writer.returncode != 0
    assert "lock" in (writer.stdout + writer.stderr).lower()
    assert not warehouse.with_name(warehouse.name + ".wal").exists()
