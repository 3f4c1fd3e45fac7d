"""`dbt` in a child process against one warehouse file: the one home for how the CLI (`qct2i
build`), the tests, the benches and the studies run it. Dagster runs dbt through dagster-dbt's
`DbtCliResource` instead, which streams events into its asset materialisations.

A child process, not dbt's in-process runner, because dbt-duckdb keeps its DuckDB instance open in
the process that ran it, which would block later connections to the same file.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from ingestion.paths import PROJECT_ROOT


def _die_with_parent() -> None:
    """In the dbt child, before exec: ask Linux to kill it when its parent dies. A writer killed
    mid-build (kill -9) then leaves no dbt running on behind the writer lock it held, which the
    kernel has already released; elsewhere this is a no-op."""
    if not sys.platform.startswith("linux"):
        return
    import ctypes

    pr_set_pdeathsig = 1
    ctypes.CDLL("libc.so.6", use_errno=True).prctl(pr_set_pdeathsig, signal.SIGKILL)


class DbtFailed(RuntimeError):
    """dbt exited non-zero; the message carries the tail of its output."""


def run_dbt(
    command: str,
    warehouse: Path,
    *,
    select: Sequence[str] = (),
    target_path: Path | None = None,
    extra: Sequence[str] = (),
    profiles_dir: Path = PROJECT_ROOT,
    echo: bool = False,
) -> subprocess.CompletedProcess:
    """Run `dbt <command>` over the project with QCT2I_WAREHOUSE = `warehouse`.

    `target_path` keeps dbt's state (and logs) apart from other runs on the same checkout.
    `profiles_dir` replaces the project's profiles.yml (e.g. a one-thread DuckDB for bit-exact
    builds). `echo` lets dbt print to this process's terminal (the CLI) instead of capturing
    its output (tests and benches, which put the tail into the `DbtFailed` message).
    """
    argv = [str(Path(sys.executable).parent / "dbt"), *command.split()]  # e.g. "docs generate"
    argv += ["--project-dir", str(PROJECT_ROOT), "--profiles-dir", str(profiles_dir)]
    if target_path is not None:
        argv += ["--target-path", str(target_path), "--log-path", str(target_path)]
    if select:
        argv += ["--select", *select]
    argv += list(extra)
    env = {**os.environ, "QCT2I_WAREHOUSE": str(warehouse)}
    result = subprocess.run(
        argv, env=env, capture_output=not echo, text=True, preexec_fn=_die_with_parent
    )
    if result.returncode != 0 and echo:
        raise DbtFailed(f"dbt {command} failed (exit {result.returncode}); its output is above")
    if result.returncode != 0:
        raise DbtFailed(
            f"dbt {command} failed ({' '.join(select)}):\n"
            f"{result.stdout[-5000:]}\n{result.stderr[-2000:]}"
        )
    return result
