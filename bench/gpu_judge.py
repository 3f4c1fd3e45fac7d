"""The default judge's throughput on a borrowed GPU (issue 23), as a "transformers proxy".

Qwen3-VL-30B-A3B (`bench/arch_configs/judge.json`: the real text, vision and expert configuration)
is built with random weights, which time as the real ones do, and measured two ways:

(a) the project's transformers judge path: `TransformersJudge.judge` from
    `ingestion/backends/models/transformers_vl.py`, imported as it is (it pulls in no Dagster,
    pydantic, DuckDB, dbt or vLLM) with only `_QwenVL`'s `from_pretrained` replaced by the
    random-weight model: per image the image prefix once, then its 14 questions as one batch;
(b) a batched prefill of (image + question) prompts filling vLLM's default token budget, a
    compute-bound stand-in for what vLLM would do (never reported as vLLM).

Tokenizer and image processor are built in code: the real vocabulary size and special-token ids
(judge.json's "tokenizer"), Qwen's own pre-tokenizer split with one token per piece (timing needs
token counts, not merges), and the judge's own image budget (interfaces.JUDGE_IMAGE_PIXELS:
Qwen3-VL's preprocessor range, judge.json's "image_processor", with its top lowered to 1024^2
pixels): 1,024 image tokens for every registry size.

Plan on an H200, for a step budgeted at about 90 s: importing torch and transformers ~10 s;
building the 31 B model on the GPU in bf16 (62 GB of normal_ draws; `build_s` also holds CUDA's
start-up) ~10 s; drawing and saving 16 noise images ~3 s; (a) one warm-up image, then 8 images x
14 questions at a few tenths of a second each (CPU image processing included) ~5 s; (b) one
warm-up batch of 16,384 tokens (15 prompts; the router histogram is taken there, by hooks that
stay out of the timed batches), then 3 timed batches of about a second each ~5 s. About 35 s
expected, so a slower run still fits.

`judge_figures(device, dry_run=True)` runs the same code on CPU in float32 with judge.json's
"tiny" override of the same class (2 layers, 8 experts, a 1-block vision tower; vocabulary,
special ids and patch sizes stay real, so every token count is the real one).

Imports: the standard library, torch, transformers, tokenizers, pillow and the project modules
named above, none of which reaches Dagster, pydantic, DuckDB, dbt or vLLM.
"""

from __future__ import annotations

import contextlib
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from unittest import mock

from bench.gpu_bench import (
    JUDGE_ID,
    build_component,
    count_params,
    default_dtype,
    load_arch,
    registry_rows,
    tiny_spec,
)
from bench.gpu_judge_thinking import thinking_figures
from bench.gpu_smoke import QUESTIONS
from ingestion.backends.api.interfaces import ImageQuestions
from ingestion.backends.tiny.models import QWEN_CHAT_TEMPLATE

LABEL = "transformers proxy"
IMAGE_SIDE = 1024  # what most registry rows draw at (seeds/generators.csv)
VLLM_BUDGET_SOURCE = (
    "vllm 0.32.0 (the project's pin) vllm/engine/arg_utils.py EngineArgs.get_batch_defaults, "
    "usage context LLM class (the judge's vllm.LLM): max_num_batched_tokens 16384 on a GPU of "
    ">= 70 GiB that is not an A100 (H100, H200, B200), else 8192; 4096 on CPU (world size 1)"
)
# Qwen2's pre-tokenizer split (its tokenizer.json): one piece is one token for the common English
# words a question uses, which the 151k BPE holds whole; rarer words would split further
QWEN_SPLIT = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*"
    r"|\s*[\r\n]+|\s+(?!\S)|\s+"
)


@dataclass(frozen=True)
class Plan:
    judge_images: int  # timed through the project's judge, after one warm-up image
    prefill_batches: int  # timed batches of the token budget, after one warm-up batch


GPU_PLAN = Plan(judge_images=8, prefill_batches=3)
DRY_PLAN = Plan(judge_images=1, prefill_batches=1)


# --------------------------------------------------------------------------------- building


def judge_spec(arch: dict, dry_run: bool) -> dict:
    spec = arch["components"]["model"]
    return tiny_spec(spec) if dry_run else spec


