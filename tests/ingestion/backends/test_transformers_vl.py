"""The transformers Qwen3-VL judge and transcriber on a tiny model built in code.

The tiny model's weights are random, so the answer is forced where the test needs one: its output
head is replaced by a zero-weight layer whose bias alone sets the logits, so the expected answer and
p_yes follow by hand from the bias values.
"""

from __future__ import annotations

import math

import pytest
import torch
from PIL import Image

from ingestion.backends.api.interfaces import ImageQuestions, TranscriptionRequest
from ingestion.backends.models.transformers_vl import TransformersJudge, TransformersTranscriber

QUESTIONS = (("q1", "Is there a cat?"), ("q2", "Is the cat red?"), ("q3", "Is the sign legible?"))


@pytest.fixture(scope="module")
def judge(tiny_vl):
    return TransformersJudge(str(tiny_vl), model_name="tiny-qwen3-vl", device="cpu")


@pytest.fixture
def image(tmp_path):
    path = tmp_path / "image.png"
    Image.new("RGB", (32, 32), (200, 10, 10)).save(path)
    return str(path)


def _force(judge, biases: dict[int, float]):
    head = judge.vl.model.lm_head
    forced = torch.nn.Linear(head.in_features, head.out_features, bias=True)
    torch.nn.init.zeros_(forced.weight)
    torch.nn.init.zeros_(forced.bias)
    for token, value in biases.items():
        forced.bias.data[token] = value
    judge.vl.model.lm_head = forced
    return head


def test_one_image_is_encoded_once_for_all_its_questions(judge, image):
    """The image prefix is one forward pass (batch 1) with the vision encoder run once; the
    three questions are one more pass (batch 3) over their suffixes only."""
    calls, vision_calls = [], []
    hook = judge.vl.model.register_forward_hook(
        lambda _m, _a, kwargs, _o: calls.append(tuple(kwargs["input_ids"].shape)),
        with_kwargs=True,
    )
    vision_hook = judge.vl.model.model.visual.register_forward_hook(
        lambda *_: vision_calls.append(1)
    )
    try:
        results = judge.judge(ImageQuestions("p1", "lens", image, QUESTIONS))
    finally:
        hook.remove()
        vision_hook.remove()
    assert len(vision_calls) == 1
    (prefix_batch, prefix_len), (suffix_batch, suffix_len) = calls  # prefix, then suffixes
    assert (prefix_batch, suffix_batch) == (1, 3)
    longest = max(len(judge.vl.tokenizer.encode(f"{q} Answer yes or no.")) for _, q in QUESTIONS)
    assert prefix_len >= 4 and suffix_len >= longest  # 4: <|im_start|>user\n<|vision_start|>...
    assert [r.question_id for r in results] == ["q1", "q2", "q3"]
    assert all(
        r.judge_model == "tiny-qwen3-vl" and r.judge_revision.startswith("local-") for r in results
    )


def _token(judge, text: str) -> int:
    (token,) = judge.vl.tokenizer.encode(text, add_special_tokens=False)
    return token


def test_forced_yes_gives_answer_and_two_way_softmax(judge, image):
    original = _force(judge, {_token(judge, "yes"): 3.0, _token(judge, "no"): 1.0})
    try:
        results = judge.judge(ImageQuestions("p1", "lens", image, QUESTIONS[:2]))
    finally:
        judge.vl.model.lm_head = original
    expected = 1 / (1 + math.exp(-2.0))  # e^3 / (e^3 + e^1)
    for r in results:
        assert (r.answer, r.reason, r.raw_text) == ("yes", None, "yes")
        assert r.p_yes == pytest.approx(expected, rel=1e-5)


def test_forced_no(judge, image):
    original = _force(judge, {_token(judge, "yes"): -1.0, _token(judge, "no"): 0.5})
    try:
        (r,) = judge.judge(ImageQuestions("p1", "lens", image, QUESTIONS[:1]))
    finally:
        judge.vl.model.lm_head = original
    assert r.answer == "no" and r.p_yes == pytest.approx(1 / (1 + math.exp(1.5)), rel=1e-5)


def test_an_output_that_is_neither_yes_nor_no_is_missing_not_no(judge, image):
    other = judge.vl.tokenizer.encode("cat", add_special_tokens=False)[0]
    original = _force(judge, {_token(judge, "yes"): 1.0, _token(judge, "no"): 2.0, other: 5.0})
    try:
        (r,) = judge.judge(ImageQuestions("p1", "lens", image, QUESTIONS[:1]))
    finally:
        judge.vl.model.lm_head = original
    assert r.answer is None and r.p_yes is None
    assert r.raw_text == judge.vl.tokenizer.decode([other]) and "neither yes nor no" in r.reason


def test_transcriber_reports_unavailable_with_a_reason_on_garbage(tiny_vl, image):
    transcriber = TransformersTranscriber(
        str(tiny_vl), model_name="tiny", device="cpu", max_new_tokens=6
    )
    result = transcriber.transcribe(TranscriptionRequest("p1", "lens", image))
    # random weights: whatever it says is not a JSON list of blocks
    assert result.status == "unavailable" and result.blocks == () and result.reason
    assert result.ocr_revision.startswith("local-")


