"""The diffusers image generator: the registry's pipeline class, loaded with `from_pretrained` and
called with the registry's settings (seeds/_seeds.yml, issue 10).

Faithfulness rules: an unknown pipeline class is an error (never a `DiffusionPipeline` fallback
that would pick whatever class a folder names); components a hub repo leaves out (HiDream-I1's
Llama tokenizer and text encoder) are loaded apart from the registry's `extra_components`, and an
entry `null` there leaves one of the class's optional components out (ERNIE-Image's prompt
enhancer `pe`, never called with `use_pe` off: neither downloaded nor loaded, issue 23); every
call passes the row's `call_kwargs` (prompt enhancement off) and puts the guidance into the row's
`guidance_arg` (Qwen-Image: `true_cfg_scale`); each image has its own torch.Generator, and a
row's `max_batch_size` splits batches where a pipeline stage is seeded from the whole batch.
"""

from __future__ import annotations

import importlib
import time
from collections.abc import Sequence
from typing import Any

import torch

from ingestion.backends.api.cache import resolve_revision
from ingestion.backends.api.generators import GeneratorSpec, RegistryError
from ingestion.backends.api.interfaces import GeneratedBatch, GenerationRequest, ImageGenerator
from ingestion.backends.models.devices import pick_device, synchronize

DTYPES = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}


class UnknownPipelineError(ValueError):
    """The registry names a pipeline class the installed diffusers does not have."""


def pipeline_class_of(spec: GeneratorSpec) -> type:
    """The diffusers class the registry names for `spec`, or an error naming the class and the
    installed diffusers version."""
    import diffusers

    cls = getattr(diffusers, spec.pipeline_class, None) if spec.pipeline_class else None
    if not (isinstance(cls, type) and issubclass(cls, diffusers.DiffusionPipeline)):
        raise UnknownPipelineError(
            f"generator {spec.model_id}: pipeline class {spec.pipeline_class!r} is not a "
            f"pipeline of the installed diffusers {diffusers.__version__}; install a diffusers "
            "that has it or correct seeds/generators.csv"
        )
    return cls


def load_dtype(spec: GeneratorSpec, device: torch.device) -> torch.dtype:
    """The registry's dtype on a GPU; float32 on CPU (bf16 matmuls there are slow or missing)."""
    return DTYPES[spec.dtype] if device.type == "cuda" else torch.float32


def _component_class(name: str) -> type:
    for module in ("transformers", "diffusers"):
        cls = getattr(importlib.import_module(module), name, None)
        if cls is not None:
            return cls
    raise UnknownPipelineError(f"component class {name!r} is in neither transformers nor diffusers")


def left_out_components(spec: GeneratorSpec, cls: type) -> list[str]:
    """The row's `extra_components` set to null: optional components of `cls` it goes without.
    A null on a component the class needs is the registry's error, named before any loading."""
    left_out = [name for name, entry in spec.extra_components.items() if entry is None]
    optional = set(getattr(cls, "_optional_components", None) or ())
    needed = [name for name in left_out if name not in optional]
    if needed:
        raise RegistryError(
            f"generator {spec.model_id}: extra_components sets {needed} to null, but "
            f"{cls.__name__} cannot go without them (its optional components: "
            f"{sorted(optional) or 'none'}); correct seeds/generators.csv"
        )
    return left_out


def load_extra_components(
    spec: GeneratorSpec, dtype: torch.dtype, device_map: str | None = None
) -> dict[str, Any]:
    """Components the pipeline's folder does not hold, each loaded from its own source (a
    tokenizer or processor takes neither a dtype nor a device); a null entry is passed as None,
    which diffusers reads as "leave this optional component out": it neither downloads nor
    loads its folder."""
    components: dict[str, Any] = {}
    for argument, entry in spec.extra_components.items():
        if entry is None:
            components[argument] = None
            continue
        cls = _component_class(entry["class"])
        kwargs = dict(entry.get("kwargs") or {})
        if not any(word in entry["class"] for word in ("Tokenizer", "Processor")):
            kwargs["dtype"] = dtype
            if device_map:
                kwargs["device_map"] = device_map
        components[argument] = cls.from_pretrained(entry["source"], **kwargs)
    return components


