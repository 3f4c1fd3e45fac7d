"""`make gpu-smoke`: the one prepared script for the day a GPU machine is lent (issues 10 and 11).

One run, one JSON of results (`--out`, default bench/gpu_smoke.json; written again after every
step, so a run cut short keeps what it measured). Steps, in order, each in a child process
killed with all it started at its own time cap, the caps adding up to one budget (8 minutes on
one H200 with the weights pre-fetched): a step that fails records its error and the next one
runs; a step whose code or engine is not there records `skipped` with the reason; a step with no
budget left is `skipped` too. Each step's process ends with it, so the next loads its models on
an empty device; the vLLM step compares its answers with those the transformers step left in a
file.

1. environment: torch / CUDA / GPU, library versions, the HF cache for every checkpoint used.
2. generator:<id> (two registry rows, 1024^2): an untimed warm-up and four timed batch-1 draws
   through `calibration.calibrate_cost` (the paper's GPU-s/MP), then the same four seeds as one
   batch of 4: pixel hashes per seed (an image depends on its seed only), dtype, latency, peak
   memory.
3. dagster_crash_resume: `generated_images` materialised in a child process that is SIGKILLed
   mid-run (after its first batch is stored), then materialised again: images lost / duplicated.
4. judge_transformers, judge_vllm: 20 scenes with known content x 14 questions; vLLM as one
   generate() call for all images vs one call per image (questions/s, prefix-cache hits),
   P(yes) within [0, 1], agreement with the transformers judge (issue 11).
5. ocr: 5 images with known text through `transcription_runs.run_transcription` (parse rate,
   truncation).  6. question_construction: 5 prompts through `run_question_construction`.

`--dry-run` is the same script on CPU with tiny random-weight models built in code (the registry
rows' real pipeline classes from tiny_pipelines.py, the tiny Qwen3-VL and text LM of tiny.py) at
tiny sizes; tests/bench/test_gpu_smoke.py runs it under `make test`.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib
import importlib.metadata
import importlib.util
import json
import multiprocessing
import os
import random
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

from ingestion.paths import PROJECT_ROOT

DEFAULT_OUT = PROJECT_ROOT / "bench" / "gpu_smoke.json"
DRY_RUN_OUT = PROJECT_ROOT / "bench" / "work" / "gpu_smoke_dry" / "gpu_smoke.json"
# The two fastest registry rows that fit one GPU without offload (4 and 9 steps).
SMOKE_GENERATORS = ("flux2-klein-4b", "z-image-turbo")
# One H200 cannot hold the paper's writer (Qwen3-235B-A22B, ~470 GB in bf16): the smoke checks
# the same vLLM writer path on a one-GPU Qwen3 with the same chat template and thinking switch.
SMOKE_WRITER = "Qwen/Qwen3-8B"
# Each step runs in a child process killed at its cap (a C-level load or vLLM's start-up cannot
# be interrupted from inside), and the caps of the default plan add up to the budget: under 8
# minutes on one H200 with the weights in its HF cache. Estimates (no GPU run has measured them):
# a 4-9 step generator's load and 9 draws, the 30B judge's load from local disk, vLLM's start-up
# with its compile and CUDA graphs.
STEP_CAPS_S = {
    "environment": 15,
    "generator": 60,
    "dagster_crash_resume": 70,
    "judge_transformers": 70,
    "judge_vllm": 110,
    "ocr": 45,
    "question_construction": 40,
}
GPU_BUDGET_S = 470  # 15 + 2 x 60 + 70 + 70 + 110 + 45 + 40; then the JSON is written and it exits
# What the step children import, imported once by the forkserver they are forked from (about 2 s
# a step otherwise; none of it makes a CUDA context at import). A module that does not import
# here (vLLM's backend where vLLM is missing) is left out, and its step says why.
PRELOADED = [
    "torch",
    "transformers",
    "diffusers",
    "bench.gpu_smoke",
    "dagster_defs.ml_resources",
    "dagster_defs.assets.generation",
    "ingestion.backends.drivers.calibration",
    "ingestion.backends.drivers.runs",
    "ingestion.backends.models.diffusers_generator",
    "ingestion.backends.tiny.models",
    "ingestion.backends.tiny.pipelines",
    "huggingface_hub",
    # what the libraries import lazily, on first use: the default generators' pipelines, the models
    "diffusers.pipelines.flux2.pipeline_flux2_klein",
    "diffusers.pipelines.z_image.pipeline_z_image",
    "transformers.models.qwen3_vl.modeling_qwen3_vl",
    "transformers.models.qwen3_vl.processing_qwen3_vl",
    "transformers.models.qwen3_vl.video_processing_qwen3_vl",
    "transformers.models.qwen2_vl.image_processing_qwen2_vl",
    "transformers.models.qwen3.modeling_qwen3",
    "transformers.models.qwen2.tokenization_qwen2",
]


class StepSkipped(Exception):
    """A step that cannot run here; its message is the reason recorded in the JSON."""


@dataclass
class SmokeConfig:
    dry_run: bool
    out: Path
    work: Path
    generators: tuple[str, ...] = SMOKE_GENERATORS
    judge_model: str = ""
    ocr_model: str = ""
    writer_model: str = SMOKE_WRITER
    budget_s: float = GPU_BUDGET_S
    gen_images: int = 4  # seeds drawn at batch 1 and again as one batch
    judge_images: int = 20
    ocr_images: int = 5
    writer_prompts: int = 5
    image_size: int = 1024  # judge and OCR scenes (the generators use their registry rows)
    ocr_max_new_tokens: int = 2048
    writer_max_tokens: int = 2048
    device: str = "auto"

    @property
    def tiny_dir(self) -> Path:
        return self.work / "tiny_models"

    @property
    def profile(self) -> str:
        return "cpu" if self.dry_run else "gpu"

    @property
    def transformers_judgments(self) -> Path:
        """Where the transformers judge's answers wait for the vLLM judge's step to compare."""
        return self.work / "transformers_judgments.json"


def config_for(dry_run: bool, out: Path | None, work: Path | None) -> SmokeConfig:
    from dagster_defs.ml_resources import DEFAULT_JUDGE, DEFAULT_OCR

    out = Path(out) if out else (DRY_RUN_OUT if dry_run else DEFAULT_OUT)
    work = Path(work) if work else out.parent / "gpu_smoke_work"
    config = SmokeConfig(dry_run, out, work, judge_model=DEFAULT_JUDGE, ocr_model=DEFAULT_OCR)
    if dry_run:  # tiny models, tiny sizes, CPU; every step still runs its real code path
        config.budget_s, config.image_size, config.device = 300, 64, "cpu"
        config.ocr_max_new_tokens = config.writer_max_tokens = 12
    return config


# ------------------------------------------------------------------------------ the step runner


def step_context():
    """Children forked from a server that has imported the step libraries once (PRELOADED);
    vLLM and a Dagster run start processes of their own from a step child (`own_group`)."""
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(PRELOADED)
    return context


def start_forkserver() -> float:
    """Start the step children's server and wait for its imports (seconds): they count against
    the run's budget, not against the first step's cap."""
    started = time.perf_counter()
    first = step_context().Process(target=time.sleep, args=(0,))
    first.start()
    first.join()
    return round(time.perf_counter() - started, 2)


def run_step(name: str, cap_s: float, job: tuple[str, tuple], results: dict, deadline: float):
    """Run `job` ("module:function", its arguments) in a child process under min(its cap, the
    budget left), killed with everything it started at that cap; record ok / failed /
    skipped."""
    from bench.gpu_bench_run import supervise

    left = deadline - time.monotonic()
    if left <= 1:
        results["steps"][name] = {"status": "skipped", "reason": "the run's time budget is spent"}
        return
    cap = min(cap_s, left)
    record, _ = supervise(step_context(), "bench.gpu_smoke:step_child", job, cap, own_group=True)
    record["seconds"] = record.pop("wall_s")
    if record["status"] == "timeout":
        record |= {"status": "failed", "error": f"killed at its time cap ({cap:.1f} s)"}
    elif record["status"].startswith("error: "):  # the child died without its figures
        record |= {"status": "failed", "error": record["status"].removeprefix("error: ")}
    results["steps"][name] = record


def step_child(send, entry: str, args: tuple) -> None:
    """A step child's body: the job's figures as status ok, or skipped / failed with why. One GPU
    session is precious: a failure is the step's record, and the run goes on."""
    module, function = entry.split(":")
    try:
        send({"status": "ok", **getattr(importlib.import_module(module), function)(*args)})
    except StepSkipped as skip:
        send({"status": "skipped", "reason": str(skip)})
    except Exception as error:
        send({"status": "failed", "error": f"{type(error).__name__}: {error}"[:2000]})


