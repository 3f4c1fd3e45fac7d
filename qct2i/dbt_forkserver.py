"""A `run_dbt` launcher for the tests (`run_dbt(..., launcher=run_forked)`): dbt in a fresh child
forked from a server process that has imported dbt once, instead of a new `dbt` process that
imports it again (about 2.5 CPU-s of each call's start-up).

One server per process that asks (each pytest worker), started on the first call and ended with
it. Each call forks a new child from the server, so, as with the plain launcher, a DuckDB
instance lives and dies with one dbt run; the server itself only imports dbt and opens nothing.
The child runs exactly what `.venv/bin/dbt` runs (`dbt.cli.main.cli` on the same argv), in the
run's folder and environment, its output captured to files, and dies with the server, as the
server dies with the process that started it (PR_SET_PDEATHSIG).
"""

from __future__ import annotations

import atexit
import json
import os
import subprocess
import sys
import tempfile
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path

# what `.venv/bin/dbt` imports, and the adapter the project's profiles use
PRELOAD = ("dbt.cli.main", "dbt.adapters.duckdb")

_server: subprocess.Popen | None = None
_lock = threading.Lock()


def run_forked(
    argv: Sequence[str], *, env: Mapping[str, str], cwd: Path
) -> subprocess.CompletedProcess:
    """`argv` (a `dbt ...` command line) run by a child forked from this process's server; the
    same result as `subprocess.run(argv, env=env, cwd=cwd, capture_output=True, text=True)`."""
    with _lock, tempfile.TemporaryDirectory(prefix="qct2i-dbt-fork-") as folder:
        out, err = Path(folder) / "stdout", Path(folder) / "stderr"
        request = {"argv": list(argv), "env": dict(env), "cwd": str(cwd)}
        returncode = _ask(request | {"stdout": str(out), "stderr": str(err)})
        return subprocess.CompletedProcess(list(argv), returncode, out.read_text(), err.read_text())


def _ask(request: dict) -> int:
    server = _running_server()
    try:
        server.stdin.write(json.dumps(request) + "\n")
        server.stdin.flush()
        reply = server.stdout.readline()
    except BaseException:
        # interrupted mid-run (Ctrl-C, a test's timeout): its reply would answer the next
        # request, so end this server, and its child with it; the next call starts another
        server.kill()
        server.wait()
        raise
    if not reply:
        raise RuntimeError(f"the dbt fork server died (exit {server.wait()})")
    return json.loads(reply)["returncode"]


def _running_server() -> subprocess.Popen:
    global _server
    if _server is None or _server.poll() is not None:
        from qct2i.dbt_runner import _die_with_parent

        _server = subprocess.Popen(
            [sys.executable, "-c", "from qct2i.dbt_forkserver import serve; serve()"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            preexec_fn=_die_with_parent,
        )
        atexit.register(_stop, _server)
    return _server


def _stop(server: subprocess.Popen) -> None:
    """End the server (it ends at the end of its input) and reap it."""
    server.stdin.close()
    server.wait(timeout=60)


def serve() -> None:
    """The server: import dbt, then for each request line on stdin fork a child that runs it and
    answer its exit code on stdout; end at the end of stdin."""
    import importlib

    for module in PRELOAD:
        importlib.import_module(module)
    replies = sys.stdout
    for line in sys.stdin:
        pid = os.fork()
        if pid == 0:
            _child(json.loads(line))
        returncode = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
        replies.write(json.dumps({"returncode": returncode}) + "\n")
        replies.flush()


def _child(request: dict) -> None:
    """In the forked child: become the `dbt` process of the request. It never returns into the
    server's loop: dbt's click command ends it with `SystemExit` (its exit code), as in the
    console script, which unwinds through `serve` into the interpreter's own exit (its atexit
    handlers: multiprocessing's semaphores cleaned up, as a `dbt` process does); anything else
    escapes the same way, its traceback on the captured stderr, exit code 1."""
    from qct2i.dbt_runner import _die_with_parent

    _die_with_parent()
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    _redirect(0, os.devnull, os.O_RDONLY)  # never the server's requests
    _redirect(1, request["stdout"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    _redirect(2, request["stderr"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    sys.argv = list(request["argv"])
    from dbt.cli.main import cli

    cli()
    sys.exit(0)


def _redirect(fd: int, path: str, flags: int) -> None:
    opened = os.open(path, flags, 0o644)
    os.dup2(opened, fd)
    os.close(opened)
