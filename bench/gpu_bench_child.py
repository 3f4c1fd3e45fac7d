"""One row of the architecture bench, inside its own child process (bench/gpu_bench_run.py starts
it from a forkserver that has imported this module, so torch, transformers, diffusers and the
registry's pipeline classes are already imported when the child begins).

A row is the registry row's real diffusers pipeline class, assembled from components built from
`bench/arch_configs/<model_id>.json` directly on the device in the bench's dtype with random
weights (real initialisation, not meta + `to_empty`), tokenizers built in code
(bench/gpu_bench_tokens.py) and a scheduler from a config, then called as the project calls it
(`ingestion/backends/models/diffusers_generator.py`: the row's guidance argument, call_kwargs,
resolution, one prompt, a CPU generator). A warm-up call, then `k_short` and `k_long` steps, each
timed with the device synchronised; the parts come from timers around `encode_prompt`,
`vae.decode` and GLM-Image's `generate_prior_tokens`. Figures go to the parent as soon as they
are measured, so a row killed at its cap keeps what it had.

Imports: the standard library, torch, transformers, diffusers, tokenizers (and the bench's own
modules); nothing of the project's warehouse.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import resource
import time
import traceback
import warnings
from dataclasses import dataclass
from pathlib import Path

from bench import gpu_bench_fault_hook  # noqa: F401  first: a forced failure loads no library

# isort: split
import diffusers
import torch
import transformers

from bench import gpu_bench
from bench.gpu_bench_run import (
    FAULT_ENV,
    TIMED_PAIRS,
    WARMUP_STEPS,
    consistency,
    extrapolate,
    injected_faults,
    prior_estimate,
    prior_limit_s,
    step_counts,
)
from bench.gpu_bench_tokens import BENCH_PROMPT, build_tokenizer

TINY_SIZE = 32  # pixels per side of a dry-run draw, as the project's tiny pipelines draw
SCHEDULER = "FlowMatchEulerDiscreteScheduler"

# Which tokenizer family each pipeline's tokenizer slot takes, and the component whose embedding
# rows give its vocabulary size
TOKENIZERS = {
    "QwenImagePipeline": {"tokenizer": ("qwen", "text_encoder")},
    "LongCatImagePipeline": {
        "tokenizer": ("qwen", "text_encoder"),
        # the prompt rewriter's Qwen2-VL processor: rewriting is off (enable_prompt_rewrite false),
        # and the tokenizer is all it would use of it, as in the project's tiny LongCat-Image
        "text_processor": ("qwen", "text_encoder"),
    },
    "ZImagePipeline": {"tokenizer": ("qwen", "text_encoder")},
    "Flux2KleinPipeline": {"tokenizer": ("qwen", "text_encoder")},
    # the hub's tokenizer is a Pixtral processor; its image half is unused for text-to-image
    "Flux2Pipeline": {"tokenizer": ("mistral", "text_encoder")},
    "ErnieImagePipeline": {"tokenizer": ("mistral", "text_encoder")},
    "FluxPipeline": {
        "tokenizer": ("clip", "text_encoder"),
        "tokenizer_2": ("t5", "text_encoder_2"),
    },
    "HiDreamImagePipeline": {
        "tokenizer": ("clip", "text_encoder"),
        "tokenizer_2": ("clip", "text_encoder_2"),
        "tokenizer_3": ("t5", "text_encoder_3"),
        "tokenizer_4": ("llama3", "text_encoder_4"),
    },
}
# Pipeline arguments that are neither components nor tokenizers: the FLUX.2-Klein rows are the
# step-distilled releases (4 steps at guidance 1, model_index.json is_distilled)
PIPELINE_ARGS = {"Flux2KleinPipeline": {"is_distilled": True}}


def _preload_pipeline_classes() -> None:
    """Import every configured pipeline and component class now (diffusers imports them lazily,
    seconds each), so the forkserver holds them for every child. A class that fails is left for
    the row to report."""
    for model_id in gpu_bench.arch_ids():
        arch = gpu_bench.load_arch(model_id)
        with contextlib.suppress(Exception):
            if arch.get("pipeline_class"):
                getattr(diffusers, arch["pipeline_class"])
            for spec in arch["components"].values():
                gpu_bench.component_class(spec)


if multiprocessing.parent_process() is None:
    # the forkserver (or a plain import): its children inherit the classes. A spawned child
    # builds one row, whose classes diffusers imports when asked
    _preload_pipeline_classes()
# A child re-imports the parent's main module, bench.gpu_bench, which this module has imported
# already; runpy warns about that on every child (harmless: the module only defines functions)
warnings.filterwarnings("ignore", "'bench.gpu_bench' found in sys.modules", RuntimeWarning)


@dataclass(frozen=True)
class Setup:
    """Where and how a row runs: the device, its dtype, the draw's size, the timed step counts."""

    device: str
    dtype: torch.dtype
    width: int
    height: int
    k_short: int
    k_long: int
    tiny: bool  # each component at its config's `tiny` sizes


