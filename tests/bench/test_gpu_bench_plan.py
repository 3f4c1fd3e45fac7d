"""The architecture bench's arithmetic and plumbing (bench/gpu_bench_run.py, gpu_bench_tokens.py,
gpu_bench_child.py), with figures worked out by hand; the whole dry run is
tests/bench/test_gpu_bench_dry_run.py."""

from __future__ import annotations

import math
import multiprocessing
import os
import time

import pytest

from bench import gpu_bench, gpu_bench_run, gpu_bench_tokens

# ------------------------------------------------------------------------------ arithmetic


def test_a_rows_steps_are_extrapolated_from_two_calls():
    # 2 steps took 1.0 s and 8 steps 2.2 s: 0.2 s a step, 0.6 s fixed; 50 steps = 0.6 + 10.0
    per_step, image_s = gpu_bench_run.extrapolate(1.0, 2.2, 2, 8, 50)
    assert per_step == pytest.approx(0.2)
    assert image_s == pytest.approx(10.6)
    # fewer steps than the long call (FLUX.2-Klein draws 4): 0.6 + 0.8
    assert gpu_bench_run.extrapolate(1.0, 2.2, 2, 8, 4)[1] == pytest.approx(1.4)


def test_a_pair_is_consistent_only_beyond_its_measured_spread():
    """Guards against a step extrapolated from noise: the stand-in's dry run called rows "ok" at
    -272 to -9,213 GPU-s/MP because its k_long call timed faster than its k_short one."""
    # k_short 1.0 and 1.1 s, k_long 2.0 and 2.3 s: spread 0.1 + 0.3 = 0.4 s, margin 2.0 - 1.0
    timed = gpu_bench_run.consistency([1.0, 1.1], [2.0, 2.3])
    assert (timed["margin_s"], timed["spread_s"], timed["consistent"]) == (1.0, 0.4, True)
    # k_long 1.2 and 1.9 s: margin 0.2 within the spread 0.1 + 0.7 = 0.8
    assert not gpu_bench_run.consistency([1.0, 1.1], [1.2, 1.9])["consistent"]
    # k_long faster than k_short (a negative step), however steady
    assert not gpu_bench_run.consistency([2.0, 2.0], [1.5, 1.5])["consistent"]
    # identical calls: a margin of 0 is not beyond a spread of 0
    assert not gpu_bench_run.consistency([1.0, 1.0], [1.0, 1.0])["consistent"]


def _ended_row(**changes) -> dict:
    record = {
        "status": "ok",
        "t_short_s": 1.0,
        "t_long_s": 2.2,
        "gpu_s_per_image": 10.6,
        "gpu_s_per_mp": 10.1,
        "parts": {"per_step_s": 0.2},
        "consistency": gpu_bench_run.consistency([1.0, 1.05], [2.2, 2.25]),
    }
    return record | changes


@pytest.mark.parametrize(
    ("changes", "reason"),
    [
        ({"gpu_s_per_mp": -272.0}, "gpu_s_per_mp is -272.0, not a positive finite number"),
        ({"gpu_s_per_image": math.nan}, "gpu_s_per_image is nan, not a positive finite number"),
        ({"t_long_s": math.inf}, "t_long_s is inf, not a positive finite number"),
        ({"parts": {"per_step_s": 0.0}}, "per_step_s is 0.0, not a positive finite number"),
        ({"gpu_s_per_mp": None}, "gpu_s_per_mp is None, not a positive finite number"),
        ({"consistency": None}, "no consistency check of its timed calls"),
        (
            {"consistency": gpu_bench_run.consistency([1.0, 1.2], [1.1, 1.15])},
            "inconsistent: k_long [1.1, 1.15] s against k_short [1.0, 1.2] s, 0.1 s apart "
            "within their spread of 0.25 s",
        ),
    ],
)
def test_an_ok_row_without_usable_figures_becomes_a_failed_row_with_why(changes, reason):
    """Guards against an "ok" row whose figure is negative, NaN, infinite, zero, missing or
    noise reaching `qct2i calibrate` as a cost."""
    record = _ended_row(**changes)
    gpu_bench_run.judge_row(record)
    assert record["status"] == f"failed: {reason}"
    assert {k: record[k] for k in changes} == changes  # its figures kept for the reader