def build_judge(spec: dict, device: str, dtype):
    """Built on `device` itself, weights drawn there (not meta + to_empty: no uninitialised
    memory, and the router's weights are really random)."""
    with default_dtype(dtype):
        return build_component(spec, device).eval()


def build_tokenizer(spec: dict):
    """A WordLevel tokenizer over Qwen's pre-tokenizer pieces: the words the judge's prompts use
    first, then filler up to the real 151,643 regular tokens, then the 26 added tokens at their
    real ids (151643 <|endoftext|> ... 151655 <|image_pad|> ... 151668 </think>)."""
    from tokenizers import Regex, Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    from ingestion.backends.models.transformers_vl import JUDGE_INSTRUCTION

    split = pre_tokenizers.Split(Regex(QWEN_SPLIT), behavior="isolated")
    # every spelling answer_spellings looks for, so the judge finds single-token yes and no
    spellings = [w for word in ("yes", "no") for w in (word, word.title(), word.upper())]
    texts = ["user\n", "assistant\n", *spellings, *(" " + w for w in spellings)]
    texts += [JUDGE_INSTRUCTION.format(question=q) for q in QUESTIONS]
    pieces = list(dict.fromkeys(p for text in texts for p, _ in split.pre_tokenize_str(text)))
    pieces += [f"<filler{i}>" for i in range(spec["regular_tokens"] - len(pieces))]
    vocab = {piece: i for i, piece in enumerate(pieces)}
    raw = Tokenizer(models.WordLevel(vocab, unk_token=pieces[-1]))
    raw.pre_tokenizer = split
    added = sorted(spec["added_tokens"], key=spec["added_tokens"].get)
    cut = added.index(spec["special_through"]) + 1
    raw.add_special_tokens(added[:cut])
    raw.add_tokens(added[cut:])
    wrong = {t: i for t, i in spec["added_tokens"].items() if raw.token_to_id(t) != i}
    if wrong:
        raise ValueError(f"added tokens away from their real ids: {wrong}")
    return PreTrainedTokenizerFast(
        tokenizer_object=raw,
        eos_token=spec["eos_token"],
        pad_token=spec["pad_token"],
        padding_side="left",
        chat_template=QWEN_CHAT_TEMPLATE,
    )


def image_processor_class(spec: dict) -> str:
    """The Qwen-VL image processor class the real judge would load here: transformers'
    torchvision backend where torchvision imports (the device has torchvision 0.26, so its
    AutoProcessor picks it), the PIL backend (the same arithmetic) where it does not."""
    try:
        import torchvision  # noqa: F401
    except Exception:  # absent, or a CUDA build beside a CPU torch (it fails at import)
        return spec["class"]
    return spec["torchvision_class"]


def build_processor(arch: dict):
    """The project's ComposedVLProcessor (the same token expansion as Qwen3VLProcessor, which
    needs a folder to load) over the code-built tokenizer and the image processor class the real
    judge would use on this machine (`image_processor_class`)."""
    import transformers

    from ingestion.backends.models.transformers_vl import ComposedVLProcessor

    spec = arch["image_processor"]
    settings = {k: v for k, v in spec.items() if k not in ("class", "torchvision_class", "source")}
    processor = object.__new__(ComposedVLProcessor)  # its __init__ reads a folder
    processor.tokenizer = build_tokenizer(arch["tokenizer"])
    processor.image_processor = getattr(transformers, image_processor_class(spec))(**settings)
    return processor


def project_judge(model, processor, device: str, model_name: str, **judge_kwargs):
    """The project's TransformersJudge, built by its own __init__ with `_QwenVL` (which would
    call from_pretrained) handing over the random-weight model instead (`judge_kwargs`: e.g.
    a Thinking judge's `reasoning_budget`)."""
    import torch

    from ingestion.backends.models import transformers_vl

    vl = object.__new__(transformers_vl._QwenVL)
    vl.source, vl.revision, vl.device = model_name, "random-weights", torch.device(device)
    vl.model, vl.processor, vl.tokenizer = model, processor, processor.tokenizer
    with mock.patch.object(transformers_vl, "_QwenVL", lambda *args: vl):
        return transformers_vl.TransformersJudge(model_name, **judge_kwargs)