def smoke_step(fields: dict, name: str) -> dict:
    """Step `name` of the plan of the config with these fields (in a step child)."""
    config = SmokeConfig(**fields)
    return {step: fn for step, _, fn in steps(config)}[name]()


def require(module: str, attribute: str | None = None):
    """The module (or its attribute), or StepSkipped naming what is missing."""
    if importlib.util.find_spec(module.split(".")[0]) is None:
        raise StepSkipped(f"{module.split('.')[0]} is not installed in this environment")
    try:
        loaded = importlib.import_module(module)
    except ImportError as error:
        raise StepSkipped(f"{module} does not import here: {error}") from None
    if attribute is None:
        return loaded
    if not hasattr(loaded, attribute):
        raise StepSkipped(f"{module}.{attribute} does not exist yet")
    return getattr(loaded, attribute)


def device_memory() -> dict:
    """Peak memory torch allocated in this process, and the device's memory in use (which also
    counts vLLM's engine process); None on CPU."""
    import torch

    if not torch.cuda.is_available():
        return {"peak_allocated_gb": None, "device_used_gb": None}
    free, total = torch.cuda.mem_get_info()
    return {
        "peak_allocated_gb": round(torch.cuda.max_memory_allocated() / 2**30, 2),
        "device_used_gb": round((total - free) / 2**30, 2),
    }