def test_a_row_with_usable_figures_stays_ok_and_other_statuses_are_left_alone():
    """Guards against the check failing good rows, or renaming a timeout or an error."""
    record = _ended_row()
    gpu_bench_run.judge_row(record)
    assert record["status"] == "ok"
    timeout = _ended_row(status="timeout", gpu_s_per_mp=None)
    gpu_bench_run.judge_row(timeout)
    assert timeout["status"] == "timeout"


def test_children_without_the_gpu_the_parent_sees_are_told_apart():
    """Guards against a run whose forked children cannot start CUDA timing nothing (every row
    "no GPU") instead of switching to spawn, and against a dry run asking for a GPU."""
    no_gpu = gpu_bench_run.children_without_gpu
    assert no_gpu(1, False, {"cuda_devices": 0}) == "children see no GPU; the parent sees 1"
    assert no_gpu(8, False, {"cuda_devices": 8}) is None
    assert no_gpu(0, False, {"cuda_devices": 1}) is None  # no nvidia-smi, CUDA works
    assert no_gpu(0, False, {"cuda_devices": 0}).startswith("no GPU: neither")
    assert no_gpu(0, True, {}) is None  # a dry run's children are not asked


def test_an_unknown_injected_fault_is_refused(monkeypatch):
    """Guards against a misspelt test hook silently forcing nothing."""
    monkeypatch.setenv(gpu_bench_run.FAULT_ENV, "child-no-cuda, forkserver-crsh")
    with pytest.raises(ValueError, match="forkserver-crsh"):
        gpu_bench_run.injected_faults()
    monkeypatch.setenv(gpu_bench_run.FAULT_ENV, "child-no-cuda,crash-before-first-row")
    assert gpu_bench_run.injected_faults() == {"child-no-cuda", "crash-before-first-row"}


def test_a_cap_is_the_jobs_share_of_the_time_left():
    # 400 s left for jobs estimated at 10, 30 and 60 s: the first gets a tenth
    assert gpu_bench_run.cap_share(400.0, [10.0, 30.0, 60.0]) == pytest.approx(40.0)
    assert gpu_bench_run.cap_share(-5.0, [1.0, 1.0]) == 0.0


def test_a_short_budget_gives_a_job_its_estimate_while_the_time_lasts():
    """Guards against the proportional cut that lost run 5: 50 s left for 10 + 30 + 60 s of
    estimates is a share of 5 s for the first job, half what it needs; it gets its 10 s. The
    last job gets the time left, never more."""
    assert gpu_bench_run.cap_share(50.0, [10.0, 30.0, 60.0]) == pytest.approx(10.0)
    assert gpu_bench_run.cap_share(20.0, [60.0]) == pytest.approx(20.0)
    # 60 s for the three, each using its whole cap: 10, 30, then the 20 s left
    assert _caps(60.0, [10.0, 30.0, 60.0], [None, None, None]) == pytest.approx([10, 30, 20])


def _caps(budget: float, estimates: list[float], used: list[float | None]) -> list[float]:
    """Each job's cap in turn when job i takes used[i] seconds (None: all of its cap)."""
    caps, left = [], budget
    for i, taken in enumerate(used):
        cap = gpu_bench_run.cap_share(left, estimates[i:])
        caps.append(cap)
        left -= cap if taken is None else min(taken, cap)
    return caps


