"""A Thinking judge's throughput on the borrowed GPU (issue 35), beside the Instruct judge's figures
of `bench/gpu_judge.py`, which calls `thinking_figures` with its random-weight model.

Qwen3-VL-30B-A3B-Thinking has the Instruct checkpoint's architecture (the same config, other
weights), so the same model times it: the project's `TransformersJudge` built with a reasoning
budget, which per image generates every question's reasoning as one batch (up to the budget,
stopping at `</think>`), then answers those whose reasoning ended after it. Random weights never
write `</think>`, so every question reasons to its budget and none is answered: the figures are
those of a question that spends its whole budget (a real judge that stops earlier is faster, and
pays one forward pass of prompt + reasoning for its answer). The reasoning tokens are counted as
`generate` returns them (each row's new tokens up to its padding).

GPU plan: one image of 14 questions, 32 reasoning tokens each (448 decoded tokens in 32 steps of
batch 14, a few seconds on an H200), after the Instruct figures have warmed the model. The dry
run: 2 of the questions, 4 tokens each, on the tiny model (its vision tower still sees the
1024^2 image once per question, as this backend's reasoning batch does: 14 took 20 s on CPU).
"""

from __future__ import annotations

import time
import traceback

from ingestion.backends.api.interfaces import ImageQuestions

GPU_BUDGET, DRY_BUDGET = 32, 4
DRY_QUESTIONS = 2
LABEL = (
    "transformers proxy: the project's TransformersJudge with a reasoning budget (Thinking): "
    "reasoning batched per image, then the answers of the reasonings that ended"
)


def counting_new_tokens(model, pad_id: int):
    """Wraps `model.generate` (an instance attribute, removed by the caller): returns the list
    each call appends its count of generated tokens to (padding after a row's stop left out)."""
    real, counts = model.generate, []

    def generate(**kwargs):
        out = real(**kwargs)
        new = out[:, kwargs["input_ids"].shape[1] :]
        counts.append(int((new != pad_id).sum()))
        return out

    model.generate = generate
    return counts


def thinking_figures(
    model, processor, device: str, item: ImageQuestions, hub_repo_id: str, dry_run: bool
) -> dict:
    """`measured_figures`, status "ok"; or a failed status with its traceback, so that a failure
    here never costs the Instruct judge's figures measured before it (one judge entry)."""
    try:
        figures = measured_figures(model, processor, device, item, hub_repo_id, dry_run)
    except Exception as error:  # recorded, not raised: see the docstring
        return {
            "status": f"failed: {type(error).__name__}: {error}"[:500],
            "traceback": traceback.format_exc()[-4000:],
        }
    return {"status": "ok", **figures}


def measured_figures(
    model, processor, device: str, item: ImageQuestions, hub_repo_id: str, dry_run: bool
) -> dict:
    """One image's questions through the Thinking judge: seconds, questions and reasoning tokens
    per second, how many reasonings ended and how many the budget cut off."""
    from bench.gpu_judge import project_judge, synchronize

    budget = DRY_BUDGET if dry_run else GPU_BUDGET
    if dry_run:
        item = ImageQuestions(
            item.prompt_id, item.model_id, item.image_path, item.questions[:DRY_QUESTIONS]
        )
    name = hub_repo_id.replace("-Instruct", "-Thinking")
    judge = project_judge(model, processor, device, name, reasoning_budget=budget)
    counts = counting_new_tokens(model, processor.tokenizer.pad_token_id)
    try:
        synchronize(device)
        started = time.perf_counter()
        judgments = judge.judge(item)
        synchronize(device)
        seconds = time.perf_counter() - started
    finally:
        del model.generate  # back to the class's method
    reasoning_tokens = sum(counts)
    return {
        "label": LABEL,
        "hub_repo_id": name,
        "reasoning_budget": budget,
        "images": 1,
        "questions": len(judgments),
        "answered": sum(j.answer is not None for j in judgments),
        "cut_by_budget": sum(
            (j.reason or "").startswith("reasoning over budget") for j in judgments
        ),
        "reasoning_tokens": reasoning_tokens,
        "seconds": seconds,
        "questions_per_s": len(judgments) / seconds,
        "reasoning_tokens_per_s": reasoning_tokens / seconds,
        "prompt_template_sha": judge.identity.prompt_template_sha,
    }