def reset_peak_memory() -> None:
    import torch

    if torch.cuda.is_available():
        torch.cuda.reset_peak_memory_stats()


# ------------------------------------------------------------------------------ 1. environment


def _version(package: str) -> str | None:
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return None


def checkpoints(config: SmokeConfig) -> list[str]:
    """Hub ids the GPU run loads: the two generators (and their extra components), the judge,
    the OCR reader and the writer."""
    from ingestion.backends.api.generators import load_generator_specs

    specs = load_generator_specs()
    ids = []
    for model_id in config.generators:
        spec = specs[model_id]
        ids += [spec.source, *(e["source"] for e in spec.extra_components.values() if e)]
    return list(dict.fromkeys([*ids, config.judge_model, config.ocr_model, config.writer_model]))


def in_hf_cache(repo_id: str) -> bool:
    from huggingface_hub import snapshot_download

    try:
        snapshot_download(repo_id, local_files_only=True)
    except Exception:  # any miss (absent, partial, offline) means "not cached"
        return False
    return True


def step_environment(config: SmokeConfig) -> dict:
    import torch

    cuda = torch.cuda.is_available()
    gpu = torch.cuda.get_device_properties(0) if cuda else None
    cached = {repo: in_hf_cache(repo) for repo in checkpoints(config)}
    result = {
        "python": sys.version.split()[0],
        "torch": torch.__version__,
        "cuda_available": cuda,
        "cuda_version": torch.version.cuda,
        "gpu_name": gpu.name if gpu else None,
        "gpu_memory_gb": round(gpu.total_memory / 2**30, 1) if gpu else None,
        "gpu_count": torch.cuda.device_count(),
        "versions": {p: _version(p) for p in ("diffusers", "transformers", "vllm", "dagster")},
        "hf_hub_offline": os.environ.get("HF_HUB_OFFLINE"),
        "hf_cache": cached,
        "all_checkpoints_cached": all(cached.values()),
    }
    if not config.dry_run and not cuda:
        raise RuntimeError(f"no CUDA device: {json.dumps(result)}")
    return result


# ------------------------------------------------------------------------------ 2. generators


def pixel_hash(image) -> str:
    """SHA-256 of the decoded pixels (mode, size, bytes): PNG encoder settings cannot change it."""
    digest = hashlib.sha256(f"{image.mode}{image.size}".encode())
    digest.update(image.tobytes())
    return digest.hexdigest()[:16]


def max_pixel_difference(a, b) -> int:
    import numpy as np

    return int(np.abs(np.asarray(a, dtype=np.int16) - np.asarray(b, dtype=np.int16)).max())


class RecordingGenerator:
    """Passes every call to the generator and keeps its batch, so the calibration's own draws
    (warm-up first) are the batch-1 images compared with the batch of 4."""

    def __init__(self, generator):
        self.generator, self.batches = generator, []
        self.model_id = generator.model_id

    def generate(self, requests):
        batch = self.generator.generate(requests)
        self.batches.append(batch)
        return batch


def smoke_spec(config: SmokeConfig, model_id: str):
    """The registry row; in a dry run the tiny instance of its real pipeline class."""
    from ingestion.backends.api.generators import load_generator_specs

    spec = load_generator_specs()[model_id]
    if not config.dry_run:
        return spec
    from ingestion.backends.tiny.pipelines import TINY_PIPELINES, tiny_spec

    folder = config.tiny_dir / spec.pipeline_class
    if not (folder / "model_index.json").exists():
        TINY_PIPELINES[spec.pipeline_class](folder)
    return tiny_spec(spec, folder)


def smoke_prompts(n: int, prefix: str = "s") -> list[dict]:
    # short prompts: the tiny pipelines' tokenizers and position tables fit them too
    texts = (
        "a red cat on a blue chair",
        "a photo of a dog",
        "the word hello written on a sign",
        "a blue chair",
        "a red cat",
    )
    return [
        {"prompt_id": f"{prefix}{i:02d}-en", "concept_id": f"{prefix}{i:02d}", "language": "en"}
        | {"text": texts[i % len(texts)], "source": "smoke"}
        for i in range(n)
    ]


def loaded_dtype(pipeline) -> str:
    import torch

    for component in pipeline.components.values():
        if isinstance(component, torch.nn.Module):
            return str(next(component.parameters()).dtype).removeprefix("torch.")
    return "unknown"


def registry_cost(model_id: str) -> float:
    """The GPU-s/MP seeds/generators.csv holds for the row (paper or assumed), for comparison."""
    import csv

    from ingestion.backends.api.generators import GENERATORS_SEED

    with GENERATORS_SEED.open(newline="", encoding="utf-8") as f:
        rows = {r["model_id"]: r for r in csv.DictReader(f)}
    return float(rows[model_id]["cost_gpu_s_per_mp"])