def test_caps_add_up_within_the_budget_and_time_saved_goes_to_later_jobs():
    estimates = [10.0, 30.0, 60.0]
    caps = _caps(100.0, estimates, [None, None, None])
    assert caps == pytest.approx([10.0, 30.0, 60.0])
    assert sum(caps) == pytest.approx(100.0)
    # the first job ends after 2 s: the 8 s it left go to the others, 30:60 -> 32 and 66 s
    assert _caps(100.0, estimates, [2.0, None, None]) == pytest.approx([10.0, 98 / 3, 196 / 3])


def test_the_plan_writes_each_jobs_least_cap():
    """The JSON's `cap_plan`: each job's cap were every job before it to use all of its own,
    the same rule as the run's: 60 s for estimates 10, 30 and 60 s gives 10, 30 and 20."""
    jobs = [gpu_bench_run.Job(name, "x:y", (), s) for name, s in (("a", 10), ("b", 30), ("c", 60))]
    planned = gpu_bench_run.planned_caps(jobs, 60.0)
    assert [(p["job"], p["estimate_s"], p["cap_s"]) for p in planned] == [
        ("a", 10, 10.0),
        ("b", 30, 30.0),
        ("c", 60, 20.0),
    ]


def test_a_rows_estimate_counts_its_start_build_and_steps():
    plan = {"steps": 50, "full_steps": False, "pipeline_class": "FluxPipeline"}
    # 10 B parameters, 1 + 2 x (2 + 8) steps (the pair timed twice):
    # 18 + 10 x 21 x 0.02 = 22.2 s
    assert gpu_bench_run.row_estimate_s(plan, 10_000_000_000, (2, 8)) == pytest.approx(22.2)
    # drawn at its full 50 steps too: 18 + 10 x 71 x 0.02 = 32.2 s
    full = plan | {"full_steps": True}
    assert gpu_bench_run.row_estimate_s(full, 10_000_000_000, (2, 8)) == pytest.approx(32.2)
    glm = plan | {"pipeline_class": "GlmImagePipeline"}  # and 105 s for its prior tokens
    assert gpu_bench_run.row_estimate_s(glm, 10_000_000_000, (2, 8)) == pytest.approx(127.2)
    # two images a call: 18 + 10 x 21 x 2 x 0.02 = 26.4 s
    assert gpu_bench_run.row_estimate_s(plan | {"batch": 2}, 10**10, (2, 8)) == pytest.approx(26.4)
    # the judge claims a tenth of the whole: 90 s of rows -> 10 s
    assert gpu_bench_run.judge_estimate_s([40.0, 50.0]) == pytest.approx(10.0)


# ---------------------------------------------------------------------------------- order


def _plans(*ids: str) -> list[dict]:
    return [{"model_id": i, "pipeline_class": "X", "steps": 4, "full_steps": False} for i in ids]


def test_rows_run_cheapest_first_with_flux2_dev_last_and_the_two_cheapest_in_full():
    counts = {"flux2-dev": 1, "big": 30, "small": 8, "tie-b": 10, "tie-a": 10}
    ordered = gpu_bench_run.order_plans(_plans(*counts), counts)
    assert [p["model_id"] for p in ordered] == ["small", "tie-a", "tie-b", "big", "flux2-dev"]
    assert [p["full_steps"] for p in ordered] == [True, True, False, False, False]


def test_registry_rows_without_a_config_are_not_built_and_say_why():
    plans, unbuilt = gpu_bench_run.select_rows(gpu_bench.registry_rows(), gpu_bench.ARCH_DIR, None)
    assert len(plans) == 11
    why = "not built: no diffusers pipeline class (backend {!r} brings its own code)"
    assert {r["model_id"]: r["status"] for r in unbuilt} == {
        "hidream-o1": why.format("hidream_o1"),
        "lens": why.format("lens"),
    }
    qwen = next(p for p in plans if p["model_id"] == "qwen-image")
    # the registry's call settings reach the child: Qwen-Image's true CFG and negative prompt
    assert (qwen["guidance_arg"], qwen["guidance"], qwen["steps"]) == ("true_cfg_scale", 4.0, 50)
    assert qwen["call_kwargs"] == {"negative_prompt": " "}
    ernie = next(p for p in plans if p["model_id"] == "ernie-image")
    assert ernie["extra_components"] == {"pe": None, "pe_tokenizer": None}


