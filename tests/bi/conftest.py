"""`make test-bi` (issue 34; never part of `make test` or CI: docs/testing.md): a live Superset,
brought up by `make bi`'s own provisioning (bi/provision.py, in `.venv-superset`), over a small
published warehouse of its own, with two judges so that every chart of the dashboard has rows.

These files are collected only when QCT2I_TEST_BI=1 (`make test-bi` sets it): the tier needs
Superset's environment, a Chromium and about six minutes, most of it Superset's `db upgrade`.
Superset runs as a child process group of the session, ended (by its id) when the session ends.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from pathlib import Path

import pytest

from bi.provision import LOGIN, ROOT

if os.environ.get("QCT2I_TEST_BI") != "1":
    collect_ignore_glob = ["test_*.py"]

SUPERSET_PYTHON = ROOT / ".venv-superset" / "bin" / "python"
# a first provisioning measured 4 min 47 s at load 7-8 (docs/bi.md): room for a slower machine
READY_SECONDS = 15 * 60
WITHOUT_MODEL = "lens"  # the generator the first build lacks and the second build adds


def split_bundles(root: Path) -> tuple[Path, Path]:
    """(the small world without WITHOUT_MODEL, the whole small world): the simulator's 24
    concepts, seed 3, with a second judge (tests/worlds/missing.py), so fct_judge_agreement has
    rows; importing the second after the first adds a generator to the leaderboard."""
    from ingestion.bundle.format import TABLES, write_bundle
    from ingestion.sources.simulator import SimulationConfig, simulate
    from tests.worlds.missing import MODELS, read_rows, with_second_judge

    config = SimulationConfig(concepts=24, seed=3, models=MODELS)
    tables = read_rows(simulate(root / "simulated", config).out_dir)
    tables["judgments"] = with_second_judge(tables["judgments"])
    without = {
        name: [r for r in rows if r.get("model_id") != WITHOUT_MODEL]
        if "model_id" in TABLES[name].column_names
        else rows
        for name, rows in tables.items()
    }
    write_bundle(root / "without", without)
    write_bundle(root / "whole", tables)
    return root / "without", root / "whole"


@pytest.fixture(scope="session")
def bi_world(tmp_path_factory) -> tuple[Path, Path]:
    """(published warehouse, the whole world's bundle): the world without WITHOUT_MODEL imported
    and built through the console script."""
    from tests.helpers import publish_bundle

    root = tmp_path_factory.mktemp("bi-world")
    without, whole = split_bundles(root)
    return publish_bundle(without, root / "qct2i.duckdb"), whole


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture(scope="session")
def superset_url(bi_world, tmp_path_factory):
    """`make bi`'s provisioning and server (bi/provision.py) over bi_world, its metadata in a
    fresh home; the base URL once /health answers."""
    if not SUPERSET_PYTHON.exists():
        pytest.fail("no .venv-superset: run `make test-bi`, which installs it", pytrace=False)
    warehouse, _ = bi_world
    home = tmp_path_factory.mktemp("superset-home")
    port = free_port()
    log = (home / "superset.log").open("w")
    server = subprocess.Popen(
        [str(SUPERSET_PYTHON), str(ROOT / "bi" / "provision.py"), "--port", str(port)],
        env={**os.environ, "QCT2I_WAREHOUSE": str(warehouse), "QCT2I_SUPERSET_HOME": str(home)},
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,  # its own process group: `superset run` is a grandchild
    )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until_ready(url, server, home / "superset.log")
        yield url
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=60)
        log.close()


def wait_until_ready(url: str, server: subprocess.Popen, log: Path) -> None:
    import requests

    started = time.monotonic()
    while time.monotonic() - started < READY_SECONDS:
        if server.poll() is not None:
            pytest.fail(f"make bi's provisioning ended:\n{log.read_text()[-4000:]}")
        try:
            if requests.get(f"{url}/health", timeout=5).status_code == 200:
                print(f"Superset ready after {time.monotonic() - started:.0f} s")
                return
        except requests.ConnectionError:
            pass
        time.sleep(3)
    pytest.fail(f"Superset not ready in {READY_SECONDS} s:\n{log.read_text()[-4000:]}")


@pytest.fixture(scope="session")
def superset_api(superset_url):
    """A requests session logged in through Superset's API (a JWT), with the CSRF token and
    session cookie its writing endpoints ask for beside it."""
    import requests

    api = requests.Session()
    user, password = LOGIN
    login = api.post(
        f"{superset_url}/api/v1/security/login",
        json={"username": user, "password": password, "provider": "db", "refresh": True},
        timeout=30,
    )
    assert login.status_code == 200, f"login: {login.status_code} {login.text[:300]}"
    api.headers["Authorization"] = f"Bearer {login.json()['access_token']}"
    csrf = api.get(f"{superset_url}/api/v1/security/csrf_token/", timeout=30)
    assert csrf.status_code == 200, f"csrf token: {csrf.status_code} {csrf.text[:300]}"
    api.headers.update({"X-CSRFToken": csrf.json()["result"], "Referer": superset_url})
    api.base_url = superset_url
    return api