# ---------------------------------------------------------------------------------- timing


def synchronize(device: str) -> None:
    import torch

    if device.startswith("cuda"):
        torch.cuda.synchronize()


def timed(device: str, run):
    """(result, seconds) of `run()`, the device drained before and after."""
    synchronize(device)
    start = time.perf_counter()
    result = run()
    synchronize(device)
    return result, time.perf_counter() - start


def reset_peak(device: str) -> None:
    import torch

    if device.startswith("cuda"):
        torch.cuda.reset_peak_memory_stats()


def peak_gib(device: str) -> float | None:
    import torch

    return torch.cuda.max_memory_allocated() / 2**30 if device.startswith("cuda") else None


# ---------------------------------------------------------------------------------- inputs


def vllm_default_budget(device: str) -> int:
    """vLLM's default max_num_batched_tokens for the judge's engine on `device`."""
    import torch

    if not device.startswith("cuda"):
        return 4096
    is_large = torch.cuda.get_device_properties(device).total_memory >= 70 * 2**30
    return 16384 if is_large and "a100" not in torch.cuda.get_device_name(device).lower() else 8192


def noise_items(folder: Path, count: int) -> list[ImageQuestions]:
    """`count` PNGs of random pixels at IMAGE_SIDE on disk, each with the smoke's 14 questions.
    Noise, not the smoke's flat scenes: identical white patches would all route to the same
    experts, while a generated image's patches differ."""
    import numpy as np
    from PIL import Image

    items = []
    for i in range(count):
        path = folder / f"image{i:02d}.png"
        pixels = np.random.default_rng(i).integers(0, 256, (IMAGE_SIDE, IMAGE_SIDE, 3), np.uint8)
        Image.fromarray(pixels).save(path)
        questions = tuple((f"image{i:02d}-q{k:02d}", q) for k, q in enumerate(QUESTIONS))
        items.append(ImageQuestions(f"image{i:02d}", "judge-bench", str(path), questions))
    return items


def image_tokens(processor, width: int, height: int, size: dict[str, int]) -> int:
    """Image tokens the processor gives one width x height image within `size` (the judge's
    budget): its patch grid over merge^2."""
    from PIL import Image

    image = Image.new("RGB", (width, height))
    vision = processor.image_processor(images=[image], size=size)
    return int(vision["image_grid_thw"][0].prod()) // processor.image_processor.merge_size**2


def registry_image_tokens(processor, size: dict[str, int]) -> dict[str, int]:
    sizes = sorted({(int(r["width"]), int(r["height"])) for r in registry_rows()})
    return {f"{w}x{h}": image_tokens(processor, w, h, size) for w, h in sizes}


# ------------------------------------------------------------------------------- (a) judge


def judge_path_figures(judge, items: list[ImageQuestions], device: str) -> dict:
    """The project's judge over images x questions: the first image warms up, the rest are timed.
    Its seconds include reading and processing each image on the CPU, as the judge does; that
    part is timed on its own too (`image_processing_s`)."""
    from ingestion.backends.models.images import load_rgb

    judge.judge(items[0])
    reset_peak(device)
    judgments, seconds = timed(device, lambda: [j for it in items[1:] for j in judge.judge(it)])

    def read_and_process():
        image = load_rgb(items[-1].image_path)
        return judge.vl.processor(text=[judge.image_prefix], images=[image])

    prefix, processing_s = timed("cpu", read_and_process)
    suffixes = [judge.question_suffix.replace("{question}", q) for q in QUESTIONS]
    suffix_tokens = [len(judge.vl.tokenizer.encode(s, add_special_tokens=False)) for s in suffixes]
    return {
        "label": f"{LABEL}: the project's TransformersJudge.judge (prefix once, questions batched)",
        "images": len(items) - 1,
        "questions": len(judgments),
        "seconds": seconds,
        "images_per_s": (len(items) - 1) / seconds,
        "questions_per_s": len(judgments) / seconds,
        "image_processing_s": processing_s,
        "prefix_tokens": int(prefix["input_ids"].shape[1]),
        "suffix_tokens_mean": sum(suffix_tokens) / len(suffix_tokens),
        "peak_memory_gib": peak_gib(device),
    }


