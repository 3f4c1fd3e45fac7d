"""The diffusers image generator: any pipeline class, loaded with `from_pretrained`."""

from __future__ import annotations

import time
from collections.abc import Sequence

import torch

from ingestion.backends.base import GeneratedBatch, GenerationRequest, ImageGenerator
from ingestion.backends.cache import resolve_revision
from ingestion.backends.generators import GeneratorSpec

DTYPES = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}


def pick_device(device: str = "auto") -> torch.device:
    if device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(device)


def synchronize(device: torch.device) -> None:
    """Wait for queued kernels, so a wall-clock interval covers the work (no-op on CPU)."""
    if device.type == "cuda":
        torch.cuda.synchronize(device)


class DiffusersGenerator(ImageGenerator):
    def __init__(self, spec: GeneratorSpec, device: str = "auto"):
        import diffusers

        self.spec = spec
        self.model_id = spec.model_id
        self.device = pick_device(device)
        dtype = DTYPES[spec.dtype] if self.device.type == "cuda" else torch.float32
        pipeline_class = getattr(diffusers, spec.pipeline_class, diffusers.DiffusionPipeline)
        kwargs = {"dtype": dtype}
        if spec.revision:
            kwargs["revision"] = spec.revision
        self.pipeline = pipeline_class.from_pretrained(spec.source, **kwargs).to(self.device)
        self.pipeline.set_progress_bar_config(disable=True)
        commit = getattr(self.pipeline.config, "_commit_hash", None)
        self.revision = resolve_revision(spec.source, spec.revision, commit)
        self.gpus = spec.gpus if self.device.type == "cuda" else 0

    def generate(self, requests: Sequence[GenerationRequest]) -> GeneratedBatch:
        requests = tuple(requests)
        first = requests[0]
        if any(
            (r.steps, r.guidance, r.width, r.height)
            != (first.steps, first.guidance, first.width, first.height)
            for r in requests
        ):
            raise ValueError("a batch must share steps, guidance and resolution")
        generators = [torch.Generator(device="cpu").manual_seed(r.seed) for r in requests]
        synchronize(self.device)
        start = time.perf_counter()
        with torch.inference_mode():
            output = self.pipeline(
                prompt=[r.text for r in requests],
                num_inference_steps=first.steps,
                guidance_scale=first.guidance,
                width=first.width,
                height=first.height,
                generator=generators,
            )
        synchronize(self.device)
        latency = time.perf_counter() - start
        return GeneratedBatch(
            requests=requests,
            images=tuple(output.images),
            latency_s=latency,
            gpus=self.gpus,
            device=self.device.type,
            revision=self.revision,
        )
