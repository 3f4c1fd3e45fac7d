"""Generator settings from seeds/generators.csv, and the fixed seed of each (concept, generator)."""

from __future__ import annotations

import csv
import hashlib
import json
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ingestion.paths import SEEDS_DIR

GENERATORS_SEED = SEEDS_DIR / "generators.csv"


class RegistryError(ValueError):
    """A generators.csv row that cannot be read: the message names the file, line and reason."""


@dataclass(frozen=True)
class GeneratorSpec:
    """How one generator is loaded and called (seeds/_seeds.yml documents each column)."""

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
    backend: str = (
        "diffusers"  # the ImageGenerator that runs it (ingestion/backends/api/registry.py)
    )
    guidance_arg: str = "guidance_scale"  # the pipeline argument that receives `guidance`
    call_kwargs: dict[str, Any] = field(default_factory=dict)  # further arguments of every call
    # components loaded apart and handed to from_pretrained: argument -> {class, source, kwargs}
    extra_components: dict[str, dict[str, Any]] = field(default_factory=dict)
    min_gpu_gb: float | None = None  # bf16 weight size (estimate); below it `offload` decides
    offload: str = "none"  # "auto": model CPU offload on a GPU smaller than min_gpu_gb
    max_batch_size: int | None = None  # a cap where a stage is seeded from the whole batch
    display_name: str = ""

    def with_overrides(self, **changes) -> GeneratorSpec:
        return replace(self, **{k: v for k, v in changes.items() if v is not None})


def _json_object(text: str | None, column: str, where: str) -> dict:
    if not text:
        return {}
    try:
        value = json.loads(text)
    except json.JSONDecodeError as error:
        raise RegistryError(f"{where}: column {column} is not JSON ({error.msg})") from None
    if not isinstance(value, dict):
        raise RegistryError(f"{where}: column {column} must be a JSON object, not {text!r}")
    return value


def _optional(text: str | None, kind: type):
    return kind(text) if text not in (None, "") else None


def spec_of_row(row: dict[str, str], where: str) -> GeneratorSpec:
    """The GeneratorSpec of one registry row; `where` ("file, line N") prefixes every error."""
    try:
        return GeneratorSpec(
            model_id=row["model_id"],
            source=row["hub_repo_id"],
            pipeline_class=row["pipeline_class"] or "",
            steps=int(row["default_steps"]),
            guidance=float(row["default_guidance"]),
            width=int(row["width"]),
            height=int(row["height"]),
            gpus=int(row["gpus"]),
            dtype=row.get("dtype") or "bfloat16",
            revision=row.get("revision") or None,
            backend=row.get("backend") or "diffusers",
            guidance_arg=row.get("guidance_arg") or "guidance_scale",
            call_kwargs=_json_object(row.get("call_kwargs"), "call_kwargs", where),
            extra_components=_json_object(row.get("extra_components"), "extra_components", where),
            min_gpu_gb=_optional(row.get("min_gpu_gb"), float),
            offload=row.get("offload") or "none",
            max_batch_size=_optional(row.get("max_batch_size"), int),
            display_name=row.get("display_name") or "",
        )
    except (KeyError, TypeError, ValueError) as error:
        if isinstance(error, RegistryError):
            raise
        raise RegistryError(f"{where}: {type(error).__name__}: {error}") from None


def load_generator_specs(path: Path = GENERATORS_SEED) -> dict[str, GeneratorSpec]:
    with Path(path).open(newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        specs = {}
        for row in reader:
            spec = spec_of_row(row, f"{path}, line {reader.line_num}")
            specs[spec.model_id] = spec
        return specs


def generator_model_ids(path: Path = GENERATORS_SEED) -> list[str]:
    return list(load_generator_specs(path))


def image_seed(concept_id: str, model_id: str) -> int:
    """The seed of every image of `concept_id` by `model_id`: the first 31 bits of
    SHA-256("concept_id|model_id"). Both languages of a concept share it; reruns reproduce it."""
    digest = hashlib.sha256(f"{concept_id}|{model_id}".encode()).digest()
    return int.from_bytes(digest[:4], "big") & 0x7FFFFFFF
