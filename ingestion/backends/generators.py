"""Generator settings from seeds/generators.csv, and the fixed seed of each (concept, generator)."""

from __future__ import annotations

import csv
import hashlib
from dataclasses import dataclass, replace
from pathlib import Path

from ingestion.paths import SEEDS_DIR

GENERATORS_SEED = SEEDS_DIR / "generators.csv"


@dataclass(frozen=True)
class GeneratorSpec:
    model_id: str
    source: str  # hub repo id, or a local folder that overrides it
    pipeline_class: str
    steps: int
    guidance: float
    width: int
    height: int
    gpus: int
    dtype: str = "bfloat16"
    revision: str | None = None  # hub revision to pin; None: the folder's own / main

    def with_overrides(self, **changes) -> GeneratorSpec:
        return replace(self, **{k: v for k, v in changes.items() if v is not None})


def load_generator_specs(path: Path = GENERATORS_SEED) -> dict[str, GeneratorSpec]:
    with Path(path).open(newline="", encoding="utf-8") as f:
        return {
            row["model_id"]: GeneratorSpec(
                model_id=row["model_id"],
                source=row["hub_repo_id"],
                pipeline_class=row["pipeline_class"],
                steps=int(row["default_steps"]),
                guidance=float(row["default_guidance"]),
                width=int(row["width"]),
                height=int(row["height"]),
                gpus=int(row["gpus"]),
                dtype=row.get("dtype") or "bfloat16",
            )
            for row in csv.DictReader(f)
        }


def generator_model_ids(path: Path = GENERATORS_SEED) -> list[str]:
    return list(load_generator_specs(path))


def image_seed(concept_id: str, model_id: str) -> int:
    """The seed of every image of `concept_id` by `model_id`: the first 31 bits of
    SHA-256("concept_id|model_id"). Both languages of a concept share it; reruns reproduce it."""
    digest = hashlib.sha256(f"{concept_id}|{model_id}".encode()).digest()
    return int.from_bytes(digest[:4], "big") & 0x7FFFFFFF