# Room a draw takes beyond the weights: the denoiser's activations (attention through PyTorch's
# SDPA, which never holds the full attention matrix) and the VAE's decode, whose full-resolution
# feature maps are a draw's largest allocations and grow with the batch's pixels: 2 GB plus a
# figure per megapixel of the batch. Calibrated on an H200 (`make gpu-bench`, 2026-12-04;
# bench/RESULTS.md, runs 1-4). At batch 1 the 1024^2 rows peaked 2.6-3.0 GB above their weights,
# Qwen-Image 7.56 GB at 1328^2 (1.76 MP). At batch 4 the 1024^2 rows measured took 8.7-9.3 GB
# (about 2 GB an image more: 1.75 GB per megapixel of the batch covers them) and Qwen-Image
# 29.95 GB (7.5 GB an image more, 4.2 GB per megapixel: the rule before, 3.5, allowed 26.69).
# So the figure is per pipeline class where a row of the class was measured at batch 4, 2.5 GB
# (3.1 GB to spare at batch 4, 1.6 at batch 1), and 4.25 elsewhere, which covers every draw
# measured, Qwen-Image's batch of four with 2.0 GB to spare: a class never measured at a batch
# is given the dearest growth seen rather than the cheapest.
ACTIVATION_BASE_GB = 2.0
DECODE_GB_PER_MEGAPIXEL = 4.25
DECODE_GB_PER_MEGAPIXEL_MEASURED = {  # the row of the class measured at batch 4
    "FluxPipeline": 2.5,  # flux1-dev: 8.66 GB above its weights
    "Flux2KleinPipeline": 2.5,  # flux2-klein-4b: 8.73 GB
    "ZImagePipeline": 2.5,  # z-image-turbo: 8.81 GB
    "HiDreamImagePipeline": 2.5,  # hidream-i1: 9.35 GB
}


def activation_margin_gb(
    width: int, height: int, batch_size: int = 1, pipeline_class: str = ""
) -> float:
    """GB a draw of `batch_size` images at width x height needs beyond the weights."""
    per_megapixel = DECODE_GB_PER_MEGAPIXEL_MEASURED.get(pipeline_class, DECODE_GB_PER_MEGAPIXEL)
    return ACTIVATION_BASE_GB + per_megapixel * batch_size * width * height / 1e6


def may_offload(spec: GeneratorSpec) -> bool:
    """The row allows offload and knows its weight size."""
    return spec.offload == "auto" and bool(spec.min_gpu_gb)


def offload_needed(spec: GeneratorSpec, free_gb: float, batch_size: int = 1) -> bool:
    """Model CPU offload when the row may offload and the GPU's free memory holds less than the
    weights (`min_gpu_gb`) plus the margin of a batch at the row's resolution. Free memory, not
    the card's total: another process's allocations (a judge on the same GPU) count."""
    if not may_offload(spec):
        return False
    margin = activation_margin_gb(spec.width, spec.height, batch_size, spec.pipeline_class)
    return free_gb < spec.min_gpu_gb + margin


def drawn_batch(spec: GeneratorSpec, batch_size: int) -> int:
    """Images a pipeline call draws when `batch_size` are asked for: the row's `max_batch_size`
    splits larger batches (`DiffusersGenerator.generate`)."""
    return min(batch_size, spec.max_batch_size) if spec.max_batch_size else batch_size


def needs_offload(spec: GeneratorSpec, device: torch.device, batch_size: int = 1) -> bool:
    """`offload_needed` on `device`'s free memory now, for the batch the generator will draw
    (`batch_size` asked, as `drawn_batch` splits it). No CUDA query for a row that never
    offloads."""
    if device.type != "cuda" or not may_offload(spec):
        return False
    free_bytes, _total = torch.cuda.mem_get_info(device)
    # GB of 10^9 bytes, the unit of min_gpu_gb (two bytes a parameter) and of the margin
    return offload_needed(spec, free_bytes / 1e9, drawn_batch(spec, batch_size))


