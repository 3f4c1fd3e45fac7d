"""A Thinking judge (issue 35) through the transformers backend, on a tiny Qwen3-VL built in code
with a Thinking checkpoint's tokenizer (`<think>`, `</think>`, a template that opens the
reasoning): the real classes, loaders and `generate`, random weights.

Random weights would rarely close the reasoning, so both outcomes are forced: the output head is
replaced by a bias-only layer (every position's logits are the bias: the answer after the
reasoning and its p_yes follow by hand), and for one question the model's generation config
carries a `sequence_bias` (+100 to " cat" right after that question's `<think>\\n`, then to
`</think>` after " cat"), which `generate` applies while the judge reasons but not to the answer's
forward pass. That question reasons " cat" and answers; the other reasons "yes yes" (the head's
greedy token) until its budget of 2 cuts it off: missing, never "no".
"""

from __future__ import annotations

import json
import math

import pytest
import torch
from PIL import Image

from ingestion.backends.api.interfaces import ImageQuestions
from ingestion.backends.drivers.runs import read_rows, run_adjudication
from ingestion.backends.models.transformers_vl import TransformersJudge

QUESTIONS = (("q1", "Is there a cat?"), ("q2", "Is the cat red?"))
BUDGET = 2


@pytest.fixture(scope="module")
def thinking_vl(tmp_path_factory):
    from ingestion.backends.tiny.models import build_tiny_qwen3_vl

    return build_tiny_qwen3_vl(tmp_path_factory.mktemp("thinking") / "qwen3_vl", thinking=True)


@pytest.fixture(scope="module")
def judge(thinking_vl):
    judge = TransformersJudge(
        str(thinking_vl), model_name="tiny-thinking", device="cpu", reasoning_budget=BUDGET
    )
    tokenizer = judge.vl.tokenizer
    token = {t: tokenizer.convert_tokens_to_ids(t) for t in ("yes", "no", "</think>")}
    (token["cat"],) = tokenizer.encode(" cat", add_special_tokens=False)
    # the head: logits yes 3, no 1, every other token 0, at every position
    head = judge.vl.model.lm_head
    forced = torch.nn.Linear(head.in_features, head.out_features, bias=True)
    torch.nn.init.zeros_(forced.weight)
    torch.nn.init.zeros_(forced.bias)
    forced.bias.data[token["yes"]], forced.bias.data[token["no"]] = 3.0, 1.0
    judge.vl.model.lm_head = forced
    # q1 alone: after its prompt (question suffix, reasoning opened) " cat", then </think>
    q1_tail = judge.question_suffix.replace("{question}", QUESTIONS[0][1])
    anchor = tokenizer.encode(q1_tail, add_special_tokens=False)
    judge.vl.model.generation_config.sequence_bias = [
        [[*anchor, token["cat"]], 100.0],
        [[*anchor, token["cat"], token["</think>"]], 100.0],
    ]
    return judge


@pytest.fixture
def bundle(tmp_path):
    (tmp_path / "images").mkdir()
    Image.new("RGB", (32, 32), (200, 10, 10)).save(tmp_path / "images" / "p1.png")
    rows = {
        "images": [{"prompt_id": "p1", "model_id": "lens", "path": "images/p1.png"}],
        "questions": [{"prompt_id": "p1", "question_id": q, "text": t} for q, t in QUESTIONS],
    }
    for name, lines in rows.items():
        (tmp_path / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lines))
    return tmp_path


def test_the_answer_is_read_after_the_reasoning_and_a_cut_reasoning_is_missing(judge, bundle):
    """The whole run (run_adjudication, the bundle's rows): q1's reasoning ended, so its answer
    is the token after `</think>\\n\\n`, p_yes = e^3 / (e^3 + e^1); q2's reasoning hit the budget:
    answer and p_yes null with the reason, never "no". Both keep their reasoning. Guards against
    P(yes) read at the reasoning's first token (the Instruct rule, which a Thinking model does not
    answer at), a cut answer counted as "no", and the reasoning lost."""
    assert judge.prompt_template.endswith("<|im_start|>assistant\n<think>\n")

    run_adjudication(judge, bundle, "lens", log=lambda _: None)

    q1, q2 = read_rows(bundle / "judgments.jsonl")
    assert (q1["question_id"], q1["answer"], q1["raw_text"], q1["reason"]) == (
        "q1",
        "yes",
        "yes",
        None,
    )
    assert q1["p_yes"] == pytest.approx(1 / (1 + math.exp(-2.0)), rel=1e-5)
    assert q1["reasoning"] == " cat"
    assert (q2["question_id"], q2["answer"], q2["p_yes"]) == ("q2", None, None)
    assert q2["reason"] == "reasoning over budget (2 tokens)"
    assert q2["reasoning"] == "yesyes"  # the head's greedy token, twice, then the budget ended it
    assert (
        q1["prompt_template_sha"] == q2["prompt_template_sha"] == judge.identity.prompt_template_sha
    )


def test_only_the_finished_reasonings_are_asked_for_an_answer(judge, tmp_path):
    """One `generate` for all questions' reasoning (batch 2), then one forward pass for the
    answers of those whose reasoning ended (batch 1: q1). Guards against answering a cut
    reasoning (its answer would be made up after a reasoning the model had not finished)."""
    path = tmp_path / "image.png"
    Image.new("RGB", (32, 32), (10, 200, 10)).save(path)
    batches = []
    hook = judge.vl.model.register_forward_hook(
        lambda _m, _a, kwargs, _o: batches.append(tuple(kwargs["input_ids"].shape)),
        with_kwargs=True,
    )
    try:
        results = judge.judge(ImageQuestions("p2", "lens", str(path), QUESTIONS))
    finally:
        hook.remove()
    # generate's forward passes: the prompts, then one decoding step per new token (2 tokens)
    assert [b[0] for b in batches] == [2, 2, 1]
    assert [r.answer for r in results] == ["yes", None]


def test_the_thinking_judges_identity_is_neither_the_instruct_judges_nor_another_budgets(
    judge, thinking_vl, tiny_vl
):
    """Same checkpoint and image budget: answering at once, or reasoning up to another budget, is
    another judge (its answers would be resumed as this one's, or mixed with it). An Instruct
    checkpoint (no `</think>`) asked to reason is refused rather than left to reason forever."""
    instruct = TransformersJudge(str(thinking_vl), model_name="tiny-thinking", device="cpu")
    longer = TransformersJudge(
        str(thinking_vl), model_name="tiny-thinking", device="cpu", reasoning_budget=BUDGET + 1
    )
    identities = {judge.identity, instruct.identity, longer.identity}
    assert len(identities) == 3
    assert len({i.prompt_template_sha for i in identities}) == 3
    with pytest.raises(ValueError, match="no </think> token"):
        TransformersJudge(str(tiny_vl), device="cpu", reasoning_budget=BUDGET)