def test_a_batch_is_capped_by_the_rows_max_batch_size():
    plans, _ = gpu_bench_run.select_rows(
        gpu_bench.registry_rows(), gpu_bench.ARCH_DIR, ["glm-image", "flux1-dev"], batch=4
    )
    # GLM-Image's registry row draws one image a call (its prior is seeded from the batch)
    assert {plan["model_id"]: plan["batch"] for plan in plans} == {"glm-image": 1, "flux1-dev": 4}


def test_a_batch_call_asks_for_that_many_images_each_with_its_own_seed():
    import torch

    from bench import gpu_bench_child

    (plan,), _ = gpu_bench_run.select_rows(
        gpu_bench.registry_rows(), gpu_bench.ARCH_DIR, ["flux1-dev"], batch=3
    )
    arguments = gpu_bench_child.call_arguments(plan, gpu_bench_child.setup_for(plan, True), 2)
    assert len(arguments["prompt"]) == 3
    assert [g.initial_seed() for g in arguments["generator"]] == [0, 1, 2]
    assert all(isinstance(g, torch.Generator) for g in arguments["generator"])


def test_tiny_overrides_merge_into_nested_configs():
    base = {
        "text_config": {"hidden": 4096, "rope": {"theta": 1e6, "section": [16, 24, 24]}},
        "a": 1,
    }
    tiny = {"text_config": {"hidden": 16, "rope": {"section": [1, 1, 2]}}, "a": [2]}
    assert gpu_bench.merge_config(base, tiny) == {
        "text_config": {"hidden": 16, "rope": {"theta": 1e6, "section": [1, 1, 2]}},
        "a": [2],
    }
    assert base["text_config"]["hidden"] == 4096  # the real config is left as it was


# ----------------------------------------------------------------------------- tokenizers


def test_special_tokens_keep_their_real_ids_unless_the_vocabulary_is_tiny():
    specials = {"<a>": 151643, "<b>": 151645, "<c>": 151644}
    assert gpu_bench_tokens.special_ids(specials, 151936) == specials
    # 512 rows: the top three, in the real ids' order
    assert gpu_bench_tokens.special_ids(specials, 512) == {"<a>": 509, "<c>": 510, "<b>": 511}


def test_qwen_image_template_counts_the_tokens_its_pipeline_drops():
    """QwenImagePipeline drops the first 34 tokens of its prompt template (the system part,
    `prompt_template_encode_start_idx = 34`, counted by Qwen's real tokenizer); the word-level
    stand-in counts the same 34, so the transformer sees the prompt's own tokens."""
    tokenizer = gpu_bench_tokens.build_tokenizer("qwen", 152064)
    system = (
        "<|im_start|>system\nDescribe the image by detailing the color, shape, size, texture, "
        "quantity, text, spatial relationships of the objects and background:<|im_end|>\n"
        "<|im_start|>user\n"
    )
    ids = tokenizer(system)["input_ids"]
    assert len(ids) == 34
    assert ids[0] == 151644 and ids[-5] == 151645  # <|im_start|> ... <|im_end|> at real ids


def test_clip_and_t5_tokenizers_pad_and_close_as_the_real_ones():
    clip = gpu_bench_tokens.build_tokenizer("clip", 49408, model_max_length=77)
    ids = clip(gpu_bench_tokens.BENCH_PROMPT, padding="max_length", max_length=77)["input_ids"]
    words = len(gpu_bench_tokens.prompt_words()) - 1  # distinct words, less the newline
    assert len(ids) == 77 and ids[0] == 49406 and ids[-1] == 49407
    assert len(set(ids[1:-1])) >= words  # every distinct word of the prompt its own id
    t5 = gpu_bench_tokens.build_tokenizer("t5", 32128)
    assert t5("zebras juggle")["input_ids"] == [2, 2, 1]  # words not in the prompt, then </s>


