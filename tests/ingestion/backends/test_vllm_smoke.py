"""`make gpu-smoke`'s vLLM judging step on vLLM's CPU engine (`make test-vllm`; issue 11): 20
scenes x 14 questions as one generate() against one generate() per image, with the tiny text-only
LM of tiny.build_tiny_text_lm standing in for the vision judge (vLLM's CPU build loads no vision
model). Its own module, so that its engine starts after test_vllm.py's is gone."""

from __future__ import annotations

import os

import pytest

if os.environ.get("QCT2I_REQUIRE_VLLM"):
    import vllm  # noqa: F401  (`make test-vllm`: a missing vLLM is an error, never a skip)
else:
    pytest.importorskip("vllm", reason="vLLM is not installed here; `make test-vllm`")

from bench.gpu_smoke import SmokeConfig, step_judge_vllm

pytestmark = pytest.mark.vllm


def test_the_smoke_scripts_vllm_step_compares_one_call_with_one_call_per_image(tmp_path):
    config = SmokeConfig(
        dry_run=True, out=tmp_path / "smoke.json", work=tmp_path, image_size=64, device="cpu"
    )

    result = step_judge_vllm(config)

    assert result["images"] == 20 and result["questions"] == 20 * 14
    assert result["one_call"]["generate_calls"] == 1
    assert result["per_image"]["generate_calls"] == 20
    # one call: the 14 prompts of an image share its prefix, so most prompt tokens come from the
    # prefix cache; per image the same holds within each call
    assert result["one_call"]["prefix_cache_hit_rate"] > 0.3
    assert result["per_image"]["prefix_cache_hit_rate"] > 0.3
    # the head says yes (logit 1) over no (0) at every position: P(yes) = sigmoid(1) for every
    # question (the tokenizer has one spelling of each), so every answer is yes
    assert result["p_yes_within_0_1"] and result["answered"] == 20 * 14
    assert result["p_yes_min"] == pytest.approx(1 / (1 + 2.718281828459045**-1), abs=1e-4)
    assert result["p_yes_max"] == pytest.approx(result["p_yes_min"], abs=1e-6)
    assert result["agreement_with_transformers"] is None  # no transformers step ran before
