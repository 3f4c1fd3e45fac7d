"""Shared test helpers: build a warehouse from a bundle with the real loader and a real dbt build
(through the app's one dbt runner), copy a built warehouse, read it, run the CLI as a user does
(the console script in a child process, or its `main()` in this one), require the shared test
data, and the independent references of Eq. 3."""

from __future__ import annotations

import contextlib
import io
import os
import shutil
import struct
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from itertools import permutations
from pathlib import Path

import duckdb
import pytest

from qct2i.dbt_forkserver import run_forked
from qct2i.dbt_runner import DbtFailed, run_dbt

_SESSION_DBT_TARGET = Path(tempfile.mkdtemp(prefix="qct2i-dbt-target-"))

# The running test's tiers (tests/conftest.py sets them before its fixtures run); None outside
# a pytest run, where nothing is checked.
RUNNING_TIERS: set[str] | None = None


@contextlib.contextmanager
def session_world() -> Iterator[None]:
    """Building a session world (tests/conftest.py): whichever test first asks for it, which
    the collection check already requires to be `dbt` or `e2e`."""
    global RUNNING_TIERS
    saved, RUNNING_TIERS = RUNNING_TIERS, None
    try:
        yield
    finally:
        RUNNING_TIERS = saved


def require_tier(what: str, *tiers: str) -> None:
    """Fail a test that `what` (builds, runs the console) without being marked for it, so that
    `pytest -m unit` (`make test-fast`) never builds."""
    if RUNNING_TIERS is not None and not RUNNING_TIERS & set(tiers):
        pytest.fail(f"this test {what}: mark it {' or '.join(tiers)} (tests/conftest.py)")


def dbt_build(
    warehouse: Path,
    select: tuple[str, ...] = (),
    extra: tuple[str, ...] = (),
    command: str = "build",
) -> None:
    """`dbt build` (every model and test, or `select`) against `warehouse`, as a user runs it;
    `command="run"` skips the data tests. dbt prints its errors only (`--quiet`): a failure's
    message still carries them, and a small build spends about an eighth on its progress lines.
    dbt runs in a child of this worker's fork server, which imported dbt once
    (`qct2i.dbt_forkserver`)."""
    require_tier("runs dbt", "dbt", "e2e")
    extra = ("--quiet", *extra)
    try:
        run_dbt(
            command,
            warehouse,
            select=select,
            target_path=_SESSION_DBT_TARGET,
            extra=extra,
            launcher=run_forked,
        )
    except DbtFailed as failure:
        pytest.fail(str(failure))


# Every warehouse a test builds is named WAREHOUSE_NAME (each in its own folder): dbt's saved parse
# is kept per file name and vars (qct2i/dbt_runner.py), and each new name costs a full parse of the
# project (about 7 s more than reusing one) on a fresh checkout.
WAREHOUSE_NAME = "w.duckdb"


def warehouse_in(folder: Path) -> Path:
    """`folder/w.duckdb`, the folder made."""
    folder.mkdir(parents=True, exist_ok=True)
    return folder / WAREHOUSE_NAME


def build_warehouse(
    bundle: Path,
    warehouse: Path,
    select: tuple[str, ...] = (),
    extra: tuple[str, ...] = (),
    command: str = "build",
) -> Path:
    from ingestion.bundle import load_bundle

    load_bundle(bundle, warehouse)
    dbt_build(warehouse, select, extra, command)
    return warehouse


def copy_warehouse(built: Path, folder: Path, name: str = WAREHOUSE_NAME) -> Path:
    """A copy of a built warehouse file (a session template) for a test that writes: `folder`
    gets the published file only, never a working copy or a lock."""
    folder.mkdir(parents=True, exist_ok=True)
    copy = folder / name
    shutil.copyfile(built, copy)
    return copy


def query(warehouse: Path, sql: str) -> list[tuple]:
    with duckdb.connect(str(warehouse), read_only=True) as con:
        return con.sql(sql).fetchall()


# -- the console script, as a user runs it ----------------------------------------------------

QCT2I = shutil.which("qct2i", path=str(Path(sys.executable).parent)) or "qct2i"


def exact_bits(value):
    """`value` with every float as its exact bits, through lists, tuples and dicts: rows compare
    equal only when every float is the same to the bit, and a NaN equals a NaN."""
    if isinstance(value, float):
        return struct.pack("<d", value)
    if isinstance(value, dict):
        return {key: exact_bits(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(exact_bits(item) for item in value)
    return value


def cli_env(warehouse: Path, **extra: str) -> dict[str, str]:
    """The console script's environment: dbt quiet (DBT_QUIET, dbt's --quiet: errors only, about
    an eighth of a small build is writing its progress lines) unless `extra` says otherwise."""
    return {**os.environ, "DBT_QUIET": "True", "QCT2I_WAREHOUSE": str(warehouse), **extra}


def run_cli(args: list[str], warehouse: Path, **env: str) -> subprocess.CompletedProcess:
    """`qct2i ARGS` in a child process against `warehouse` (extra environment in `env`)."""
    require_tier("runs the console script", "e2e")
    return subprocess.run(
        [QCT2I, *args], env=cli_env(warehouse, **env), capture_output=True, text=True, timeout=600
    )


@contextlib.contextmanager
def pseudo_terminal(columns: int = 100) -> Iterator[tuple[int, list[bytes]]]:
    """(the terminal side of a pseudo-terminal `columns` wide, what was written to it): hand the
    file descriptor to a child, or open a stream on a `os.dup` of it (the block's end closes
    this one); after the block, once every other holder has closed it too, the list holds all
    that the terminal received."""
    import fcntl
    import pty
    import struct
    import termios
    import threading

    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, columns, 0, 0))
    shown: list[bytes] = []

    def drain() -> None:
        while True:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # EIO: every holder of the terminal side closed it
                return
            if not chunk:
                return
            shown.append(chunk)

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    try:
        yield slave, shown
    finally:
        os.close(slave)
        reader.join(timeout=30)
        os.close(master)


