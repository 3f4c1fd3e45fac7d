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
with the path given relative to it (the file name only), and each run is seeded from, and leaves
its parse in, the entry of that name, its vars and profiles folder in the parse cache
(`ingestion.store.dbt_parse`). Builds of other warehouse files with the same name, and a run with
other vars, then reuse a parse instead of redoing it.

A run without its own `target_path` (the CLI's builds) still works in a folder of its own,
`target/runs/<pid>-<token>/`, and moves dbt's artifacts into `target/` when it ends (each file
replaced atomically). Two such runs at once (two warehouses built from one checkout, or the tests'
parallel workers) used to share `target/partial_parse.msgpack`: each read the parse the other had
seeded, re-parsed, and could leave the other warehouse's parse in its cache entry. `target/` still
ends up holding the last run's manifest, run results and compiled SQL, as dbt's own runs leave it.
"""

from __future__ import annotations

import fcntl
import os
import secrets
import shutil
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from ingestion.paths import DBT_BUILD_EXCLUDES, PROJECT_ROOT, dbt_environment
from ingestion.store.dbt_parse import PARTIAL_PARSE, reused_parse


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


SHARED_TARGET = PROJECT_ROOT / "target"
# the folders of the runs that have no target of their own, until they end
RUNS = SHARED_TARGET / "runs"


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
    (default: a folder of the run's own, its artifacts moved into the project's `target/` at
    the end, and the project's `logs/`: see the module docstring). `profiles_dir` replaces the
    project's profiles.yml (e.g. a one-thread DuckDB for bit-exact builds). `echo` lets dbt
    print to this process's terminal (the CLI) instead of capturing its output (tests and
    benches, which put the tail into the `DbtFailed` message). `launcher` runs the command line
    in place of a new `dbt` process, its output captured (the tests'
    `qct2i.dbt_forkserver.run_forked`).
    """
    warehouse = Path(warehouse).resolve()
    with _run_folders(target_path) as (target, logs):
        argv = [str(Path(sys.executable).parent / "dbt"), *command.split()]  # e.g. "docs generate"
        argv += ["--project-dir", str(PROJECT_ROOT), "--profiles-dir", str(profiles_dir)]
        argv += ["--target-path", str(target), "--log-path", str(logs)]
        if select:
            argv += ["--select", *select]
        if command == "build":
            argv += DBT_BUILD_EXCLUDES
        argv += list(extra)
        # the path relative to the folder dbt runs in: see the module docstring
        env = {**dbt_environment(os.environ), "QCT2I_WAREHOUSE": warehouse.name}
        with reused_parse(warehouse.name, extra, profiles_dir, target):
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
        if result.returncode != 0 and echo:
            raise DbtFailed(f"dbt {command} failed (exit {result.returncode}); its output is above")
        if result.returncode != 0:
            raise DbtFailed(
                f"dbt {command} failed ({' '.join(select)}):\n"
                f"{result.stdout[-5000:]}\n{result.stderr[-2000:]}"
            )
        return result


@contextmanager
def _run_folders(target_path: Path | None) -> Iterator[tuple[Path, Path]]:
    """dbt's target and log folders for one run: `target_path` for both, or a new folder of the
    run's own and the project's `logs/`, its artifacts moved into `target/` when the run ends."""
    if target_path is not None:
        yield Path(target_path), Path(target_path)
        return
    run_target = _private_target()
    try:
        yield run_target, PROJECT_ROOT / "logs"
    finally:
        _publish_artifacts(run_target, SHARED_TARGET)


def _private_target() -> Path:
    """A new folder for one run, after removing those of runs whose process has died (a build
    killed with kill -9 leaves its folder behind)."""
    if RUNS.exists():
        for folder in RUNS.iterdir():
            if not _process_alive(folder.name.split("-")[0]):
                shutil.rmtree(folder, ignore_errors=True)
    folder = RUNS / f"{os.getpid()}-{secrets.token_hex(4)}"
    folder.mkdir(parents=True)
    return folder


def _process_alive(pid: str) -> bool:
    """Whether the process of a run folder's name still runs (a name that is no number: no)."""
    try:
        os.kill(int(pid), 0)
    except (ValueError, ProcessLookupError):
        return False
    except PermissionError:  # another user's process
        return True
    return True


def _publish_artifacts(run_target: Path, shared: Path) -> None:
    """Move a finished run's artifacts into the shared target: each file by an atomic rename, so a
    reader (Dagster's definitions read `manifest.json`) never sees half of one; each folder
    (`compiled/`, `run/`) whole, under a lock, so two runs ending at once do not interleave. The
    run's parse is not moved: it went to the cache (`reused_parse`)."""
    (run_target / PARTIAL_PARSE).unlink(missing_ok=True)
    with open(shared / ".publish.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        for item in sorted(run_target.iterdir()):
            destination = shared / item.name
            if item.is_dir():
                shutil.rmtree(destination, ignore_errors=True)
            os.replace(item, destination)
    shutil.rmtree(run_target, ignore_errors=True)
