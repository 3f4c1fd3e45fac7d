"""bench/gpu_judge.py's dry run: the judge's mixture-of-experts class on CPU with judge.json's
tiny override, through the project's transformers judge and the batched prefill.

The figures are the judge's entry of the session's architecture-bench dry run (tests/conftest.py
`gpu_bench_dry_run`: `.venv-gpu-bench`, the GPU machine's package set, where a Dagster, DuckDB,
dbt or vLLM import would fail the run and test_gpu_bench_dry_run.py checks no process loaded
pydantic); here, an import of the module in the project's environment, where all of them are
installed, must load none. The token counts below are worked out by hand from Qwen3-VL's
processor rules, not read from the code under test.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e  # the architecture bench's dry run, in its own environment

ROOT = Path(__file__).resolve().parents[2]
FORBIDDEN = ("dagster", "pydantic", "duckdb", "dbt", "vllm")
IMPORT = f"""
import json, sys
import bench.gpu_judge
print(json.dumps(sorted({{m.split(".")[0] for m in sys.modules}} & set({FORBIDDEN!r}))))
"""
# Qwen3-VL's processor: 16-pixel patches merged 2x2, so one image token per 32x32 pixels; the
# judge's budget lowers its 4096^2 top to 1024^2 pixels, so every registry size (1024^2 and up)
# is judged at 1024^2: (1024 / 32)^2 = 1,024 tokens (without it 1328^2 had 1,764, 2048^2 4,096)
IMAGE_TOKENS = {"1024x1024": 1024, "1328x1328": 1024, "2048x2048": 1024}
# <|im_start|> user \n <|vision_start|> [image] <|vision_end|>: the prefix the questions share
PREFIX_TEXT_TOKENS = 5


@pytest.fixture(scope="module")
def dry_run(gpu_bench_dry_run) -> dict:
    judge = gpu_bench_dry_run["document"]["judge"]
    assert judge["status"] == "ok", judge
    return {"figures": judge}


def test_imports_nothing_the_device_lacks():
    done = subprocess.run(
        [sys.executable, "-c", IMPORT], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert json.loads(done.stdout.splitlines()[-1]) == []


def test_builds_the_mixture_of_experts_judge(dry_run):
    figures = dry_run["figures"]
    assert figures["model_class"] == "Qwen3VLMoeForConditionalGeneration"
    assert figures["label"] == "transformers proxy"
    assert "vllm" not in json.dumps(figures["judge_path"]).lower()
    assert (figures["router"]["experts"], figures["router"]["top_k"]) == (8, 2)  # tiny override


def test_real_vocabulary_and_special_ids(dry_run):
    tokenizer = dry_run["figures"]["tokenizer"]
    assert tokenizer["vocab_size"] == 151669  # 151,643 regular + 26 added
    assert tokenizer["model_vocab_size"] == 151936
    assert tokenizer["config_ids"] == {
        "image_token_id": 151655,
        "video_token_id": 151656,
        "vision_start_token_id": 151652,
        "vision_end_token_id": 151653,
    }
    assert tokenizer["tokenizer_ids"] == {
        "<|im_start|>": 151644,
        "<|im_end|>": 151645,
        "<|endoftext|>": 151643,
    }


def test_image_tokens_follow_the_judges_budget(dry_run):
    figures = dry_run["figures"]
    budget = figures["image_budget"]
    assert (budget["min_pixels"], budget["max_pixels"]) == (256**2, 1024**2)
    assert budget["image_tokens_per_image"] == IMAGE_TOKENS["1024x1024"] == 1024
    assert budget["image_tokens_by_registry_size"] == IMAGE_TOKENS
    prefix = figures["judge_path"]["prefix_tokens"]
    assert prefix == IMAGE_TOKENS["1024x1024"] + PREFIX_TEXT_TOKENS


def test_judge_path_times_every_question(dry_run):
    judge_path = dry_run["figures"]["judge_path"]
    assert judge_path["questions"] == judge_path["images"] * 14
    for rate in ("images_per_s", "questions_per_s"):
        assert 0 < judge_path[rate] < math.inf
    # "{question} Answer yes or no." is 10-13 pieces ("Is the background white?" to "Is there
    # any text in the image?"), then <|im_end|> \n <|im_start|> assistant \n
    assert 15 <= judge_path["suffix_tokens_mean"] <= 18


def test_prefill_fills_vllms_cpu_budget(dry_run):
    prefill = dry_run["figures"]["prefill"]
    assert prefill["max_num_batched_tokens"] == 4096  # vLLM's CPU default; 16384 on an H200
    longest = 1024 + PREFIX_TEXT_TOKENS + 18  # the longest question's suffix
    assert prefill["prompts_per_batch"] == 4096 // longest == 3
    assert prefill["batch_tokens"] <= prefill["padded_batch_tokens"] <= 4096
    assert prefill["logits_finite"]
    for rate in ("images_per_s", "questions_per_s_uncached", "questions_per_s_prefix_cached"):
        assert 0 < prefill[rate] < math.inf


def test_router_spreads_tokens_over_experts(dry_run):
    figures = dry_run["figures"]
    router, prefill = figures["router"], figures["prefill"]
    histogram = router["tokens_per_expert"]
    assert len(histogram) == router["experts"]
    assert router["moe_layers"] == 2
    # every position of the padded batch goes through every MoE layer's router, to top_k experts
    assert router["routed_rows"] == prefill["padded_batch_tokens"] * router["moe_layers"]
    assert sum(histogram) == router["routed_rows"] * router["top_k"]
    assert router["experts_hit"] > router["top_k"]
    assert router["min_router_weight_std"] > 0
    assert router["max_expert_share"] < 0.5
    assert not router["is_degenerate"]