def setup_for(plan: dict, dry_run: bool) -> Setup:
    k_short, k_long = step_counts(dry_run)
    if dry_run:
        return Setup("cpu", torch.float32, TINY_SIZE, TINY_SIZE, k_short, k_long, tiny=True)
    size = (plan["width"], plan["height"])
    return Setup("cuda", torch.bfloat16, *size, k_short, k_long, tiny=False)


def synchronize(setup: Setup) -> None:
    if setup.device == "cuda":
        torch.cuda.synchronize()


# ------------------------------------------------------------------------------ building


def build_components(arch: dict, setup: Setup) -> dict:
    """Every component of `arch` on the device with random weights, in eval mode."""
    built = {}
    with gpu_bench.default_dtype(setup.dtype):
        for name, spec in arch["components"].items():
            spec = gpu_bench.tiny_spec(spec) if setup.tiny else spec
            model = gpu_bench.build_component(spec, setup.device)
            # a tensor a constructor made on the CPU explicitly joins the rest (a no-op otherwise)
            built[name] = model.to(setup.device).eval()
    return built


def vocab_size(model) -> int:
    return model.get_input_embeddings().num_embeddings


def tokenizer_for(family: str, encoder):
    if family == "clip":  # CLIP pads to its encoder's positions (FLUX 77; HiDream's Long-CLIP 248)
        positions = encoder.config.max_position_embeddings
        return build_tokenizer(family, vocab_size(encoder), model_max_length=positions)
    return build_tokenizer(family, vocab_size(encoder))


def glm_processor(encoder):
    """GLM-Image's processor: its image processor and the GLM tokenizer family; the processor
    writes the target grid (`<grid>32 32</grid><grid>16 16</grid><sop>` at 1024^2) into the
    prompt, which fixes the number of prior tokens to draw."""
    from bench.gpu_bench_tokens import FAMILIES

    tokenizer = build_tokenizer("glm", vocab_size(encoder))
    return transformers.GlmImageProcessor(
        image_processor=transformers.GlmImageImageProcessorPil(),
        tokenizer=tokenizer,
        chat_template=FAMILIES["glm"].chat_template,
    )


def text_parts(pipeline_class: str, components: dict) -> dict:
    """The pipeline's tokenizers and processors, built for its text encoders."""
    if pipeline_class == "GlmImagePipeline":
        return {
            "tokenizer": transformers.ByT5Tokenizer(),  # byte-level: no vocabulary file
            "processor": glm_processor(components["vision_language_encoder"]),
        }
    slots = TOKENIZERS.get(pipeline_class, {})
    return {slot: tokenizer_for(family, components[enc]) for slot, (family, enc) in slots.items()}


def left_out(plan: dict) -> dict:
    """The row's optional components that the registry sets to null (ERNIE-Image's prompt
    enhancer), passed as None as the project's loader leaves them out."""
    return {name: None for name, entry in plan["extra_components"].items() if entry is None}


