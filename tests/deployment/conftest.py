"""`make test-deployment` (issue 33; never part of `make test` or CI: docs/testing.md): the real
`dagster dev` (webserver, daemon, queued run coordinator, a run worker process per run) over a copy
of the hand world, with an inbox of its own. The daemon, its code server and each run's worker
process take minutes, more than the suite can spend; the in-process tests of the same sensor are
tests/dagster_defs/test_inbox.py.

Collected only when QCT2I_TEST_DEPLOYMENT=1 (`make test-deployment` sets it). `dagster dev` runs
as its own process group, ended (by its id) when the session ends.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

import pytest

from tests.helpers import copy_warehouse
from tests.qct2i.conftest import tiny_models  # noqa: F401 (the cpu profile's judge and reader)

if os.environ.get("QCT2I_TEST_DEPLOYMENT") != "1":
    collect_ignore_glob = ["test_*.py"]

ROOT = Path(__file__).resolve().parents[2]
DAGSTER = ROOT / ".venv" / "bin" / "dagster"
READY_SECONDS = 5 * 60  # the webserver and the daemon's code server load the definitions


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Deployment:
    """A running `dagster dev`: its URL, the published warehouse, the inbox and the log."""

    def __init__(self, root: Path, warehouse: Path) -> None:
        self.root = root
        self.warehouse = warehouse
        self.inbox = warehouse.parent / "inbox"
        self.home = root / "dagster_home"
        self.log = root / "dagster.log"
        self.url = f"http://127.0.0.1:{free_port()}"

    def log_tail(self) -> str:
        return self.log.read_text(errors="replace")[-6000:]

    def wait_for(self, what: str, done, seconds: float) -> None:
        """Poll `done()` until it holds; fail with the deployment's log when it never does."""
        started = time.monotonic()
        while time.monotonic() - started < seconds:
            if done():
                print(f"{what}: {time.monotonic() - started:.0f} s")
                return
            time.sleep(2)
        pytest.fail(
            f"{what}: not after {seconds:.0f} s; the inbox:\n{self.inbox_listing()}\n"
            f"dagster dev's log:\n{self.log_tail()}"
        )

    def inbox_listing(self) -> str:
        """Every path in the inbox, and each refusal's reason."""
        lines = [str(p.relative_to(self.inbox)) for p in sorted(self.inbox.rglob("*"))]
        for refused in sorted(self.inbox.rglob("REFUSED.txt")):
            lines.append(f"{refused.relative_to(self.inbox)}:\n{refused.read_text()[-2000:]}")
        return "\n".join(lines)


@pytest.fixture(scope="session")
def deployment(hand_published, tiny_models, tmp_path_factory):  # noqa: F811
    """`make dev`'s `dagster dev` (the repository's dagster.yaml in a fresh DAGSTER_HOME) over a
    copy of the hand world, its inbox beside it, the sensor on as `make dev` starts it; the cpu
    profile's tiny models judge and read an images drop (answering every question "yes")."""
    import requests

    root = tmp_path_factory.mktemp("deployment")
    world = Deployment(root, copy_warehouse(hand_published, root / "warehouse"))
    world.home.mkdir()
    shutil.copy(ROOT / "dagster.yaml", world.home / "dagster.yaml")
    env = {
        **os.environ,
        "DAGSTER_HOME": str(world.home),
        "QCT2I_WAREHOUSE": str(world.warehouse),
        "QCT2I_INBOX": str(world.inbox),
        "QCT2I_ML_PROFILE": "cpu",
        "QCT2I_TINY_MODELS": str(tiny_models),
    }
    for setting in ("QCT2I_INBOX_SENSOR", "QCT2I_INBOX_QUIET_S"):
        env.pop(setting, None)
    port = world.url.rsplit(":", 1)[1]
    with world.log.open("w") as log:
        server = subprocess.Popen(
            [str(DAGSTER), "dev", "-h", "127.0.0.1", "-p", port],
            cwd=ROOT,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # the webserver and the daemon are its children
        )

        def answering() -> bool:
            if server.poll() is not None:
                pytest.fail(f"dagster dev ended:\n{world.log_tail()}")
            try:
                return requests.get(f"{world.url}/server_info", timeout=5).ok
            except requests.ConnectionError:
                return False

        try:
            world.wait_for("dagster dev answering", answering, READY_SECONDS)
            yield world
        finally:
            os.killpg(server.pid, signal.SIGTERM)
            try:
                server.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(server.pid, signal.SIGKILL)
