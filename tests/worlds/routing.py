"""A small simulated world for the routing tests and the dbt build restricted to routing."""

from __future__ import annotations

from pathlib import Path

from ingestion.sources.simulator import LANGUAGES, SimulationConfig, load_taxonomy, simulate
from tests.helpers import dbt_build

# The best fixed generator is flux2-dev (expensive, best at semantics); ernie-image is best at
# relations; z-image-turbo (cheap) equals them on entities and attributes and is clearly worse
# on text, relations and semantics.
MODELS = ("ernie-image", "flux2-dev", "z-image-turbo")
GROUP_RATES = {
    "ernie-image": {"relations": 0.90, "semantics": 0.80},
    "flux2-dev": {"relations": 0.80, "semantics": 0.95},
    "z-image-turbo": {"text": 0.40, "relations": 0.40, "semantics": 0.40},
}
BASE_RATES = {"entities": 0.85, "attributes": 0.85, "text": 0.80}


def world_rates() -> dict[tuple[str, str, str], float]:
    taxonomy = load_taxonomy()
    rates = {}
    for model in MODELS:
        for language in LANGUAGES:
            for capability in taxonomy.capabilities:
                group = taxonomy.group_of[capability]
                rate = GROUP_RATES[model].get(group, BASE_RATES.get(group))
                rates[model, language, capability] = rate
    return rates


def simulate_world(out: Path, concepts: int = 300, seed: int = 7) -> Path:
    config = SimulationConfig(
        concepts=concepts, seed=seed, models=list(MODELS), rates=world_rates()
    )
    simulate(out, config)
    return out


def dbt_build_routing(warehouse: Path) -> None:
    """`dbt build` of the routing marts and everything upstream (not the whole project)."""
    dbt_build(warehouse, ("+path:models/marts/routing", "+path:models/marts/scoring"))