def assemble(plan: dict, arch: dict, setup: Setup):
    """The row's real pipeline class around freshly built components."""
    components = build_components(arch, setup)
    pipeline_class = arch["pipeline_class"]
    scheduler = getattr(diffusers, SCHEDULER).from_config({})
    pipe = getattr(diffusers, pipeline_class)(
        **components,
        **text_parts(pipeline_class, components),
        **left_out(plan),
        **PIPELINE_ARGS.get(pipeline_class, {}),
        scheduler=scheduler,
    )
    pipe.set_progress_bar_config(disable=True)
    if setup.tiny and hasattr(pipe, "default_sample_size"):
        # HiDream-I1 rescales every draw to the area of its default sample size (128 latents a
        # side, 1024^2 with the real 8x VAE, the registry's size); a tiny VAE would make it 256^2
        pipe.default_sample_size = setup.height // pipe.vae_scale_factor
    return pipe, components


# ------------------------------------------------------------------------------ GLM-Image


class CodebookOnly(transformers.LogitsProcessor):
    """Sampling only among the prior codebook's ids: random weights would otherwise end the image
    at once (its end id) or draw ids the DiT cannot embed, and NaN logits would stop sampling.
    The model's forward pass, which is what is timed, runs as it does for a trained model."""

    def __init__(self, codebook: int):
        self.codebook = codebook

    def __call__(self, input_ids, scores):
        forced = torch.full_like(scores, float("-inf"))
        forced[:, : self.codebook] = 0.0
        return forced


class PriorClock(transformers.LogitsProcessor):
    """When each prior token's logits were ready (device synchronised): the first mark ends the
    prefill, each later interval is one decoding step."""

    def __init__(self, setup: Setup):
        self.setup = setup
        self.marks: list[float] = []

    def __call__(self, input_ids, scores):
        synchronize(self.setup)
        self.marks.append(time.perf_counter())
        return scores


def force_prior_length(pipe, parts: Parts, limit_s: float) -> None:
    """GLM-Image's autoregressive stage draws the `max_new_tokens` the pipeline asks for (the
    image's prior tokens, 1,281 at 1024^2), all valid codebook ids, for at most `limit_s`; the
    timing goes to `parts.prior_timing`. Tokens the limit cut off are random codebook ids, so the
    pipeline goes on to the DiT as with a whole prior."""
    model = pipe.vision_language_encoder
    codebook = pipe.transformer.config.prior_vq_quantizer_codebook_size
    generate = model.generate

    def forced(*args, **kwargs):
        wanted = kwargs["max_new_tokens"]
        clock = PriorClock(parts.setup)
        kwargs["min_new_tokens"] = wanted
        kwargs["max_time"] = limit_s
        kwargs["logits_processor"] = transformers.LogitsProcessorList(
            [CodebookOnly(codebook), clock]
        )
        synchronize(parts.setup)
        began = time.perf_counter()
        output = generate(*args, **kwargs)
        synchronize(parts.setup)
        parts.prior_timing = prior_estimate(began, clock.marks, time.perf_counter(), wanted)
        return complete_prior(output, kwargs["input_ids"].shape[1] + wanted, codebook)

    model.generate = forced


def complete_prior(output, length: int, codebook: int):
    """`output` (prompt and drawn tokens) grown to `length` with random codebook ids."""
    missing = length - output.shape[1]
    if missing <= 0:
        return output
    filler = torch.randint(0, codebook, (output.shape[0], missing), device=output.device)
    return torch.cat([output, filler.to(output.dtype)], dim=1)


# ------------------------------------------------------------------------------- timing


class Parts:
    """Seconds spent in named methods during a call (device synchronised around each), whether
    a decoded image held a NaN, and the last prior tokens GLM-Image drew."""

    def __init__(self, setup: Setup):
        self.setup = setup
        self.seconds: dict[str, float] = {}
        self.images_decoded = 0  # by the VAE in the last call
        self.has_nan = False
        self.image_size = (setup.width, setup.height)
        self.prior = None
        self.prior_timing: dict | None = None  # GLM-Image's, from `prior_estimate`

    def reset(self) -> None:
        self.seconds = {}
        self.images_decoded = 0

    def wrap(self, owner, method: str, label: str) -> None:
        original = getattr(owner, method)

        def timed(*args, **kwargs):
            synchronize(self.setup)
            began = time.perf_counter()
            result = original(*args, **kwargs)
            synchronize(self.setup)
            self.seconds[label] = self.seconds.get(label, 0.0) + time.perf_counter() - began
            self.observe(label, result)
            return result

        setattr(owner, method, timed)

    def observe(self, label: str, result) -> None:
        if label == "vae_decode_s":
            sample = result[0] if isinstance(result, tuple) else result.sample
            self.has_nan |= bool(torch.isnan(sample).any() or torch.isinf(sample).any())
            self.image_size = (sample.shape[-1], sample.shape[-2])  # the pixels actually drawn
            self.images_decoded += sample.shape[0]
        elif label == "prior_s":
            self.prior = result[0]