def from_pretrained_kwargs(
    spec: GeneratorSpec, cls: type, dtype: torch.dtype, device_map: str | None = None
) -> dict[str, Any]:
    """The keyword arguments `load_pipeline` hands to `cls.from_pretrained`: the dtype, the
    device the weights load onto (`device_map`, when given), the row's extra components (None
    for each one it leaves out) and its pinned revision."""
    left_out_components(spec, cls)
    kwargs: dict[str, Any] = {"dtype": dtype, **load_extra_components(spec, dtype, device_map)}
    if device_map:
        kwargs["device_map"] = device_map
    if spec.revision:
        kwargs["revision"] = spec.revision
    return kwargs


def load_device_map(device: torch.device, offload: bool) -> str | None:
    """Where `from_pretrained` puts the weights as it reads them: straight onto the device
    (`device_map`), because loading first and then `.to(device)` holds the whole model in host
    memory (about 105 GiB for FLUX.2-dev). None where the pipeline offloads (diffusers then
    places each component itself) or for a CUDA device other than the current one, which
    diffusers' `device_map` cannot name; those load on the host and move."""
    if offload or device.index not in (None, 0):
        return None
    return device.type  # "cuda" or "cpu", both strategies of DiffusionPipeline.from_pretrained


def load_pipeline(spec: GeneratorSpec, device: torch.device, offload: bool = False):
    """The pipeline of `spec` on `device` (diffusers >= 0.40 honours `dtype=`; 0.42.1 checked),
    with model CPU offload when `offload`."""
    cls = pipeline_class_of(spec)
    dtype = load_dtype(spec, device)
    device_map = load_device_map(device, offload)
    kwargs = from_pretrained_kwargs(spec, cls, dtype, device_map)
    pipeline = cls.from_pretrained(spec.source, **kwargs)
    if offload:
        pipeline.enable_model_cpu_offload(device=device)
    elif device_map is None:
        pipeline = pipeline.to(device)
    pipeline.set_progress_bar_config(disable=True)
    return pipeline


def call_arguments(spec: GeneratorSpec, requests: Sequence[GenerationRequest]) -> dict[str, Any]:
    """The keyword arguments of one pipeline call for `requests` (one torch.Generator each, so
    an image depends on its own seed only)."""
    first = requests[0]
    return {
        **spec.call_kwargs,
        "prompt": [r.text for r in requests],
        "num_inference_steps": first.steps,
        spec.guidance_arg: first.guidance,
        "width": first.width,
        "height": first.height,
        "generator": [torch.Generator(device="cpu").manual_seed(r.seed) for r in requests],
    }


class DiffusersGenerator(ImageGenerator):
    backend = "diffusers"

    def __init__(self, spec: GeneratorSpec, device: str = "auto", batch_size: int = 1):
        """`batch_size`: the images the caller will ask for at a time, which decides whether the
        pipeline must offload to draw them."""
        self.spec = spec
        self.model_id = spec.model_id
        self.device = pick_device(device)
        self.dtype = load_dtype(spec, self.device)
        self.batch_size = batch_size
        # decided once, on the free memory before the weights arrive
        self.offloaded = needs_offload(spec, self.device, batch_size)
        self.pipeline = load_pipeline(spec, self.device, self.offloaded)
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
        size = self.spec.max_batch_size or len(requests)
        images: list = []
        latency = 0.0
        for start in range(0, len(requests), size):
            chunk = requests[start : start + size]
            arguments = call_arguments(self.spec, chunk)
            synchronize(self.device)
            began = time.perf_counter()
            with torch.inference_mode():
                output = self.pipeline(**arguments)
            synchronize(self.device)
            latency += time.perf_counter() - began
            images.extend(output.images)
        return GeneratedBatch(
            requests=requests,
            images=tuple(images),
            latency_s=latency,
            gpus=self.gpus,
            device=self.device.type,
            revision=self.revision,
        )