def step_generator(config: SmokeConfig, model_id: str) -> dict:
    from ingestion.backends.drivers.calibration import calibrate_cost
    from ingestion.backends.drivers.runs import generation_requests
    from ingestion.backends.models.diffusers_generator import DiffusersGenerator

    spec = smoke_spec(config, model_id)
    reset_peak_memory()
    started = time.perf_counter()
    # loaded for the largest batch it draws here (the batch of gen_images), as the asset loads
    # for its batch_size
    generator = DiffusersGenerator(spec, device=config.device, batch_size=config.gen_images)
    load_s = time.perf_counter() - started
    # requests[0] is the warm-up; the next gen_images are drawn at batch 1, then as one batch
    requests = generation_requests(spec, smoke_prompts(config.gen_images + 1))
    recorder = RecordingGenerator(generator)
    calibration = calibrate_cost(recorder, requests, n_images=config.gen_images)
    warmup, *singles = recorder.batches
    together = generator.generate(requests[1:])
    timed_s = sum(b.gpu_seconds for b in singles)
    timed_mp = sum(i.size[0] * i.size[1] / 1e6 for b in singles for i in b.images)
    seeds = [
        {
            "seed": single.requests[0].seed,
            "batch1": pixel_hash(single.images[0]),
            "batch4": pixel_hash(image),
            "max_pixel_difference": max_pixel_difference(single.images[0], image),
        }
        for single, image in zip(singles, together.images, strict=True)
    ]
    return {
        "model_id": model_id,
        "pipeline_class": type(generator.pipeline).__name__,
        "width_height": list(together.images[0].size),
        "steps": spec.steps,
        "dtype_expected": str(generator.dtype).removeprefix("torch."),
        "dtype_loaded": loaded_dtype(generator.pipeline),
        "offload": generator.offloaded,  # as decided at load, before the weights took memory
        "load_s": round(load_s, 3),
        "warmup_latency_s": warmup.latency_s,
        "batch1_latency_s": calibration.latency_s,
        "batch4_latency_s": together.latency_s,
        "batch4_speedup_per_image": calibration.latency_s * len(singles) / together.latency_s,
        "gpu_s_per_mp": calibration.gpu_s_per_mp,
        "registry_gpu_s_per_mp": registry_cost(model_id),
        # the figure is the timed batch-1 draws alone: recomputed here from their latencies
        "warmup_excluded": abs(calibration.gpu_s_per_mp - timed_s / timed_mp)
        <= 1e-9 * max(1.0, timed_s / timed_mp),
        "seeds": seeds,
        # exact equality is the claim; float GEMMs blocked by batch size may still move a
        # pixel by a level or more (bf16 on a GPU more than float32 here): both are reported
        "batch_hashes_equal": all(s["batch1"] == s["batch4"] for s in seeds),
        "batch_max_pixel_difference": max(s["max_pixel_difference"] for s in seeds),
        **device_memory(),
    }


# ------------------------------------------------------------------------------ 3. Dagster


def gated_resource(profile: str, tiny_dir: str, device: str, gate_marker: str | None):
    """The generation asset's resource, whose generator, when `gate_marker` is set, writes the
    marker and then blocks after drawing its second batch (before run_generation stores it), so
    the parent's SIGKILL lands mid-run at a known point on any machine."""
    from dagster_defs.ml_resources import ImageGeneratorResource

    class GatedGenerator:
        def __init__(self, generator):
            self.generator, self.calls = generator, 0
            self.model_id, self.revision = generator.model_id, generator.revision
            self.backend = getattr(generator, "backend", "diffusers")

        def generate(self, requests):
            batch = self.generator.generate(requests)
            self.calls += 1
            if self.calls == 2:
                Path(gate_marker).write_text("batch 2 drawn, not stored\n")
                time.sleep(3600)  # killed here
            return batch

    class GatedGeneratorResource(ImageGeneratorResource):
        def load(self, spec, batch_size=None):
            generator = super().load(spec, batch_size)
            return GatedGenerator(generator) if gate_marker else generator

    return GatedGeneratorResource(profile=profile, tiny_dir=tiny_dir, device=device)


def partition_of(asset, model_id: str):
    """The asset's partition of the generator's first shard (generator x shard partitions), or
    the generator alone where the asset is partitioned by generator only."""
    import dagster as dg

    if isinstance(asset.partitions_def, dg.MultiPartitionsDefinition):
        return dg.MultiPartitionKey({"generator": model_id, "shard": "0"})
    return model_id


def materialize_generation(settings: dict) -> dict:
    """One materialisation of gpu/generated_images: its success and materialisation metadata."""
    import dagster as dg

    from dagster_defs.assets.generation import generation_assets

    generated_images = generation_assets().generated_images
    resource = gated_resource(
        settings["profile"], settings["tiny_dir"], settings["device"], settings["gate_marker"]
    )
    op_config = {"bundle": settings["bundle"], "batch_size": 2, "calibration_images": 0}
    result = dg.materialize(
        [generated_images],
        partition_key=partition_of(generated_images, settings["model_id"]),
        resources={"image_generator": resource},
        run_config={"ops": {generated_images.op.name: {"config": op_config}}},
        raise_on_error=False,
    )
    metadata = {}
    for event in result.get_asset_materialization_events():
        metadata = {k: v.value for k, v in event.materialization.metadata.items()}
    return {"success": result.success, **metadata}


