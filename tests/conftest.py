"""pytest setup shared by every test: offline hub, no dbt telemetry or debug log file, the test
tiers, and the worlds that several test files read, built once per session.

Tiers (markers, `make test-fast` runs `unit` only): `dbt` runs a real dbt build, `e2e` runs the
console script, a browser, Celery workers or kill -9, `unit` does neither. A folder gives its
tests a tier (`TIERS_BY_FOLDER`), a module or test may add `dbt` or `e2e` itself, and every other
test is `unit`. The helpers that build or run the console refuse to from a test whose tiers do not
say so, and a test that asks for a built world must be `dbt` or `e2e`, so `-m unit` never builds.

A world is built once per run (`build_once`: under pytest-xdist the workers share it). A test
reads it as it is; a test that writes copies it first (`tests.helpers.copy_warehouse`): each
worker's session ends by checking that no test changed one.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import pickle
import shutil
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest

from tests import helpers
from tests.helpers import publish_bundle, require_test_data

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("DBT_SEND_ANONYMOUS_USAGE_STATS", "False")
# dbt's debug log file costs about a sixth of a small build, its JSON artifacts (manifest.json,
# run_results.json) about a tenth, and no test reads them (the runs that need them, `qct2i docs`
# and MetricFlow's parse, ask with --write-json); a failing run's output still reaches the test
# (DbtFailed carries its tail)
os.environ.setdefault("DBT_LOG_LEVEL_FILE", "none")
os.environ.setdefault("DBT_WRITE_JSON", "False")

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
    "small_demo": "e2e",
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
    if hasattr(config, "workerinput"):  # a pytest-xdist worker: the files longest first
        items.sort(key=_longest_file_first(root, items))


def _longest_file_first(root: Path, items: list[pytest.Item]) -> Callable:
    """The workers take whole files in collection order (`--dist loadfile`, and
    `--no-loadscope-reorder`, which would order them by their number of tests): longest first
    (tests/file_seconds.json, a measured run; a second a test for a file it lacks), so the last
    files are short and both workers end together. Every worker sorts alike, as xdist requires;
    a file's tests keep their order (the sort is stable)."""
    measured = json.loads((root / "tests" / "file_seconds.json").read_text(encoding="utf-8"))
    names = {item: item.path.relative_to(root).as_posix() for item in items}
    tests_in = Counter(names.values())

    def key(item: pytest.Item) -> tuple[float, str]:
        name = names[item]
        return (-measured.get(name, float(tests_in[name])), name)

    return key


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    """Before the test's fixtures run: the tiers its helpers may build under."""
    helpers.RUNNING_TIERS = {m.name for m in item.iter_markers() if m.name in TIERS}


@pytest.fixture(scope="session")
def dsg_1k_path() -> Path:
    """The public DSG-1k annotations under ../shared (tests/worlds/dsg.py)."""
    from tests.worlds.dsg import DSG_1K

    return require_test_data(DSG_1K, "DSG-1k annotations")