def watch(pipe, setup: Setup) -> Parts:
    parts = Parts(setup)
    parts.wrap(pipe, "encode_prompt", "text_encoding_s")
    parts.wrap(pipe.vae, "decode", "vae_decode_s")
    if hasattr(pipe, "generate_prior_tokens"):
        parts.wrap(pipe, "generate_prior_tokens", "prior_s")
    return parts


def prior_seconds(parts: Parts) -> float:
    """GLM-Image's prior as timed around `generate_prior_tokens`, with the tokens its time limit
    cut off extrapolated (`prior_estimate`); 0 for a row without one."""
    seconds = parts.seconds.get("prior_s", 0.0)
    timing = parts.prior_timing
    if timing is None or timing["complete"]:
        return seconds
    if timing["estimate_s"] is None:
        raise RuntimeError(
            f"GLM-Image's prior drew {timing['tokens_drawn']} of {timing['tokens']} tokens in "
            f"{timing['measured_s']:.1f} s: too few to time a decoding step"
        )
    return seconds + timing["estimate_s"] - timing["measured_s"]


def rounded(figures: dict | None) -> dict | None:
    if figures is None:
        return None
    return {k: _round(v) if isinstance(v, float) else v for k, v in figures.items()}


def call_arguments(plan: dict, setup: Setup, steps: int) -> dict:
    """As the project's generator calls a pipeline (diffusers_generator.call_arguments): the
    plan's `batch` of prompts, one seeded CPU generator each."""
    images = plan.get("batch", 1)
    return {
        **plan["call_kwargs"],
        "prompt": [BENCH_PROMPT] * images,
        "num_inference_steps": steps,
        plan["guidance_arg"]: plan["guidance"],
        "width": setup.width,
        "height": setup.height,
        "generator": [torch.Generator(device="cpu").manual_seed(seed) for seed in range(images)],
    }


def timed_call(pipe, arguments: dict, parts: Parts) -> float:
    parts.reset()
    synchronize(parts.setup)
    began = time.perf_counter()
    with torch.inference_mode():
        pipe(**arguments)
    synchronize(parts.setup)
    return time.perf_counter() - began


def weights_of(components: dict) -> tuple[int, float]:
    """(parameters, GB of weights as built)."""
    tensors = {id(p): p for c in components.values() for p in c.parameters()}.values()
    return sum(p.numel() for p in tensors), sum(p.numel() * p.element_size() for p in tensors) / 1e9


def attention_of(components: dict) -> dict:
    """The attention each component runs: diffusers' dispatch backend, transformers' setting."""
    backend = _active_attention()
    seen = {}
    for name, model in components.items():
        config = getattr(model, "config", None)
        implementation = getattr(config, "_attn_implementation", None)
        seen[name] = implementation if implementation else f"diffusers {backend}"
    return seen


def peak_memory(setup: Setup, weights_gb: float) -> dict:
    """The peaks so far: GPU memory allocated (and its excess over the weights), host RSS."""
    rss_gb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 / 1e9  # Linux: kB
    device_gb = torch.cuda.max_memory_allocated() / 1e9 if setup.device == "cuda" else None
    return {
        "peak_memory_gb": _round(device_gb),
        "above_weights_gb": None if device_gb is None else _round(device_gb - weights_gb),
        "peak_host_rss_gb": _round(rss_gb),
    }


def _round(value, digits: int = 4):
    return None if value is None else round(value, digits)