def dagster_child(settings_path: Path) -> int:
    """The materialisation the parent kills, in its own process."""
    settings = json.loads(Path(settings_path).read_text())
    return 0 if materialize_generation(settings)["success"] else 1


def _child(settings: dict, folder: Path) -> subprocess.Popen:
    path = folder / "child.settings.json"
    path.write_text(json.dumps(settings))
    with (folder / "child.log").open("a") as out:
        return subprocess.Popen(
            [sys.executable, "-m", "bench.gpu_smoke", "--dagster-child", str(path)],
            cwd=PROJECT_ROOT,
            stdout=out,
            stderr=subprocess.STDOUT,
        )


def _wait_for(predicate: Callable[[], bool], process: subprocess.Popen) -> None:
    while not predicate():
        if process.poll() is not None:
            raise RuntimeError(f"the child exited ({process.returncode}) before the kill point")
        time.sleep(0.05)


def _bundle_rows(bundle: Path) -> list[dict]:
    from ingestion.backends.drivers.runs import read_rows

    return list(read_rows(bundle / "images.jsonl"))


def shard_zero(prompts: list[dict]) -> list[dict]:
    """The prompts the materialised partition (shard 0) draws under this deployment's shard
    count (all of them with the default single shard)."""
    from ingestion.backends.drivers.shards import prompts_of_shard, shard_count_from_env

    # the count generation_assets() partitions by, read from the same environment
    return prompts_of_shard(prompts, 0, shard_count_from_env())


def step_dagster_crash_resume(config: SmokeConfig) -> dict:
    """Materialise, SIGKILL the run mid-batch, materialise again: every planned image once."""
    import shutil

    folder = config.work / "dagster"
    shutil.rmtree(folder, ignore_errors=True)
    bundle = folder / "bundle"
    bundle.mkdir(parents=True)
    prompts = smoke_prompts(3, "d") + [
        p | {"prompt_id": p["prompt_id"].replace("-en", "-zh"), "language": "zh"}
        for p in smoke_prompts(3, "d")
    ]  # 3 concepts x 2 languages, batches of 2: the kill lands in batch 2 of 3
    (bundle / "prompts.jsonl").write_text("".join(json.dumps(p) + "\n" for p in prompts))
    base = {
        "profile": config.profile,
        "tiny_dir": str(config.tiny_dir),
        "device": config.device,
        "model_id": config.generators[0],
        "bundle": str(bundle),
    }
    marker = folder / "gate"
    child = _child(base | {"gate_marker": str(marker)}, folder)
    try:
        _wait_for(marker.exists, child)
        child.send_signal(signal.SIGKILL)  # a node dying mid-batch: no handler, no cleanup
        child.wait()
    finally:
        if child.poll() is None:
            child.kill()
    rows_at_kill = len(_bundle_rows(bundle))
    resumed = materialize_generation(base | {"gate_marker": None})
    planned = shard_zero(prompts)
    rows = _bundle_rows(bundle)
    ids = [r["image_id"] for r in rows]
    pngs = sorted(p.name for p in (bundle / "images").rglob("*.png"))
    return {
        "model_id": config.generators[0],
        "planned": len(planned),
        "killed_with_signal": -child.returncode,
        "rows_at_kill": rows_at_kill,
        "resume_success": resumed["success"],
        "resume_skipped": resumed.get("skipped"),
        "resume_drawn": resumed.get("drawn"),
        "lost": len({p["prompt_id"] for p in planned} - {r["prompt_id"] for r in rows}),
        "duplicated": len(ids) - len(set(ids)),
        "png_files_match_rows": pngs == sorted(Path(r["path"]).name for r in rows),
    }


# ------------------------------------------------------------------------------ 4. judges

COLOURS = {
    "red": (220, 30, 30),
    "green": (30, 160, 60),
    "blue": (30, 60, 220),
    "yellow": (240, 210, 0),
}
SHAPES = ("circle", "square", "triangle")
# 12 shape questions + 2 = the 14 questions of every scene
QUESTIONS = [f"Is there a {c} {s}?" for c in COLOURS for s in SHAPES] + [
    "Is the background white?",
    "Is there any text in the image?",
]