# ---------------------------------------------------------------------------- GLM-Image


def test_glm_prior_tokens_are_drawn_from_the_codebook_whatever_the_logits():
    import torch

    from bench.gpu_bench_child import CodebookOnly

    scores = torch.full((2, 80), float("nan"))
    forced = CodebookOnly(64)(None, scores)
    assert torch.all(forced[:, :64] == 0) and torch.all(forced[:, 64:] == float("-inf"))
    draws = torch.multinomial(forced.softmax(-1), 200, replacement=True)
    assert int(draws.max()) < 64


def test_glm_priors_time_limit_is_a_share_of_its_cap_at_most_150_s():
    assert gpu_bench_run.prior_limit_s(None) == 150.0
    assert gpu_bench_run.prior_limit_s(100.0) == pytest.approx(55.0)  # 0.55 of the cap
    assert gpu_bench_run.prior_limit_s(400.0) == 150.0


def test_a_whole_prior_is_its_measured_time():
    # asked 3, drew 3: prefill 0.5 s, steps 0.1 and 0.2 s, ended 0.05 s after the last logits
    timing = gpu_bench_run.prior_estimate(10.0, [10.5, 10.6, 10.8], 10.85, 3)
    assert timing["complete"] and timing["tokens_drawn"] == 3
    assert timing["measured_s"] == pytest.approx(0.85)
    assert timing["estimate_s"] == pytest.approx(0.85)
    assert timing["prefill_s"] == pytest.approx(0.5)
    assert timing["step_ms_first"] == pytest.approx(150.0)  # median of 100 and 200 ms


def test_a_cut_prior_adds_its_missing_tokens_at_the_timed_steps_rate():
    # flat 0.1 s steps (tokens 1-4), 5 of 10 drawn in 1.45 s: 5 more at 0.1 s = 1.95 s
    flat = gpu_bench_run.prior_estimate(0.0, [1.0, 1.1, 1.2, 1.3, 1.4], 1.45, 10)
    assert not flat["complete"] and flat["tokens_drawn"] == 5
    assert flat["estimate_s"] == pytest.approx(1.95)
    assert flat["slope_ms_per_token"] is None  # fitted slope ~0: the later half's mean
    # steps growing by 0.1 s a token (token k costs 0.1 k s), fitted on tokens 4-6 without
    # residual: tokens 7-9 cost 0.7 + 0.8 + 0.9 = 2.4 s beyond the 2.1 s measured
    growing = gpu_bench_run.prior_estimate(0.0, [0.0, 0.1, 0.3, 0.6, 1.0, 1.5, 2.1], 2.1, 10)
    assert growing["slope_ms_per_token"] == pytest.approx(100.0)
    assert growing["estimate_s"] == pytest.approx(4.5)
    # a slope within the noise: tokens 5-8 took 0.1, 0.3, 0.1, 0.35 s, slope 0.055 s a token
    # against a standard error of 0.0606 (by hand): not extrapolated, the mean 0.2125 s is
    noisy_marks = [0.0, 0.2, 0.4, 0.6, 0.8, 0.9, 1.2, 1.3, 1.65]
    noisy = gpu_bench_run.prior_estimate(0.0, noisy_marks, 1.7, 12)
    assert noisy["slope_ms_per_token"] is None
    assert noisy["estimate_s"] == pytest.approx(1.7 + 3 * 0.2125)
    # steps shrinking (a warm-up ending): no negative slope, the later half's mean (0.15 s)
    shrinking = gpu_bench_run.prior_estimate(0.0, [0.0, 0.4, 0.7, 0.9, 1.0], 1.0, 7)
    assert shrinking["slope_ms_per_token"] is None
    assert shrinking["estimate_s"] == pytest.approx(1.0 + 2 * 0.15)