# ----------------------------------------------------------------------------- (b) prefill


def prefill_prompts(judge, count: int) -> list[str]:
    """The judge's own prompt, image first, one question each (cycling through the 14)."""
    return [
        judge.prompt_template.replace("{question}", QUESTIONS[i % len(QUESTIONS)])
        for i in range(count)
    ]


def prompts_per_batch(judge, budget: int) -> int:
    """How many of the longest (image + question) prompts fit in `budget` tokens."""
    from PIL import Image

    longest = max(prefill_prompts(judge, len(QUESTIONS)), key=len)
    image = Image.new("RGB", (IMAGE_SIDE, IMAGE_SIDE))
    tokens = judge.vl.processor(text=[longest], images=[image], size=judge.image_size)
    tokens = tokens["input_ids"].shape[1]
    return budget // tokens


@contextlib.contextmanager
def expert_counts(model):
    """Tokens per expert, summed over the MoE layers, while the block is open: a forward hook on
    each sparse block's router (`gate`), whose outputs end with the chosen experts' indices."""
    import torch

    routers = [m.gate for m in model.modules() if hasattr(m, "gate") and hasattr(m, "experts")]
    experts = model.config.text_config.num_experts
    histogram = torch.zeros(experts, dtype=torch.long, device=model.device)
    counts = {"tokens_per_expert": histogram, "routed_rows": 0, "routers": routers}

    def count(_module, _inputs, outputs):
        chosen = outputs[-1]
        histogram.add_(torch.bincount(chosen.flatten(), minlength=experts))
        counts["routed_rows"] += chosen.shape[0]

    hooks = [router.register_forward_hook(count) for router in routers]
    try:
        yield counts
    finally:
        for hook in hooks:
            hook.remove()


def router_figures(model, counts: dict) -> dict:
    """Is the random router spreading tokens? Its weights vary (std > 0 in every layer: a zero
    router sends every token to the same first k experts) and more than k experts are hit."""
    histogram = counts["tokens_per_expert"].tolist()
    text = model.config.text_config
    weight_std = min(float(r.weight.detach().float().std()) for r in counts["routers"])
    share = max(histogram) / sum(histogram)
    experts_hit = sum(n > 0 for n in histogram)
    return {
        "experts": text.num_experts,
        "top_k": text.num_experts_per_tok,
        "moe_layers": len(counts["routers"]),
        "routed_rows": counts["routed_rows"],  # tokens x MoE layers, padding included
        "tokens_per_expert": histogram,  # summed over layers: routed_rows x top_k in all
        "experts_hit": experts_hit,
        "max_expert_share": share,
        "uniform_share": 1 / text.num_experts,
        "min_router_weight_std": weight_std,
        "is_degenerate": weight_std == 0 or experts_hit <= text.num_experts_per_tok,
    }


def prefill_figures(judge, items: list[ImageQuestions], budget: int, device: str, plan: Plan):
    """(prefill figures, router figures): one batch of `items`' images, one prompt each, at
    vLLM's default budget; its warm-up pass counted by the router hooks, then
    `plan.prefill_batches` timed."""
    import torch

    from ingestion.backends.models.images import load_rgb

    model, count = judge.vl.model, len(items)
    images = [load_rgb(item.image_path) for item in items]
    batch = judge.vl.processor(
        text=prefill_prompts(judge, count), images=images, size=judge.image_size
    )
    batch = {k: v.to(device) for k, v in batch.items()}
    prompt_tokens = int(batch["attention_mask"].sum())

    def forward():
        with torch.inference_mode():
            return model(**batch, use_cache=False, logits_to_keep=1).logits

    with expert_counts(model) as counts:
        is_finite = bool(forward().isfinite().all())  # random weights must not overflow in bf16
    reset_peak(device)
    _, seconds = timed(device, lambda: [forward() for _ in range(plan.prefill_batches)])
    per_batch = seconds / plan.prefill_batches
    figures = {
        "label": f"{LABEL}: batched prefill, one distinct image per prompt (no prefix sharing)",
        "max_num_batched_tokens": budget,
        "budget_source": VLLM_BUDGET_SOURCE,
        "prompts_per_batch": count,
        "tokens_per_prompt": prompt_tokens / count,
        "batch_tokens": prompt_tokens,
        "padded_batch_tokens": int(batch["attention_mask"].numel()),
        "batches": plan.prefill_batches,
        "seconds_per_batch": per_batch,
        "tokens_per_s": prompt_tokens / per_batch,
        "images_per_s": count / per_batch,
        # every question paying for its image again: the floor
        "questions_per_s_uncached": count / per_batch,
        # the other 13 questions of an image reusing its cached prefix for free: a ceiling
        # (14 x images/s), not a measurement; named so since issue 35 (no reader of the old
        # name: `qct2i calibrate` reads only the generators' rows)
        "questions_per_s_prefix_cached_ceiling": count * len(QUESTIONS) / per_batch,
        "logits_finite": is_finite,
        "peak_memory_gib": peak_gib(device),
    }
    return figures, router_figures(model, counts)