def time_row(send, plan: dict, dry_run: bool) -> None:
    """Build, warm up and time one row, sending each figure as it is measured."""
    torch.manual_seed(0)
    setup = setup_for(plan, dry_run)
    arch = gpu_bench.load_arch(plan["model_id"], Path(plan["arch_dir"]))
    began = time.perf_counter()
    pipe, components = assemble(plan, arch, setup)
    params, weights_gb = weights_of(components)
    send(
        {
            "build_s": _round(time.perf_counter() - began),
            "params_built": params,
            "weights_gb": _round(weights_gb),
            "dtype": str(setup.dtype).removeprefix("torch."),
            "device": setup.device,
            "resolution": f"{setup.width}x{setup.height}",
            "k_steps": [setup.k_short, setup.k_long],
            "attention": attention_of(components),
        }
    )
    parts = watch(pipe, setup)
    if hasattr(pipe, "vision_language_encoder"):
        force_prior_length(pipe, parts, prior_limit_s(plan.get("cap_s")))
    figures = measure(pipe, plan, setup, parts, send, weights_gb)
    send({**figures, **peak_memory(setup, weights_gb), "has_nan": parts.has_nan})


def timed_pairs(call, setup: Setup) -> dict:
    """The (k_short, k_long) pair timed TIMED_PAIRS times, interleaved so that a drift slows
    both; timed once more when the last pairs are not consistent, the check then made on the
    last TIMED_PAIRS pairs (a one-off disturbance drops out). The parts are the last call's,
    a k_long one."""
    shorts, longs = [], []
    for _ in range(TIMED_PAIRS):
        shorts.append(call(setup.k_short))
        longs.append(call(setup.k_long))
    timed = consistency(shorts, longs)
    if not timed["consistent"]:
        shorts.append(call(setup.k_short))
        longs.append(call(setup.k_long))
        timed = consistency(shorts[-TIMED_PAIRS:], longs[-TIMED_PAIRS:])
        timed["repeated"] = {"short_s": _round(shorts[0]), "long_s": _round(longs[0])}
    return timed


def measure(pipe, plan: dict, setup: Setup, parts: Parts, send, weights_gb: float) -> dict:
    """Warm-up, the two timed calls and (for the cheapest rows) the full step count. The
    warm-up's peak memory is sent at once: a draw's peak (the decode of the whole batch) does
    not depend on its step count, so a row cut off by its cap keeps its memory figure."""
    arguments = lambda steps: call_arguments(plan, setup, steps)  # noqa: E731
    warmup_s = timed_call(pipe, arguments(WARMUP_STEPS), parts)
    # GLM-Image: the warm-up drew the prior tokens (timed there, 'prior_s'); the timed calls
    # reuse them, so their difference is the DiT's steps alone
    prior_s = prior_seconds(parts)
    reuse = {"prior_token_ids": parts.prior} if parts.prior is not None else {}
    warmed = {"warmup_s": _round(warmup_s), "prior": rounded(parts.prior_timing)}
    send(warmed | peak_memory(setup, weights_gb))
    timed = timed_pairs(lambda steps: timed_call(pipe, arguments(steps) | reuse, parts), setup)
    short_s, long_s = min(timed["short_s"]), min(timed["long_s"])
    per_step, call_s = extrapolate(short_s, long_s, setup.k_short, setup.k_long, plan["steps"])
    call_s += prior_s
    images = plan.get("batch", 1)
    image_s = call_s / images  # a batch's call shares its time among its images
    width, height = parts.image_size
    megapixels = width * height / 1e6
    text_s, decode_s = parts.seconds.get("text_encoding_s", 0.0), parts.seconds["vae_decode_s"]
    figures = {
        "t_short_s": _round(short_s),
        "t_long_s": _round(long_s),
        "consistency": timed,
        "batch": images,
        "images_decoded": parts.images_decoded,  # by the last timed call: the batch, drawn
        "gpu_s_per_image": _round(image_s),
        "gpu_s_per_mp": _round(image_s / megapixels),
        "image_size": f"{width}x{height}",
        "parts": {
            "text_encoding_s": _round(text_s),
            "per_step_s": _round(per_step),
            "vae_decode_s": _round(decode_s),
            "prior_s": _round(prior_s) if reuse else None,
            # the call's fixed rest: latents, scheduler set-up, image conversion
            "other_s": _round(long_s - setup.k_long * per_step - text_s - decode_s),
        },
    }
    if plan["full_steps"]:
        send(figures)
        full_s = timed_call(pipe, arguments(plan["steps"]) | reuse, parts) + prior_s
        figures["full_run"] = {
            "steps": plan["steps"],
            "measured_s": _round(full_s),  # the whole call (every image of the batch)
            "extrapolated_s": _round(call_s),
            "extrapolation_error_frac": _round(call_s / full_s - 1),
        }
    return figures


