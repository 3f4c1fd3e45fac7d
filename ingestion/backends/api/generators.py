"""Generator settings from seeds/generators.csv and the warehouse's own generators, and the fixed
seed of each (concept, generator).

The registry is the seed plus the rows `qct2i evaluate` registers for a user's generator (its
pipeline class and weights, or a folder of images drawn elsewhere), kept beside the warehouse in
`generators.local.csv` (QCT2I_LOCAL_GENERATORS names another file) with the seed's columns: the
Dagster partitions and the resources read both, so the user's generator is a partition like any
other. A local row never shadows a seed row (that is an error naming both files)."""

from __future__ import annotations

import csv
import hashlib
import json
import os
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ingestion.paths import SEEDS_DIR, warehouse_path

GENERATORS_SEED = SEEDS_DIR / "generators.csv"
LOCAL_GENERATORS_ENV = "QCT2I_LOCAL_GENERATORS"
SEED = "seed"
LOCAL = "local"


def local_generators_path() -> Path:
    """The warehouse's own registry rows (QCT2I_LOCAL_GENERATORS, default beside the warehouse)."""
    configured = os.environ.get(LOCAL_GENERATORS_ENV)
    return Path(configured) if configured else warehouse_path().parent / "generators.local.csv"


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
    # components loaded apart and handed to from_pretrained: argument -> {class, source, kwargs},
    # or None: an optional component of the pipeline class left out (neither downloaded nor loaded)
    extra_components: dict[str, dict[str, Any] | None] = field(default_factory=dict)
    min_gpu_gb: float | None = None  # bf16 weight size (estimate); below it `offload` decides
    offload: str = "none"  # "auto": model CPU offload on a GPU smaller than min_gpu_gb
    max_batch_size: int | None = None  # a cap where a stage is seeded from the whole batch
    display_name: str = ""
    # `seed` (seeds/generators.csv) or `local` (a user's generator: its weights are loaded as
    # registered, never swapped for the cpu profile's tiny pipeline)
    origin: str = SEED

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


def _components(text: str | None, where: str) -> dict[str, dict[str, Any] | None]:
    components = _json_object(text, "extra_components", where)
    for argument, entry in components.items():
        if entry is not None and not (
            isinstance(entry, dict) and {"class", "source"} <= set(entry)
        ):
            raise RegistryError(
                f"{where}: column extra_components: {argument!r} must be an object with a "
                f'"class" and a "source", or null (left out), not {json.dumps(entry)}'
            )
    return components


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
            extra_components=_components(row.get("extra_components"), where),
            min_gpu_gb=_optional(row.get("min_gpu_gb"), float),
            offload=row.get("offload") or "none",
            max_batch_size=_optional(row.get("max_batch_size"), int),
            display_name=row.get("display_name") or "",
        )
    except (KeyError, TypeError, ValueError) as error:
        if isinstance(error, RegistryError):
            raise
        raise RegistryError(f"{where}: {type(error).__name__}: {error}") from None


def read_registry(path: Path, origin: str = SEED) -> dict[str, GeneratorSpec]:
    """The specs of one registry file, by model id."""
    with Path(path).open(newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        specs = {}
        for row in reader:
            spec = spec_of_row(row, f"{path}, line {reader.line_num}")
            specs[spec.model_id] = replace(spec, origin=origin)
        return specs


def load_generator_specs(
    path: Path = GENERATORS_SEED, local: Path | None = None
) -> dict[str, GeneratorSpec]:
    """The seed's specs, then the warehouse's own (`local`, default `local_generators_path()`;
    absent until `qct2i evaluate` registers one)."""
    specs = read_registry(path)
    local = local_generators_path() if local is None else local
    if not local.exists():
        return specs
    for model_id, spec in read_registry(local, LOCAL).items():
        if model_id in specs:
            raise RegistryError(
                f"{local}: generator {model_id!r} is also a row of {path}; a warehouse's own "
                "generator needs an id of its own"
            )
        specs[model_id] = spec
    return specs


def generator_model_ids(path: Path = GENERATORS_SEED) -> list[str]:
    return list(load_generator_specs(path))


def image_seed(concept_id: str, model_id: str) -> int:
    """The seed of every image of `concept_id` by `model_id`: the first 31 bits of
    SHA-256("concept_id|model_id"). Both languages of a concept share it; reruns reproduce it."""
    digest = hashlib.sha256(f"{concept_id}|{model_id}".encode()).digest()
    return int.from_bytes(digest[:4], "big") & 0x7FFFFFFF


def registry_columns(path: Path = GENERATORS_SEED) -> list[str]:
    with Path(path).open(newline="", encoding="utf-8") as f:
        return next(csv.reader(f))


def register_local_generator(row: dict[str, str], path: Path | None = None) -> bool:
    """Put `row` (the seed's columns) in the warehouse's own registry in place of the model's
    earlier row; False when that row is already there as it is. Written whole and renamed, so a
    reader sees the old file or the new one. The row is read back as a spec first: a row that
    cannot load is refused before anything is written."""
    path = local_generators_path() if path is None else path
    columns = registry_columns()
    spec_of_row({c: row.get(c, "") for c in columns}, f"{path}, the row of {row['model_id']}")
    existing = []
    if path.exists():
        with path.open(newline="", encoding="utf-8") as f:
            existing = list(csv.DictReader(f))
    line = {c: str(row.get(c) if row.get(c) is not None else "") for c in columns}
    if line in existing:
        return False
    kept = [r for r in existing if r["model_id"] != row["model_id"]]
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.partial")
    with partial.open("w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=columns)
        writer.writeheader()
        writer.writerows([*kept, line])
    os.replace(partial, path)
    return True