# ------------------------------------------------------------------------------------ main


def tokenizer_figures(model, tokenizer) -> dict:
    config = model.config
    ids = ("image_token_id", "video_token_id", "vision_start_token_id", "vision_end_token_id")
    chat = ("<|im_start|>", "<|im_end|>", "<|endoftext|>")
    return {
        "vocab_size": len(tokenizer),
        "model_vocab_size": config.text_config.vocab_size,
        "config_ids": {name: getattr(config, name) for name in ids},
        "tokenizer_ids": {t: tokenizer.convert_tokens_to_ids(t) for t in chat},
    }


def budget_figures(judge) -> dict:
    processor, size = judge.vl.processor, judge.image_size
    return {
        "source": "the judge's budget (interfaces.JUDGE_IMAGE_PIXELS) over Qwen3-VL's own range",
        "min_pixels": size["shortest_edge"],
        "max_pixels": size["longest_edge"],
        "image_side": IMAGE_SIDE,
        "image_tokens_per_image": image_tokens(processor, IMAGE_SIDE, IMAGE_SIDE, size),
        "image_tokens_by_registry_size": registry_image_tokens(processor, size),
    }


def judge_figures(device: str, dry_run: bool) -> dict:
    """The judge's figures as one JSON-ready dict (`dry_run`: the tiny config on CPU)."""
    import torch

    started = time.perf_counter()
    device = "cpu" if dry_run else device
    dtype = torch.float32 if dry_run else torch.bfloat16
    plan = DRY_PLAN if dry_run else GPU_PLAN
    arch = load_arch(JUDGE_ID)
    torch.manual_seed(0)
    model, build_s = timed(device, lambda: build_judge(judge_spec(arch, dry_run), device, dtype))
    processor = build_processor(arch)
    judge = project_judge(model, processor, device, arch["hub_repo_id"])
    budget = vllm_default_budget(device)
    per_batch = prompts_per_batch(judge, budget)
    with tempfile.TemporaryDirectory() as folder:
        items = noise_items(Path(folder), max(1 + plan.judge_images, per_batch))
        judge_path = judge_path_figures(judge, items[: 1 + plan.judge_images], device)
        prefill, router = prefill_figures(judge, items[:per_batch], budget, device, plan)
        # the Thinking judge (issue 35): the same architecture, reasoning before it answers
        thinking = thinking_figures(
            model, processor, device, items[0], arch["hub_repo_id"], dry_run
        )
    return {
        "label": LABEL,
        "model_class": type(model).__name__,
        "hub_repo_id": arch["hub_repo_id"],
        "dry_run": dry_run,
        "device": torch.cuda.get_device_name(device) if device.startswith("cuda") else device,
        "dtype": str(dtype).removeprefix("torch."),
        "params": count_params(model),
        "build_s": build_s,
        "attn_implementation": model.config._attn_implementation,
        "experts_implementation": model.config.text_config._experts_implementation,
        "tokenizer": tokenizer_figures(model, processor.tokenizer),
        "image_processor_class": type(processor.image_processor).__name__,
        "image_budget": budget_figures(judge),
        "questions_per_image": len(QUESTIONS),
        "judge_path": judge_path,
        "prefill": prefill,
        "router": router,
        "thinking": thinking,
        "wall_s": time.perf_counter() - started,
    }