def test_the_judge_loads_straight_onto_its_device(tiny_vl, monkeypatch):
    """`device_map`, not `from_pretrained` then `.to()`: the judge's weights never sit whole in
    host memory on their way to a GPU (about 58 GiB in bf16 for the default judge). The real
    loader runs; the test only records the arguments it was given."""
    from transformers import AutoModelForImageTextToText

    load, given = AutoModelForImageTextToText.from_pretrained, []

    def recorded(*args, **kwargs):
        given.append(kwargs)
        return load(*args, **kwargs)

    monkeypatch.setattr(AutoModelForImageTextToText, "from_pretrained", recorded)
    judge = TransformersJudge(str(tiny_vl), model_name="tiny-qwen3-vl", device="cpu")
    assert [kwargs["device_map"] for kwargs in given] == ["cpu"]
    assert {p.device.type for p in judge.vl.model.parameters()} == {"cpu"}


# The tiny processor's own pixel range is 32^2..64^2 (tiny.build_tiny_qwen3_vl) and one image token
# covers 32x32 pixels (16-pixel patches merged 2x2): 64^2 pixels are 2x2 = 4 tokens, 32^2 one.
@pytest.mark.parametrize(
    ("budget", "side", "grid"), [(None, 64, [1, 4, 4]), (32 * 32, 64, [1, 2, 2])]
)
def test_the_judge_sees_each_image_within_its_budget(tiny_vl, tmp_path, budget, side, grid):
    options = {} if budget is None else {"image_pixels": budget}
    judge = TransformersJudge(str(tiny_vl), device="cpu", **options)
    path = tmp_path / "image.png"
    Image.new("RGB", (side, side), (10, 200, 10)).save(path)
    prefix = judge.encode_prefix(str(path))
    assert prefix["image_grid_thw"].tolist() == [grid]  # patches of 16 px, before the 2x2 merge
    image_tokens = int(
        (prefix["input_ids"] == judge.vl.tokenizer.convert_tokens_to_ids("<|image_pad|>")).sum()
    )
    assert image_tokens == grid[1] * grid[2] // 4


def test_qwen3_vls_own_range_lowered_to_the_budget_gives_every_registry_size_1024_tokens():
    """The real Qwen3-VL processor class at its preprocessor_config.json range (256^2 to 4096^2
    pixels, patch 16, merge 2): every registry size is judged at 1024^2, 1,024 tokens (without
    the budget a 1328^2 image has round(1328 / 32)^2 = 1,764 and a 2048^2 one 64^2 = 4,096)."""
    from transformers import Qwen2VLImageProcessorPil

    from ingestion.backends.api.interfaces import capped_image_size

    own = {"shortest_edge": 256 * 256, "longest_edge": 4096 * 4096}
    processor = Qwen2VLImageProcessorPil(patch_size=16, merge_size=2, size=own)
    budget = capped_image_size(own)
    assert budget == {"shortest_edge": 256 * 256, "longest_edge": 1024 * 1024}
    for side, unbudgeted in ((1024, 1024), (1328, 1764), (1440, 2025), (2048, 4096)):
        image = [Image.new("RGB", (side, side))]
        tokens = [
            int(processor(images=image, **kw)["image_grid_thw"][0].prod()) // 4
            for kw in ({}, {"size": budget})
        ]
        assert tokens == [unbudgeted, 1024], side


@pytest.fixture(scope="module")
def moe_judge(tmp_path_factory):
    """The default judge's class (Qwen3-VL-30B-A3B is a Qwen3VLMoe): 4 experts, 2 per token,
    saved and read back by the judge's own loader (AutoModelForImageTextToText)."""
    from ingestion.backends.tiny.models import build_tiny_qwen3_vl

    folder = build_tiny_qwen3_vl(tmp_path_factory.mktemp("tiny_moe") / "qwen3_vl_moe", experts=4)
    return TransformersJudge(str(folder), model_name="tiny-qwen3-vl-moe", device="cpu")


def test_the_mixture_of_experts_judge_routes_every_token_and_answers(moe_judge, image):
    model = moe_judge.vl.model
    assert type(model).__name__ == "Qwen3VLMoeForConditionalGeneration"
    routers = [m.gate for m in model.modules() if hasattr(m, "gate") and hasattr(m, "experts")]
    assert len(routers) == 2  # both layers sparse
    routed = []
    hooks = [
        r.register_forward_hook(lambda _m, args, _o: routed.append(args[0].shape[0]))
        for r in routers
    ]
    original = _force(moe_judge, {_token(moe_judge, "yes"): 3.0, _token(moe_judge, "no"): 1.0})
    try:
        results = moe_judge.judge(ImageQuestions("p1", "lens", image, QUESTIONS[:2]))
    finally:
        moe_judge.vl.model.lm_head = original
        for hook in hooks:
            hook.remove()
    assert len(routed) == 2 * 2 and all(n > 0 for n in routed)  # 2 passes x 2 layers
    expected = 1 / (1 + math.exp(-2.0))  # e^3 / (e^3 + e^1), as for the dense judge
    for r in results:
        assert (r.answer, r.reason) == ("yes", None)
        assert r.p_yes == pytest.approx(expected, rel=1e-5)