def _shared_root(tmp_path_factory) -> Path:
    """The folder every worker of this run sees: under pytest-xdist each worker has its own base
    temp folder inside the run's, which is the shared one."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


def build_once(tmp_path_factory, name: str, build: Callable[[Path], object]):
    """`build(folder)`'s result, built once per test run: the first worker to ask takes a lock
    and builds into `<run temp>/shared-<name>/`; the others wait for it and read the result
    (pickled beside it) instead of building the same world again."""
    root = _shared_root(tmp_path_factory)
    folder, done = root / f"shared-{name}", root / f"shared-{name}.pickle"
    with open(root / f"shared-{name}.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if not done.exists():
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir()
            with helpers.session_world():
                result = build(folder)
            partial = done.with_suffix(".partial")
            partial.write_bytes(pickle.dumps(result))
            partial.replace(done)
        return pickle.loads(done.read_bytes())


@pytest.fixture(scope="session")
def tiny_sd(tmp_path_factory):
    from ingestion.backends.tiny.models import build_tiny_stable_diffusion

    return build_once(
        tmp_path_factory, "tiny-sd", lambda f: build_tiny_stable_diffusion(f / "stable_diffusion")
    )


@pytest.fixture(scope="session")
def tiny_vl(tmp_path_factory):
    from ingestion.backends.tiny.models import build_tiny_qwen3_vl

    return build_once(tmp_path_factory, "tiny-vl", lambda f: build_tiny_qwen3_vl(f / "qwen3_vl"))


@pytest.fixture(scope="session")
def demo_bundle(tmp_path_factory):
    """The demo world (every generator, DEMO_CONCEPTS concepts, seed 0), simulated once: its
    `SimulationSummary` (the bundle is `.out_dir`). Tests only read it."""
    from ingestion.sources.simulator import DEMO_CONCEPTS, SimulationConfig, simulate

    config = SimulationConfig(concepts=DEMO_CONCEPTS, seed=0)
    return build_once(tmp_path_factory, "demo-bundle", lambda f: simulate(f / "bundle", config))


@pytest.fixture(scope="session")
def demo_warehouse(tmp_path_factory, demo_bundle) -> Path:
    """The demo bundle imported and built with every dbt model and test, once per run."""
    from tests.helpers import build_warehouse

    return build_once(
        tmp_path_factory,
        "demo-warehouse",
        lambda f: build_warehouse(demo_bundle.out_dir, helpers.warehouse_in(f / "demo")),
    )


@pytest.fixture(scope="session")
def routing_world(tmp_path_factory) -> tuple[Path, Path]:
    """(bundle, warehouse) of the small routing world (tests/worlds/routing.py, 300 concepts,
    seed 7) with the routing and scoring marts built. Tests only read both."""
    from ingestion.bundle import load_bundle
    from tests.worlds.routing import dbt_build_routing, simulate_world

    def build(root: Path) -> tuple[Path, Path]:
        bundle = simulate_world(root / "bundle")
        warehouse = helpers.warehouse_in(root / "world")
        load_bundle(bundle, warehouse)
        dbt_build_routing(warehouse)
        return bundle, warehouse

    return build_once(tmp_path_factory, "routing", build)


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
    `qct2i import` then `qct2i build`: a published warehouse, built once per run."""
    from tests.worlds.hand import write_hand_bundle

    def build(root: Path) -> Path:
        return publish_bundle(write_hand_bundle(root / "bundle"), root / "w.duckdb")

    return _template(build_once(tmp_path_factory, "hand", build), _unchanged_templates)


# A small world in which every structure mart has rows: `qct2i demo --concepts 24 --seed 3`
SMALL_DEMO = ["--concepts", "24", "--seed", "3"]


@pytest.fixture(scope="session")
def small_demo(tmp_path_factory, _unchanged_templates) -> tuple[Path, str]:
    """(published warehouse, stdout) of `qct2i demo` on the small world, through the console
    script, once per run: the report tests read its report, `qct2i evaluate` copies it."""

    def build(root: Path) -> tuple[Path, str]:
        warehouse = root / "qct2i.duckdb"
        result = helpers.run_cli(["demo", *SMALL_DEMO], warehouse)
        assert result.returncode == 0, result.stderr[-3000:]
        return warehouse, result.stdout

    warehouse, stdout = build_once(tmp_path_factory, "small-demo", build)
    return _template(warehouse, _unchanged_templates), stdout


@pytest.fixture(scope="session")
def hand_published_without_transcriptions(tmp_path_factory, _unchanged_templates) -> Path:
    """The same without transcriptions (Text Content scored from the judgments), published."""
    from tests.worlds.hand import write_hand_bundle

    def build(root: Path) -> Path:
        bundle = write_hand_bundle(root / "bundle", with_transcriptions=False)
        return publish_bundle(bundle, root / "w.duckdb")

    return _template(build_once(tmp_path_factory, "hand-no-ocr", build), _unchanged_templates)