def test_a_prior_cut_after_one_token_has_no_estimate():
    timing = gpu_bench_run.prior_estimate(0.0, [2.0], 2.01, 1281)
    assert timing["estimate_s"] is None and timing["tokens_drawn"] == 1


@pytest.fixture(scope="module")
def tiny_glm():
    """The tiny GLM-Image row as the dry run builds it: the real pipeline class, CPU."""
    from bench import gpu_bench_child

    (plan,), _ = gpu_bench_run.select_rows(
        gpu_bench.registry_rows(), gpu_bench.ARCH_DIR, ["glm-image"]
    )
    setup = gpu_bench_child.setup_for(plan, dry_run=True)
    pipe, _ = gpu_bench_child.assemble(plan, gpu_bench.load_arch("glm-image"), setup)
    return plan, setup, pipe


def test_a_prior_cut_by_its_time_limit_still_feeds_the_dit_a_whole_grid(tiny_glm):
    """A limit of 0 s stops `generate` after its first token (transformers checks the time
    after each); the rest of the grid is random codebook ids and the pipeline draws its image.
    One token times no decoding step, so the row's prior figure is refused, with why."""
    from bench import gpu_bench_child

    plan, setup, pipe = tiny_glm
    parts = gpu_bench_child.watch(pipe, setup)
    gpu_bench_child.force_prior_length(pipe, parts, limit_s=0.0)
    gpu_bench_child.timed_call(pipe, gpu_bench_child.call_arguments(plan, setup, 1), parts)
    timing = parts.prior_timing
    assert timing["tokens_drawn"] == 1 and not timing["complete"] and timing["tokens"] > 1
    # the DiT's ids: the target grid at 32 pixels a token (1x1 at 32^2), upsampled 2x a side,
    # though the one token drawn was the first of the preview grid's
    codebook = pipe.transformer.config.prior_vq_quantizer_codebook_size
    assert tuple(parts.prior.shape) == (1, 4)
    assert int(parts.prior.min()) >= 0 and int(parts.prior.max()) < codebook
    assert not parts.has_nan and parts.image_size == (32, 32)
    with pytest.raises(RuntimeError, match=r"drew 1 of \d+ tokens .* too few to time"):
        gpu_bench_child.prior_seconds(parts)


def test_a_rows_memory_is_sent_after_its_warm_up_before_the_timed_calls():
    """Guards against a row cut off by its cap losing its memory figure (the device run of
    batch 4 rows with too small caps kept none): the warm-up's message carries the peaks."""
    from bench import gpu_bench_child

    (plan,), _ = gpu_bench_run.select_rows(
        gpu_bench.registry_rows(), gpu_bench.ARCH_DIR, ["flux2-klein-4b"]
    )
    setup = gpu_bench_child.setup_for(plan, dry_run=True)
    pipe, components = gpu_bench_child.assemble(plan, gpu_bench.load_arch("flux2-klein-4b"), setup)
    _, weights_gb = gpu_bench_child.weights_of(components)
    sent: list[dict] = []
    parts = gpu_bench_child.watch(pipe, setup)
    gpu_bench_child.measure(pipe, plan, setup, parts, sent.append, weights_gb)
    warmed = sent[0]
    assert "warmup_s" in warmed and "t_short_s" not in warmed  # before any timed call
    assert warmed["peak_host_rss_gb"] > 0
    # no GPU here: the device's peak and its excess over the weights are None, not made up
    assert warmed["peak_memory_gb"] is None and warmed["above_weights_gb"] is None


# --------------------------------------------------------------------- bf16 on the device


