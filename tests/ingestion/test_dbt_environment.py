"""The environment dbt runs in (`ingestion.paths.dbt_environment`): numpy without transparent
huge pages unless the user's environment says otherwise, from `qct2i build` (`run_dbt`) and from
the Dagster dbt assets (`dbt_writes_to`) alike. Each check asks a real numpy, started with the
environment dbt would get, whether it asks the kernel for huge pages."""

from __future__ import annotations

import os
import subprocess
import sys

from dagster_defs.assets.dbt import dbt_writes_to
from ingestion.paths import dbt_environment
from qct2i.dbt_runner import run_dbt

ASKS_FOR_HUGE_PAGES = (
    "from numpy._core.multiarray import _get_madvise_hugepage; print(_get_madvise_hugepage())"
)


def _numpy_asks_for_huge_pages(environ) -> str:
    done = subprocess.run(
        [sys.executable, "-c", ASKS_FOR_HUGE_PAGES],
        env=dict(environ),
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.strip()


def test_numpy_under_dbt_asks_for_no_huge_pages_unless_told(monkeypatch):
    monkeypatch.delenv("NUMPY_MADVISE_HUGEPAGE", raising=False)
    assert _numpy_asks_for_huge_pages(os.environ) == "True"  # numpy's own default here
    assert _numpy_asks_for_huge_pages(dbt_environment(os.environ)) == "False"
    monkeypatch.setenv("NUMPY_MADVISE_HUGEPAGE", "1")  # the user's word stands
    assert _numpy_asks_for_huge_pages(dbt_environment(os.environ)) == "True"


def test_run_dbt_starts_dbt_in_that_environment(tmp_path, monkeypatch):
    """The launcher is the seam the tests' fork server uses; here it runs the real numpy check
    in place of dbt, with the environment `run_dbt` built (the warehouse's name included)."""
    monkeypatch.delenv("NUMPY_MADVISE_HUGEPAGE", raising=False)
    seen = {}

    def launcher(argv, env, cwd):
        seen["numpy"] = _numpy_asks_for_huge_pages(env)
        seen["warehouse"] = env["QCT2I_WAREHOUSE"]
        return subprocess.CompletedProcess(argv, 0, "", "")

    run_dbt("debug", tmp_path / "w.duckdb", target_path=tmp_path / "target", launcher=launcher)
    assert seen == {"numpy": "False", "warehouse": "w.duckdb"}


def test_the_dagster_dbt_assets_set_it_for_their_block_and_restore_after(tmp_path, monkeypatch):
    monkeypatch.delenv("NUMPY_MADVISE_HUGEPAGE", raising=False)
    monkeypatch.setenv("QCT2I_WAREHOUSE", "published.duckdb")
    with dbt_writes_to(tmp_path / "working.duckdb"):
        assert _numpy_asks_for_huge_pages(os.environ) == "False"
        assert os.environ["QCT2I_WAREHOUSE"] == str(tmp_path / "working.duckdb")
    assert "NUMPY_MADVISE_HUGEPAGE" not in os.environ
    assert os.environ["QCT2I_WAREHOUSE"] == "published.duckdb"
