"""pytest setup shared by every test: offline hub, no dbt telemetry, and the worlds that several
test files read, built once per session (each with the parameters its files used before)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.helpers import require_test_data

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("DBT_SEND_ANONYMOUS_USAGE_STATS", "False")


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
    dbt_build_routing(warehouse)
    return bundle, warehouse