# ------------------------------------------------------------------------------- the plan


def plan_facts(send, model_ids: list[str], arch_dir: str, dry_run: bool, start_method: str) -> None:
    """What the parent needs before the rows: each row's parameter count (its real architecture
    on the meta device: the dry run keeps the real run's order), the device's description and
    whether this child can use CUDA. A config that does not build leaves its row uncounted
    (`count_errors`; the row reports its own failure), not the plan failed."""
    counts, count_errors = {}, {}
    for model_id in model_ids:
        try:
            arch = gpu_bench.load_arch(model_id, Path(arch_dir))
            counts[model_id] = sum(
                gpu_bench.count_params(gpu_bench.build_component(spec))
                for spec in arch["components"].values()
            )
        except Exception as error:
            count_errors[model_id] = f"{type(error).__name__}: {error}"[:300]
    cuda = probe_cuda(dry_run, start_method)  # first: describing the GPU initialises CUDA
    device = describe_device(uses_gpu=bool(cuda.get("cuda_devices")) and not dry_run) | cuda
    send({"counts": counts, "count_errors": count_errors, "device": device})


def probe_cuda(dry_run: bool, start_method: str) -> dict:
    """The CUDA devices this child can use (`cuda_devices`), after making its CUDA context, or
    the error that stopped it (a driver that refuses forked children: the parent then tries
    spawn); not asked in a dry run unless "child-no-cuda" is injected."""
    faults = injected_faults()
    if dry_run and "child-no-cuda" not in faults:
        return {}
    try:
        make_cuda_context(faults, start_method)
    except Exception as error:
        return {
            "cuda_devices": 0,
            "cuda_error": f"{type(error).__name__}: {error}"[:600],
            "cuda_traceback": traceback.format_exception(error)[-6:],
        }
    return {"cuda_devices": 1 if "child-no-cuda" in faults else torch.cuda.device_count()}


def make_cuda_context(faults: set[str], start_method: str) -> None:
    """CUDA initialised in this child. "child-no-cuda" (`FAULT_ENV`): a forkserver child fails
    as a driver refusing it would, a spawned one passes (it sees the one GPU the parent is taken
    to see)."""
    if "child-no-cuda" in faults:
        if start_method == "forkserver":
            raise RuntimeError(f"injected: child-no-cuda ({FAULT_ENV})")
        return
    torch.zeros(1, device="cuda")
    torch.cuda.synchronize()


def describe_device(uses_gpu: bool) -> dict:
    facts = {
        "torch_cuda": torch.version.cuda,
        "diffusers_attention": _active_attention(),
        "default_matmul_precision": torch.get_float32_matmul_precision(),
    }
    if uses_gpu:
        props = torch.cuda.get_device_properties(0)
        facts |= {
            "device_name": props.name,
            "device_memory_gb": round(props.total_memory / 1e9, 1),
            "sdpa_backends": {
                "flash": torch.backends.cuda.flash_sdp_enabled(),
                "mem_efficient": torch.backends.cuda.mem_efficient_sdp_enabled(),
                "cudnn": torch.backends.cuda.cudnn_sdp_enabled(),
                "math": torch.backends.cuda.math_sdp_enabled(),
            },
        }
    return facts


def _active_attention() -> str:
    """diffusers' attention dispatch backend ("native": torch's scaled_dot_product_attention)."""
    from diffusers.models.attention_dispatch import _AttentionBackendRegistry

    return str(_AttentionBackendRegistry.get_active_backend()[0].value)