def test_every_real_architecture_is_built_in_bf16_from_the_start():
    """The GPU run builds each component under a bf16 default dtype (FLUX.2-dev's 113 GB could
    not be built in float32 and cast); on the meta device every floating parameter must come out
    bf16, with no component left in float32."""
    import torch

    from bench import gpu_bench_child

    setup = gpu_bench_child.Setup("meta", torch.bfloat16, 1024, 1024, 2, 8, tiny=False)
    for model_id in gpu_bench.arch_ids():
        if model_id == "judge":
            continue
        built = gpu_bench_child.build_components(gpu_bench.load_arch(model_id), setup)
        dtypes = {
            (name, p.dtype)
            for name, model in built.items()
            for p in model.parameters()
            if p.is_floating_point()
        }
        assert {dtype for _, dtype in dtypes} == {torch.bfloat16}, (model_id, dtypes)
    assert torch.get_default_dtype() == torch.float32  # restored after building


# -------------------------------------------------------------------------------- children


def report_then_sleep(send, seconds: float) -> None:
    send({"build_s": 1.5})
    time.sleep(seconds)


def report_then_fail(send) -> None:
    send({"build_s": 0.5})
    raise RuntimeError("no such class")


def exit_at_once(send) -> None:
    os._exit(3)  # as a child killed for memory: no last word


def report_a_status(send) -> None:
    send({"status": "partial: 3 of 4", "images_per_s": 2.0})


@pytest.fixture(scope="module")
def context():
    return multiprocessing.get_context("forkserver")


def _run(context, function: str, args: tuple = (), cap_s: float = 60.0) -> dict:
    entry = f"{__name__}:{function}"
    record, modules = gpu_bench_run.supervise(context, entry, args, cap_s)
    assert "pytest" in modules  # the child's own module list came back
    return record


def test_a_child_past_its_cap_is_killed_and_keeps_what_it_sent(context):
    began = time.monotonic()
    record, modules = gpu_bench_run.supervise(
        context, f"{__name__}:report_then_sleep", (60.0,), 1.5
    )
    assert record["status"] == "timeout" and record["build_s"] == 1.5
    assert modules == []  # killed: it never sent its last message
    assert time.monotonic() - began < 15


def test_a_failing_child_reports_its_exception(context):
    record = _run(context, "report_then_fail")
    assert record["status"] == "error: RuntimeError: no such class"
    assert record["build_s"] == 0.5 and "RuntimeError" in record["traceback"][-1]


def test_a_child_that_dies_silently_is_an_error_with_its_exit_code(context):
    record, _ = gpu_bench_run.supervise(context, f"{__name__}:exit_at_once", (), 30.0)
    assert record["status"] == "error: the child exited with code 3"


def test_a_jobs_own_status_is_kept(context):
    record = _run(context, "report_a_status")
    assert record["status"] == "partial: 3 of 4" and record["images_per_s"] == 2.0
    assert math.isfinite(record["wall_s"])


def test_an_ended_run_is_ok_only_when_every_built_row_and_the_judge_are():
    rows = [{"status": "ok"}, {"status": "not built: no pipeline"}]
    document = {"generators": rows, "judge": {"status": "not run: bench/gpu_judge.py missing"}}
    assert gpu_bench_run.all_ok(document)
    assert not gpu_bench_run.all_ok(document | {"judge": {"status": "timeout"}})
    assert not gpu_bench_run.all_ok(document | {"generators": [*rows, {"status": "timeout"}]})


def test_the_judge_times_the_image_processor_the_device_would_load(monkeypatch):
    """Guards against the bench timing the PIL image processor on a device whose torchvision
    (0.26) makes the real judge load the torchvision one, or naming a class transformers lacks."""
    import sys
    import types

    import transformers

    from bench import gpu_judge

    spec = gpu_bench.load_arch("judge")["image_processor"]
    monkeypatch.setitem(sys.modules, "torchvision", None)  # absent: import fails
    assert gpu_judge.image_processor_class(spec) == "Qwen2VLImageProcessorPil"
    monkeypatch.setitem(sys.modules, "torchvision", types.ModuleType("torchvision"))
    assert gpu_judge.image_processor_class(spec) == "Qwen2VLImageProcessor"
    for name in (spec["class"], spec["torchvision_class"]):
        assert name in dir(transformers), name
