"""A generator's cost as the paper defines it (Table 4, "Scalable Cost-Aware Routing"): latency
times occupied GPUs per output megapixel (GPU-s/MP), measured on one image at a time.

`calibrate_cost` draws one untimed warm-up image (kernel compilation, allocator growth and lazy
loading land there, not in the figure), then `n_images` timed batch-1 draws; the figure is the
sum of their device-seconds over the sum of the megapixels actually drawn (the images' own size:
a pipeline may round or rescale the requested one). `record_generator` writes it to the
bundle's generators file as that generator's row with `cost_source = measured`, which
int_generators ranks above every other figure, and the router reads it there.
"""

from __future__ import annotations

import fcntl
import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ingestion.backends.api.generators import GeneratorSpec
from ingestion.backends.api.interfaces import GenerationRequest, ImageGenerator

DEFAULT_CALIBRATION_IMAGES = 3


@dataclass(frozen=True)
class CostCalibration:
    model_id: str
    gpu_s_per_mp: float  # sum(latency x max(gpus, 1)) / sum(output megapixels), warm-up excluded
    n_images: int
    latency_s: float  # mean timed batch-1 latency
    gpus: int
    width: int  # the drawn images' size (the last timed image's)
    height: int
    warmup_latency_s: float  # measured and reported, never part of the figure
    revision: str
    device: str


def calibrate_cost(
    generator: ImageGenerator,
    requests: Sequence[GenerationRequest],
    n_images: int = DEFAULT_CALIBRATION_IMAGES,
) -> CostCalibration:
    """One untimed warm-up draw of requests[0], then `n_images` timed draws one at a time, of
    the requests after it (wrapping round when there are fewer)."""
    if n_images < 1 or not requests:
        raise ValueError("a calibration needs at least one request and n_images >= 1")
    warmup = generator.generate([requests[0]])
    timed_requests = [requests[(1 + i) % len(requests)] for i in range(n_images)]
    device_s = megapixels = latency = 0.0
    for r in timed_requests:
        batch = generator.generate([r])
        (image,) = batch.images
        width, height = image.size
        device_s += batch.gpu_seconds
        megapixels += width * height / 1e6
        latency += batch.latency_s
    return CostCalibration(
        model_id=requests[0].model_id,
        gpu_s_per_mp=device_s / megapixels,
        n_images=len(timed_requests),
        latency_s=latency / len(timed_requests),
        gpus=batch.gpus,
        width=width,
        height=height,
        warmup_latency_s=warmup.latency_s,
        revision=batch.revision,
        device=batch.device,
    )


def generator_row(spec: GeneratorSpec, revision: str, calibration: CostCalibration | None) -> dict:
    """The bundle `generators` row (CONTRACTS "Additions"); with a calibration, its measured
    cost (`cost_source = measured`) and the calibration's numbers as provenance columns that
    the import ignores; without one, no cost (the bundle then says nothing about it)."""
    row = {
        "model_id": spec.model_id,
        "display_name": spec.display_name or spec.model_id,
        "cost_gpu_s_per_mp": None,
        "hub_id": spec.source,
        "revision": revision,
        "pipeline_class": spec.pipeline_class or None,
        "cost_source": None,
    }
    if calibration is None:
        return row
    return row | {
        "cost_gpu_s_per_mp": calibration.gpu_s_per_mp,
        "cost_source": "measured",
        "calibration_images": calibration.n_images,
        "calibration_latency_s": calibration.latency_s,
        "calibration_warmup_latency_s": calibration.warmup_latency_s,
        "calibration_width": calibration.width,
        "calibration_height": calibration.height,
        "calibration_gpus": calibration.gpus,
        "calibration_device": calibration.device,
    }


def upsert_generator_row(bundle: Path, row: dict) -> None:
    """Put `row` in <bundle>/generators.jsonl in place of the model's earlier row, under an
    exclusive lock (generator partitions may finish at once) and with an atomic replace, so a
    reader sees the old file or the new one, never a mix."""
    path = Path(bundle) / "generators.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    with (path.parent / ".generators.lock").open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        rows = []
        if path.exists():
            rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
        rows = [r for r in rows if r.get("model_id") != row["model_id"]] + [row]
        tmp = path.with_suffix(".jsonl.tmp")
        tmp.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), "utf-8")
        with tmp.open("rb") as handle:
            os.fsync(handle.fileno())
        tmp.replace(path)


def record_generator(
    bundle: Path, spec: GeneratorSpec, revision: str, calibration: CostCalibration | None
) -> dict:
    """Write the generator's row to the bundle (replacing an earlier one) and return it."""
    row = generator_row(spec, revision, calibration)
    upsert_generator_row(bundle, row)
    return row
