"""`dbt` in a child process against one warehouse file: the one home for how the CLI (`qct2i
build`), the tests, the benches and the studies run it. Dagster runs dbt through dagster-dbt's
`DbtCliResource` instead, which streams events into its asset materialisations.

A child process, not dbt's in-process runner, because dbt-duckdb keeps its DuckDB instance open in
the process that ran it, which would block later connections to the same file. The tests' direct
builds pass `launcher=qct2i.dbt_forkserver.run_forked`: the child is forked from a server that
imported dbt once (about 2.5 CPU-s of a new `dbt` process's start-up), still a fresh process per
run, so the same holds; the CLI, the benches and the studies start `dbt` itself.

Parsing: dbt re-parses the whole project (seconds) whenever the command-line vars or the
profile's connection settings differ from those its saved parse (`partial_parse.msgpack`) was
made with, and the DuckDB path is one of those settings. So dbt runs in the warehouse's folder
with the path given relative to it (the file name only), and each parse is kept in a cache keyed
by that name, the vars and the profiles folder (`target/partial_parse/`), copied into a run's
target before dbt starts and back (atomically) after. Builds of other warehouse files with the
same name, and a run with other vars, then reuse a parse instead of redoing it; dbt checks the
saved parse itself, so a stale cache entry costs a full parse, never a wrong one.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from ingestion.paths import DBT_BUILD_EXCLUDES, PROJECT_ROOT, dbt_environment


def _die_with_parent() -> None:
    """In the dbt child, before exec: ask Linux to kill it when its parent dies. A writer killed
    mid-build (kill -9) then leaves no dbt running on behind the writer lock it held, which the
    kernel has already released; elsewhere this is a no-op."""
    if not sys.platform.startswith("linux"):
        return
    import ctypes

    pr_set_pdeathsig = 1
    ctypes.CDLL("libc.so.6", use_errno=True).prctl(pr_set_pdeathsig, signal.SIGKILL)


# runs a `dbt ...` command line in a folder and environment, its output captured
Launcher = Callable[..., subprocess.CompletedProcess]


class DbtFailed(RuntimeError):
    """dbt exited non-zero; the message carries the tail of its output."""


PARTIAL_PARSE_CACHE = PROJECT_ROOT / "target" / "partial_parse"
PARTIAL_PARSE = "partial_parse.msgpack"


def run_dbt(
    command: str,
    warehouse: Path,
    *,
    select: Sequence[str] = (),
    target_path: Path | None = None,
    extra: Sequence[str] = (),
    profiles_dir: Path = PROJECT_ROOT,
    echo: bool = False,
    launcher: Launcher | None = None,
) -> subprocess.CompletedProcess:
    """Run `dbt <command>` over the project against the DuckDB file `warehouse` (a `build`
    without dbt's unit tests: `DBT_BUILD_EXCLUDES`).

    `target_path` keeps dbt's state (and logs) apart from other runs on the same checkout
    (default: the project's `target/` and `logs/`). `profiles_dir` replaces the project's
    profiles.yml (e.g. a one-thread DuckDB for bit-exact builds). `echo` lets dbt print to this
    process's terminal (the CLI) instead of capturing its output (tests and benches, which put
    the tail into the `DbtFailed` message). `launcher` runs the command line in place of a new
    `dbt` process, its output captured (the tests' `qct2i.dbt_forkserver.run_forked`).
    """
    warehouse = Path(warehouse).resolve()
    target = Path(target_path) if target_path is not None else PROJECT_ROOT / "target"
    logs = target if target_path is not None else PROJECT_ROOT / "logs"
    argv = [str(Path(sys.executable).parent / "dbt"), *command.split()]  # e.g. "docs generate"
    argv += ["--project-dir", str(PROJECT_ROOT), "--profiles-dir", str(profiles_dir)]
    argv += ["--target-path", str(target), "--log-path", str(logs)]
    if select:
        argv += ["--select", *select]
    if command == "build":
        argv += DBT_BUILD_EXCLUDES
    argv += list(extra)
    cached = _cached_parse(warehouse.name, extra, profiles_dir)
    _seed_parse(cached, target)
    # the path relative to the folder dbt runs in: see the module docstring
    env = {**dbt_environment(os.environ), "QCT2I_WAREHOUSE": warehouse.name}
    if launcher is not None and not echo:
        result = launcher(argv, env=env, cwd=warehouse.parent)
    else:
        result = subprocess.run(
            argv,
            env=env,
            cwd=warehouse.parent,
            capture_output=not echo,
            text=True,
            preexec_fn=_die_with_parent,
        )
    _keep_parse(target, cached)
    if result.returncode != 0 and echo:
        raise DbtFailed(f"dbt {command} failed (exit {result.returncode}); its output is above")
    if result.returncode != 0:
        raise DbtFailed(
            f"dbt {command} failed ({' '.join(select)}):\n"
            f"{result.stdout[-5000:]}\n{result.stderr[-2000:]}"
        )
    return result


def _cached_parse(name: str, extra: Sequence[str], profiles_dir: Path) -> Path:
    """The cache entry of a parse made for this file name, these vars and this profile."""
    extra = list(extra)
    cli_vars = extra[extra.index("--vars") + 1] if "--vars" in extra[:-1] else ""
    key = hashlib.sha256("\0".join([name, cli_vars, str(profiles_dir)]).encode()).hexdigest()
    return PARTIAL_PARSE_CACHE / f"{key[:20]}.msgpack"


def _seed_parse(cached: Path, target: Path) -> None:
    if cached.exists():
        target.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(cached, target / PARTIAL_PARSE)


def _keep_parse(target: Path, cached: Path) -> None:
    """Copy the run's parse into the cache through a temporary name, so a concurrent run reads
    the old entry or the new one, never half of one."""
    parsed = target / PARTIAL_PARSE
    if not parsed.exists():
        return
    cached.parent.mkdir(parents=True, exist_ok=True)
    partial = cached.with_name(f"{cached.name}.{os.getpid()}.partial")
    shutil.copyfile(parsed, partial)
    os.replace(partial, cached)
