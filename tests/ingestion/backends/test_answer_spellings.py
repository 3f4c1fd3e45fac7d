"""P(yes) from every spelling of yes and no (one rule for both judges), and the transformers
judge's cached image prefix.

The rule is written again here as plain sums of exponentials (the code computes it as a logistic
of two log-sum-exps). The judge runs a tiny Qwen3-VL whose vocabulary holds every casing of yes
and no as one token (spelling_models.py); its output head is replaced by a zero-weight layer whose
bias alone sets the logits, so the expected answer and p_yes follow by hand. The vLLM judge's
spelling test is in test_vllm.py (`make test-vllm`).
"""

from __future__ import annotations

import math

import pytest
import torch
from PIL import Image

from ingestion.backends.api.interfaces import ImageQuestions
from ingestion.backends.api.parsing import (
    answer_spellings,
    p_yes_from_answer_scores,
    p_yes_from_token_scores,
)
from ingestion.backends.models.transformers_vl import JUDGE_INSTRUCTION, TransformersJudge

from .spelling_models import EXTRA_SPELLINGS, add_answer_spellings

YES_SPELLINGS = ("yes", "Yes", "YES", " yes", " Yes", " YES")
NO_SPELLINGS = ("no", "No", "NO", " no", " No", " NO")


def _by_sums(yes: list[float], no: list[float]) -> float:
    ey, en = sum(math.exp(v) for v in yes), sum(math.exp(v) for v in no)
    return ey / (ey + en)


@pytest.mark.parametrize(
    ("yes", "no"),
    [([2.0, 1.0, 0.5], [1.8, 1.0]), ([0.0], [0.0, 0.0, 0.0]), ([-3.0, -1.0], [-2.0])],
)
def test_p_yes_sums_every_spelling(yes, no):
    assert p_yes_from_answer_scores(yes, no) == pytest.approx(_by_sums(yes, no), rel=1e-12)


def test_p_yes_is_shift_invariant_so_logits_and_logprobs_agree():
    yes, no = [2.0, 1.0], [1.5, -0.5]
    log_z = 7.25  # any normaliser: logprob = logit - log Z
    shifted = p_yes_from_answer_scores([v - log_z for v in yes], [v - log_z for v in no])
    assert shifted == pytest.approx(p_yes_from_answer_scores(yes, no), rel=1e-12)


def test_p_yes_at_extreme_scores_does_not_overflow():
    assert p_yes_from_answer_scores([1000.0, 999.0], [-1000.0]) == 1.0
    assert p_yes_from_answer_scores([-1000.0], [1000.0]) == 0.0
    assert p_yes_from_answer_scores([-math.inf], [-1.0]) == 0.0
    assert p_yes_from_answer_scores([-math.inf], [-math.inf]) is None
    assert p_yes_from_answer_scores([], []) is None


def test_token_scores_pick_the_spellings_and_ignore_other_tokens():
    spellings = {10: "yes", 11: "yes", 20: "no"}
    scores = {10: 1.0, 11: 0.0, 20: 0.5, 99: 9.0}
    assert p_yes_from_token_scores(scores, spellings) == pytest.approx(_by_sums([1.0, 0.0], [0.5]))


@pytest.fixture(scope="module")
def spelling_vl(tmp_path_factory):
    from ingestion.backends.tiny.models import build_tiny_qwen3_vl

    folder = build_tiny_qwen3_vl(tmp_path_factory.mktemp("spellings") / "qwen3_vl")
    return add_answer_spellings(folder, "AutoModelForImageTextToText")


@pytest.fixture(scope="module")
def judge(spelling_vl):
    return TransformersJudge(str(spelling_vl), model_name="tiny-spellings", device="cpu")


@pytest.fixture
def image(tmp_path):
    path = tmp_path / "image.png"
    Image.new("RGB", (64, 48), (200, 10, 10)).save(path)
    return str(path)


def _id(judge, text: str) -> int:
    (token,) = judge.vl.tokenizer.encode(text, add_special_tokens=False)
    return token


def test_every_casing_of_yes_and_no_is_an_answer_token(judge):
    assert set(EXTRA_SPELLINGS) < set(YES_SPELLINGS + NO_SPELLINGS)
    expected = {_id(judge, t): "yes" for t in YES_SPELLINGS} | {
        _id(judge, t): "no" for t in NO_SPELLINGS
    }
    assert answer_spellings(judge.vl.tokenizer) == expected == judge.answer_tokens


def test_capitalised_yes_is_a_yes_and_p_yes_sums_every_spelling(judge, image):
    """Qwen answers 'Yes': the answer is yes, and p_yes counts 'Yes', ' yes', 'YES' ... as yes,
    not only the lower-case 'yes' against 'no'."""
    logits = {"Yes": 2.0, " yes": 1.0, "YES": 0.5, "no": 1.8, " No": 1.0}
    head = judge.vl.model.lm_head
    forced = torch.nn.Linear(head.in_features, head.out_features, bias=True)
    torch.nn.init.zeros_(forced.weight)
    torch.nn.init.zeros_(forced.bias)
    for text, value in logits.items():
        forced.bias.data[_id(judge, text)] = value
    judge.vl.model.lm_head = forced
    try:
        results = judge.judge(ImageQuestions("p1", "lens", image, (("q1", "Is there a cat?"),)))
    finally:
        judge.vl.model.lm_head = head
    # every spelling not named above has logit 0
    expected = _by_sums(
        [logits.get(t, 0.0) for t in YES_SPELLINGS], [logits.get(t, 0.0) for t in NO_SPELLINGS]
    )
    lower_case_only = _by_sums([0.0], [1.8])  # 'yes' vs 'no' alone: the old rule
    (r,) = results
    assert (r.answer, r.raw_text, r.reason) == ("yes", "Yes", None)
    assert r.p_yes == pytest.approx(expected, rel=1e-5)
    assert abs(expected - lower_case_only) > 0.3


def test_cached_prefix_gives_the_logits_of_each_question_asked_alone(judge, image):
    """Independent route: each question's whole prompt (chat template, image and question) in its
    own plain forward pass, no cache, no padding, every position's logits."""
    questions = (("q1", "Is there a cat?"), ("q2", "Is the cat red on a blue chair?"), ("q3", "hi"))
    cached = judge.next_token_logits(ImageQuestions("p1", "lens", image, questions))
    alone = []
    for _, question in questions:
        inputs = judge.vl.inputs(image, [JUDGE_INSTRUCTION.format(question=question)])
        with torch.inference_mode():
            alone.append(judge.vl.model(**inputs).logits[0, -1].float())
    alone = torch.stack(alone)
    assert cached.shape == alone.shape == (3, judge.vl.model.lm_head.out_features)
    assert (alone[0] - alone[1]).abs().max() > 1e-3  # the questions' logits differ
    torch.testing.assert_close(cached, alone, rtol=1e-4, atol=1e-5)
