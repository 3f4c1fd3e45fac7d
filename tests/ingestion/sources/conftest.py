"""The structure world of the simulator tests: more concepts than `small`, two generators,
simulated once per test module that asks for it."""

from __future__ import annotations

import pytest

from ingestion.sources.simulator import SimulationConfig, SimulationSummary, simulate
from tests.ingestion.sources.simulated import STRUCTURE_MODELS, read_table


@pytest.fixture(scope="module")
def world(tmp_path_factory) -> SimulationSummary:
    """More concepts, two generators: enough prompts for structure and rate facts."""
    config = SimulationConfig(concepts=400, models=STRUCTURE_MODELS)
    return simulate(tmp_path_factory.mktemp("world"), config)


@pytest.fixture(scope="module")
def world_tables(world) -> dict[str, list[dict]]:
    return {name: read_table(world.out_dir, name) for name in world.paths}
