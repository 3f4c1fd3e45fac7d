"""pytest setup shared by every test: offline hub, no dbt telemetry or debug log file, the test
tiers, and the worlds that several test files read, built once per session.

Tiers (markers, `make test-fast` runs `unit` only): `dbt` runs a real dbt build, `e2e` runs the
console script, a browser, Celery workers or kill -9, `unit` does neither. A folder gives its
tests a tier (`TIERS_BY_FOLDER`), a module or test may add `dbt` or `e2e` itself, and every other
test is `unit`. The helpers that build or run the console refuse to from a test whose tiers do not
say so, and a test that asks for a built world must be `dbt` or `e2e`, so `-m unit` never builds.

A test reads a session world as it is; a test that writes copies it first
(`tests.helpers.copy_warehouse`): the session ends by checking that no test changed one.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from tests import helpers
from tests.helpers import publish_bundle, require_test_data

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("DBT_SEND_ANONYMOUS_USAGE_STATS", "False")
# dbt's debug log file costs about a sixth of a small build; a failing run's output still reaches
# the test (DbtFailed carries its tail)
os.environ.setdefault("DBT_LOG_LEVEL_FILE", "none")

TIERS = ("unit", "dbt", "e2e")
TIERS_BY_FOLDER = {
    "tests/method": "unit",
    "tests/marts": "dbt",
    "tests/qct2i": "e2e",
}
# fixtures that hold a world built with dbt (or the console script): their users build
BUILT_WORLDS = {
    "demo_warehouse": "dbt",
    "routing_world": "dbt",
    "hand_published": "e2e",
    "hand_published_without_transcriptions": "e2e",
    "published": "e2e",
}


def pytest_collection_modifyitems(config, items):
    root = Path(config.rootpath)
    misfiled = []
    for item in items:
        folder = item.path.parent.relative_to(root).as_posix()
        tier = next((t for f, t in TIERS_BY_FOLDER.items() if folder.startswith(f)), None)
        if tier and tier != "unit":
            item.add_marker(tier)
        tiers = {m.name for m in item.iter_markers() if m.name in TIERS}
        if not tiers & {"dbt", "e2e"}:
            item.add_marker("unit")
            building = sorted(set(getattr(item, "fixturenames", ())) & BUILT_WORLDS.keys())
            if building:
                misfiled.append(f"{item.nodeid} uses {building}: mark it dbt or e2e")
    if misfiled:
        raise pytest.UsageError("\n".join(misfiled))


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    """Before the test's fixtures run: the tiers its helpers may build under."""
    helpers.RUNNING_TIERS = {m.name for m in item.iter_markers() if m.name in TIERS}


@pytest.fixture(scope="session")
def dsg_1k_path() -> Path:
    """The public DSG-1k annotations under ../shared (tests/worlds/dsg.py)."""
    from tests.worlds.dsg import DSG_1K

    return require_test_data(DSG_1K, "DSG-1k annotations")


@pytest.fixture(scope="session")
def tiny_sd(tmp_path_factory):
    from ingestion.backends.tiny.models import build_tiny_stable_diffusion

    return build_tiny_stable_diffusion(tmp_path_factory.mktemp("tiny") / "stable_diffusion")


@pytest.fixture(scope="session")
def tiny_vl(tmp_path_factory):
    from ingestion.backends.tiny.models import build_tiny_qwen3_vl

    return build_tiny_qwen3_vl(tmp_path_factory.mktemp("tiny") / "qwen3_vl")


@pytest.fixture(scope="session")
def demo_bundle(tmp_path_factory):
    """The demo world (every generator, DEMO_CONCEPTS concepts, seed 0), simulated once: its
    `SimulationSummary` (the bundle is `.out_dir`). Tests only read it."""
    from ingestion.sources.simulator import DEMO_CONCEPTS, SimulationConfig, simulate

    config = SimulationConfig(concepts=DEMO_CONCEPTS, seed=0)
    return simulate(tmp_path_factory.mktemp("demo") / "bundle", config)


@pytest.fixture(scope="session")
def demo_warehouse(demo_bundle) -> Path:
    """The demo bundle imported and built with every dbt model and test, once per session."""
    from tests.helpers import build_warehouse

    with helpers.session_world():
        return build_warehouse(demo_bundle.out_dir, demo_bundle.out_dir.parent / "demo.duckdb")


@pytest.fixture(scope="session")
def routing_world(tmp_path_factory) -> tuple[Path, Path]:
    """(bundle, warehouse) of the small routing world (tests/worlds/routing.py, 300 concepts,
    seed 7) with the routing and scoring marts built. Tests only read both."""
    from ingestion.bundle import load_bundle
    from tests.worlds.routing import dbt_build_routing, simulate_world

    root = tmp_path_factory.mktemp("routing")
    bundle = simulate_world(root / "bundle")
    warehouse = root / "world.duckdb"
    load_bundle(bundle, warehouse)
    with helpers.session_world():
        dbt_build_routing(warehouse)
    return bundle, warehouse


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture(scope="session")
def _unchanged_templates():
    """Every session world registered here must end the session byte-identical."""
    registered: dict[Path, str] = {}
    yield registered
    changed = [str(path) for path, digest in registered.items() if _digest(path) != digest]
    assert not changed, f"a test wrote into a session world instead of a copy: {changed}"


def _template(path: Path, registered: dict) -> Path:
    registered[path] = _digest(path)
    return path


@pytest.fixture(scope="session")
def hand_published(tmp_path_factory, _unchanged_templates) -> Path:
    """The hand bundle (tests/worlds/hand.py) imported and built through the console script,
    `qct2i import` then `qct2i build`: a published warehouse, built once per session."""
    from tests.worlds.hand import write_hand_bundle

    root = tmp_path_factory.mktemp("hand-published")
    with helpers.session_world():
        warehouse = publish_bundle(write_hand_bundle(root / "bundle"), root / "w.duckdb")
    return _template(warehouse, _unchanged_templates)


@pytest.fixture(scope="session")
def hand_published_without_transcriptions(tmp_path_factory, _unchanged_templates) -> Path:
    """The same without transcriptions (Text Content scored from the judgments), published."""
    from tests.worlds.hand import write_hand_bundle

    root = tmp_path_factory.mktemp("hand-published-no-ocr")
    bundle = write_hand_bundle(root / "bundle", with_transcriptions=False)
    with helpers.session_world():
        warehouse = publish_bundle(bundle, root / "w.duckdb")
    return _template(warehouse, _unchanged_templates)