def draw_scene(index: int, size: int):
    """A white scene with 2-3 coloured shapes (known from `index`); the truth of each question."""
    from PIL import Image, ImageDraw

    rng = random.Random(index)
    picks = rng.sample([(c, s) for c in COLOURS for s in SHAPES], rng.randint(2, 3))
    image = Image.new("RGB", (size, size), "white")
    draw = ImageDraw.Draw(image)
    cell = size // 3
    for slot, (colour, shape) in zip(rng.sample(range(9), len(picks)), picks, strict=False):
        x, y = slot % 3 * cell + cell // 6, slot // 3 * cell + cell // 6
        box = (x, y, x + cell * 2 // 3, y + cell * 2 // 3)
        if shape == "circle":
            draw.ellipse(box, fill=COLOURS[colour])
        elif shape == "square":
            draw.rectangle(box, fill=COLOURS[colour])
        else:
            draw.polygon(
                [(x, box[3]), (box[2], box[3]), ((x + box[2]) // 2, y)], fill=COLOURS[colour]
            )
    truth = [f"{c} {s}" in {f"{pc} {ps}" for pc, ps in picks} for c in COLOURS for s in SHAPES]
    return image, [*truth, True, False]


def judge_items(config: SmokeConfig) -> tuple[list, dict]:
    """The 20 scenes on disk as ImageQuestions, and (image, question_id) -> the true answer."""
    from ingestion.backends.api.interfaces import ImageQuestions

    folder = config.work / "scenes"
    folder.mkdir(parents=True, exist_ok=True)
    items, truth = [], {}
    for i in range(config.judge_images):
        image, answers = draw_scene(i, config.image_size)
        path = folder / f"scene{i:02d}.png"
        image.save(path)
        ids = [f"scene{i:02d}-q{k:02d}" for k in range(len(QUESTIONS))]
        items.append(
            ImageQuestions(
                f"scene{i:02d}", "smoke", str(path), tuple(zip(ids, QUESTIONS, strict=True))
            )
        )
        truth |= {(f"scene{i:02d}", q): a for q, a in zip(ids, answers, strict=True)}
    return items, truth


def answer_summary(judgments: list, truth: dict) -> dict:
    """Counts, the P(yes) range check and accuracy against the scenes' known content."""
    answered = [j for j in judgments if j.answer is not None]
    p_yes = [j.p_yes for j in answered]
    right = [j for j in answered if (j.answer == "yes") == truth[(j.prompt_id, j.question_id)]]
    return {
        "questions": len(judgments),
        "answered": len(answered),
        "missing_with_reason": sum(1 for j in judgments if j.answer is None and j.reason),
        "p_yes_within_0_1": all(p is not None and 0.0 <= p <= 1.0 for p in p_yes),
        "p_yes_min": min(p_yes, default=None),
        "p_yes_max": max(p_yes, default=None),
        "accuracy_vs_scene": len(right) / len(answered) if answered else None,
    }


def step_judge_transformers(config: SmokeConfig) -> dict:
    from dagster_defs.ml_resources import QuestionJudgeResource

    resource = QuestionJudgeResource(
        profile=config.profile,
        backend="transformers",
        model=config.judge_model,
        tiny_dir=str(config.tiny_dir),
        device=config.device,
    )
    items, truth = judge_items(config)
    reset_peak_memory()
    judge = resource.load()
    start = time.perf_counter()
    judgments = [j for item in items for j in judge.judge(item)]
    seconds = time.perf_counter() - start
    config.transformers_judgments.write_text(json.dumps([asdict(j) for j in judgments]))
    return {
        "judge_model": judge.identity.judge_model,
        "images": len(items),
        "questions_per_s": len(judgments) / seconds,
        **answer_summary(judgments, truth),
        **device_memory(),
    }


class CachedTokenCount:
    """Wraps an engine's generate() to sum the prompt tokens and the prompt tokens vLLM read from
    its prefix cache (RequestOutput.num_cached_tokens), call by call."""

    def __init__(self, llm):
        self.llm, self.real = llm, llm.generate
        self.calls = self.prompt_tokens = self.cached_tokens = 0

    def __enter__(self):
        def generate(*args, **kwargs):
            outputs = self.real(*args, **kwargs)
            self.calls += 1
            self.prompt_tokens += sum(len(o.prompt_token_ids or ()) for o in outputs)
            self.cached_tokens += sum(o.num_cached_tokens or 0 for o in outputs)
            return outputs

        self.llm.generate = generate
        return self

    def __exit__(self, *exc):
        del self.llm.generate  # the instance attribute goes; the class's method is back

    def figures(self, questions: int, seconds: float) -> dict:
        return {
            "generate_calls": self.calls,
            "questions_per_s": questions / seconds,
            "prefix_cache_hit_rate": self.cached_tokens / self.prompt_tokens
            if self.prompt_tokens
            else None,
        }


def agreement(ours: list, reference: list | None) -> dict:
    """Same answer, and mean |P(yes) difference|, against the transformers judge."""
    if not reference:
        return {"agreement_with_transformers": None, "agreement_note": "no transformers answers"}
    theirs = {(j.prompt_id, j.question_id): j for j in reference}
    pairs = [(j, theirs[(j.prompt_id, j.question_id)]) for j in ours]
    both = [(a, b) for a, b in pairs if a.answer is not None and b.answer is not None]
    return {
        "agreement_with_transformers": sum(a.answer == b.answer for a, b in both) / len(both)
        if both
        else None,
        "mean_abs_p_yes_difference": sum(abs(a.p_yes - b.p_yes) for a, b in both) / len(both)
        if both
        else None,
    }


def tiny_vllm_judge(config: SmokeConfig):
    """The dry run's vLLM judge: vLLM's CPU build cannot load a vision model, so the judge reads a
    tiny text-only LM with the image replaced by a text stand-in naming it (as test_vllm.py does):
    the prompts of one image still share one prefix, which is what one generate() per chunk and
    the prefix cache are about."""
    from ingestion.backends.models.vllm_backend import VllmJudge
    from ingestion.backends.tiny.models import build_tiny_text_lm

    folder = config.tiny_dir / "text_lm"
    if not (folder / "config.json").exists():
        build_tiny_text_lm(folder, logits={"yes": 1.0, "no": 0.0})
    os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", "1")  # GiB; the default takes far more
    return VllmJudge(
        str(folder),
        model_name="tiny-text-lm",
        text_only=True,
        dtype="float32",
        enforce_eager=True,
        max_model_len=256,
        max_num_seqs=16,
        block_size=32,
        seed=0,
    )


def step_judge_vllm(config: SmokeConfig) -> dict:
    require("vllm")
    require("ingestion.backends.models.vllm_backend", "VllmJudge")
    items, truth = judge_items(config)
    if config.dry_run:
        judge = tiny_vllm_judge(config)
    else:
        from dagster_defs.ml_resources import QuestionJudgeResource

        judge = QuestionJudgeResource(
            profile="gpu",
            backend="vllm",
            model=config.judge_model,
            device=config.device,
            max_model_len=4096,
            gpu_memory_utilization=0.85,
        ).load()
    result = {"judge_model": judge.identity.judge_model, "images": len(items)}
    judge.judge_many(items[:1])  # untimed warm-up: the engine's first call is not the mode's
    for mode, chunks in (("per_image", [[i] for i in items]), ("one_call", [items])):
        # neither mode reads the other's cached prefixes (False: vLLM could not reset it)
        reset = judge.llm.reset_prefix_cache()
        with CachedTokenCount(judge.llm) as count:
            start = time.perf_counter()
            judgments = [j for chunk in chunks for one in judge.judge_many(chunk) for j in one]
            seconds = time.perf_counter() - start
        result[mode] = count.figures(len(judgments), seconds) | {"cache_reset_before": reset}
    result["one_call_speedup"] = (
        result["one_call"]["questions_per_s"] / result["per_image"]["questions_per_s"]
    )
    reference = None
    if config.transformers_judgments.exists():  # the transformers judge's step has run
        from ingestion.backends.api.interfaces import Judgment

        rows = json.loads(config.transformers_judgments.read_text())
        reference = [Judgment(**row) for row in rows]
    return (
        result
        | answer_summary(judgments, truth)
        | agreement(judgments, reference)
        | device_memory()
    )


# ------------------------------------------------------------------------------ 5. OCR, 6. writer

OCR_TEXTS = ("OPEN", "HELLO WORLD", "EXIT 24", "FRESH BREAD", "SALE 50%")


def text_image(text: str, size: int):
    from PIL import Image, ImageDraw, ImageFont

    image = Image.new("RGB", (size, size), "white")
    font = ImageFont.load_default(size=max(8, size // (len(text) + 2)))
    ImageDraw.Draw(image).text((size // 16, size // 3), text, fill="black", font=font)
    return image


def step_ocr(config: SmokeConfig) -> dict:
    run_transcription = require(
        "ingestion.backends.drivers.transcription_runs", "run_transcription"
    )
    from dagster_defs.ml_resources import TextTranscriberResource
    from ingestion.backends.drivers.runs import append_rows, read_rows

    bundle = config.work / "ocr_bundle"
    for name in ("images.jsonl", "questions.jsonl", "transcriptions.jsonl"):
        (bundle / name).unlink(missing_ok=True)
    (bundle / "images").mkdir(parents=True, exist_ok=True)
    images, questions = [], []
    for i, text in enumerate(OCR_TEXTS[: config.ocr_images]):
        text_image(text, config.image_size).save(bundle / "images" / f"t{i}.png")
        images.append({"prompt_id": f"t{i}", "model_id": "smoke", "path": f"images/t{i}.png"})
        questions.append({"prompt_id": f"t{i}", "question_id": f"t{i}-q1", "text_target": text})
    append_rows(bundle / "images.jsonl", images)
    append_rows(bundle / "questions.jsonl", questions)
    resource = TextTranscriberResource(
        profile=config.profile,
        model=config.ocr_model,
        tiny_dir=str(config.tiny_dir),
        device=config.device,
        max_new_tokens=config.ocr_max_new_tokens,
    )
    reset_peak_memory()
    stats = run_transcription(resource.load(), bundle, "smoke", log=lambda _m: None)
    rows = list(read_rows(bundle / "transcriptions.jsonl"))
    read_right = sum(
        " ".join(r["blocks"]).upper() == OCR_TEXTS[int(r["prompt_id"][1:])] for r in rows
    )
    return {
        **stats.metadata(),
        "rows_written": len(rows),
        "parse_rate": stats.outcomes["ok"] / stats.done if stats.done else None,
        "read_exactly": read_right,
        "max_new_tokens": config.ocr_max_new_tokens,
        **device_memory(),
    }


WRITER_PROMPTS = (
    ("w0", "en", "a red bicycle leaning against a blue door"),
    ("w1", "en", "a bakery window with a sign that says 'OPEN' above two loaves of bread"),
    ("w2", "en", "three white ducks swimming to the left of a wooden boat"),
    ("w3", "zh", "一只黑猫坐在红色的椅子上"),
    ("w4", "en", "an astronaut reading a newspaper on the moon, photorealistic"),
)


def step_question_construction(config: SmokeConfig) -> dict:
    run = require("ingestion.backends.drivers.question_runs", "run_question_construction")
    from dagster_defs.ml_resources import QuestionWriterResource
    from ingestion.bundle import default_capabilities

    bundle = config.work / "writer_bundle"
    bundle.mkdir(parents=True, exist_ok=True)
    for path in bundle.glob("*.jsonl"):
        path.unlink()
    prompts = [
        {"prompt_id": p, "concept_id": p, "language": lang, "text": text, "source": "smoke"}
        for p, lang, text in WRITER_PROMPTS[: config.writer_prompts]
    ]
    (bundle / "prompts.jsonl").write_text("".join(json.dumps(p) + "\n" for p in prompts))
    if not config.dry_run:
        require("vllm")
    resource = QuestionWriterResource(
        profile=config.profile,
        model=config.writer_model,
        tiny_dir=str(config.tiny_dir),
        max_tokens=config.writer_max_tokens,
        tensor_parallel_size=1,
        gpu_memory_utilization=0.85,
    )
    capabilities = default_capabilities()
    writer = resource.load(sorted(capabilities))
    start = time.perf_counter()
    stats = run(writer, bundle, capabilities, batch_size=len(prompts), log=lambda _m: None)
    seconds = time.perf_counter() - start
    return {
        "writer_model": config.writer_model if not config.dry_run else "tiny-text-lm",
        **stats.metadata(),
        "prompts_per_s": len(prompts) / seconds,
        **device_memory(),
    }


# ------------------------------------------------------------------------------ the run


def steps(config: SmokeConfig) -> list[tuple[str, float, Callable[[], dict]]]:
    caps = STEP_CAPS_S
    plan = [("environment", caps["environment"], lambda: step_environment(config))]
    plan += [
        (f"generator:{m}", caps["generator"], lambda m=m: step_generator(config, m))
        for m in config.generators
    ]
    plan += [
        (name, caps[name], lambda fn=fn: fn(config))
        for name, fn in (
            ("dagster_crash_resume", step_dagster_crash_resume),
            ("judge_transformers", step_judge_transformers),
            ("judge_vllm", step_judge_vllm),
            ("ocr", step_ocr),
            ("question_construction", step_question_construction),
        )
    ]
    return plan


def write_results(results: dict, out: Path) -> None:
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(results, indent=2, default=str) + "\n")
    tmp.replace(out)


def run_smoke(config: SmokeConfig) -> dict:
    config.work.mkdir(parents=True, exist_ok=True)
    deadline = time.monotonic() + config.budget_s
    start = time.perf_counter()
    results = {
        "mode": "dry-run" if config.dry_run else "gpu",
        "started_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "budget_s": config.budget_s,
        "config": asdict(config),
        "steps": {},
    }
    fields = asdict(config)
    config.transformers_judgments.unlink(missing_ok=True)  # only this run's answers compare
    results["forkserver_s"] = start_forkserver()
    for name, cap, _ in steps(config):
        run_step(name, cap, ("bench.gpu_smoke:smoke_step", (fields, name)), results, deadline)
        results["total_s"] = round(time.perf_counter() - start, 3)
        write_results(results, config.out)
        print(f"gpu-smoke {name}: {results['steps'][name]['status']}", flush=True)
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dry-run", action="store_true", help="CPU, tiny models, tiny sizes")
    parser.add_argument("--out", type=Path, help="the results JSON (a folder: <it>/gpu_smoke.json)")
    parser.add_argument("--work", type=Path, help="scratch folder (default beside --out)")
    parser.add_argument("--generators", help="two registry model_ids, comma-separated")
    parser.add_argument("--dagster-child", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.dagster_child:
        return dagster_child(args.dagster_child)
    out = args.out
    if out is not None and (out.is_dir() or not out.suffix):  # a folder, such as $OUT
        out = out / "gpu_smoke.json"
    config = config_for(args.dry_run, out, args.work)
    if args.generators:
        config.generators = tuple(args.generators.split(","))
    results = run_smoke(config)
    print(f"gpu-smoke: {config.out} ({results['total_s']:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