def run_cli_on_a_terminal(
    args: list[str], warehouse: Path, **env: str
) -> subprocess.CompletedProcess:
    """`qct2i ARGS` as `run_cli` does, but with a pseudo-terminal as its stderr, as a person's
    terminal would be (its stdout still a pipe): `.stderr` is what the terminal showed."""
    require_tier("runs the console script", "e2e")
    with pseudo_terminal() as (terminal, shown):
        child = subprocess.Popen(
            [QCT2I, *args],
            env=cli_env(warehouse, **env),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=terminal,
        )
        try:
            stdout, _ = child.communicate(timeout=600)
        finally:
            if child.poll() is None:
                child.kill()
                child.wait()
    shown_text = b"".join(shown).decode(errors="replace")
    return subprocess.CompletedProcess(
        [QCT2I, *args], child.returncode, stdout.decode(), shown_text
    )


def run_main(args: list[str], warehouse: Path) -> subprocess.CompletedProcess:
    """`qct2i ARGS` through the CLI's `main()` in this process, against `warehouse`: what the
    console script would print and return, without a child's start-up. An exception escapes as
    itself (the console script would have printed a traceback). The environment is restored."""
    from qct2i.cli import main

    out, err = io.StringIO(), io.StringIO()
    saved = os.environ.get("QCT2I_WAREHOUSE")
    os.environ["QCT2I_WAREHOUSE"] = str(warehouse)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = main(args)
            except SystemExit as exit_:  # argparse refusing the arguments
                code = exit_.code if isinstance(exit_.code, int) else 2
    finally:
        if saved is None:
            os.environ.pop("QCT2I_WAREHOUSE", None)
        else:
            os.environ["QCT2I_WAREHOUSE"] = saved
    return subprocess.CompletedProcess(["qct2i", *args], code, out.getvalue(), err.getvalue())


def publish_bundle(bundle: Path, warehouse: Path) -> Path:
    """`qct2i import BUNDLE` then `qct2i build`, both succeeding, the build published."""
    imported = run_cli(["import", str(bundle)], warehouse)
    assert imported.returncode == 0, imported.stderr
    built = run_cli(["build"], warehouse)
    assert built.returncode == 0, built.stderr[-3000:]
    assert f"published {warehouse}" in built.stdout
    return warehouse


# -- test data under ../shared ------------------------------------------------------------------


def running_under_ci() -> bool:
    """CI=true (or 1), as CI services set it: missing test data is then an error, not a skip."""
    return os.environ.get("CI", "").strip().lower() in {"true", "1"}


def require_test_data(path: Path, what: str) -> Path:
    """`path` if it exists; else skip the test, or fail it under CI so that a CI run cannot pass
    with the data-dependent tests silently skipped."""
    if path.exists():
        return path
    message = f"{what} not found at {path}"
    if running_under_ci():
        pytest.fail(f"{message}; CI=true requires it (provide ../shared/data)", pytrace=False)
    pytest.skip(f"{message} (under CI=true this fails)")


# The structure marts with everything upstream, and the seeds that upstream tests read.
STRUCTURE_SELECTOR = ("+path:models/marts/structure", "resource_type:seed")


def build_structure_warehouse(
    bundle: Path, warehouse: Path, *extra: str, command: str = "build"
) -> Path:
    """Import, then `dbt build --select +<structure marts>` (`command="run"`: no data tests)."""
    # tests that also read marts outside the selection (singular tests) stay out
    extra = ("--indirect-selection", "cautious", *extra)
    return build_warehouse(bundle, warehouse, STRUCTURE_SELECTOR, extra, command)


# Independent references for Eq. 3, written from the definition (METHOD 3), sharing no code with
# method.text_match: the text-match tests and the router replay compare against them.


def reference_units(text: str) -> list[int]:
    """UTF-16 code units by the surrogate formula, not by the codec the code under test uses."""
    units = []
    for char in text:
        code = ord(char)
        if code < 0x10000:
            units.append(code)
        else:
            code -= 0x10000
            units += [0xD800 + (code >> 10), 0xDC00 + (code & 0x3FF)]
    return units


def reference_levenshtein(a: list[int], b: list[int]) -> int:
    """Textbook Wagner-Fischer table: unit-cost insert, delete and substitute."""
    table = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i in range(len(a) + 1):
        table[i][0] = i
    for j in range(len(b) + 1):
        table[0][j] = j
    for i in range(1, len(a) + 1):
        for j in range(1, len(b) + 1):
            substitute = table[i - 1][j - 1] + (0 if a[i - 1] == b[j - 1] else 1)
            table[i][j] = min(table[i - 1][j] + 1, table[i][j - 1] + 1, substitute)
    return table[len(a)][len(b)]


def reference_capped(target: str, block: str) -> int:
    target_units = reference_units(target)
    return min(reference_levenshtein(target_units, reference_units(block)), len(target_units))


def reference_text_match(targets: list[str], blocks: list[str]) -> tuple[int, int]:
    """Every injective assignment of targets to blocks (or to nothing), the cheapest kept."""
    lengths = [len(reference_units(t)) for t in targets]
    best = sum(lengths)
    slots = list(range(len(blocks))) + [None] * len(targets)
    for chosen in permutations(slots, len(targets)):
        cost = sum(
            lengths[i] if j is None else reference_capped(targets[i], blocks[j])
            for i, j in enumerate(chosen)
        )
        best = min(best, cost)
    return best, sum(lengths)
