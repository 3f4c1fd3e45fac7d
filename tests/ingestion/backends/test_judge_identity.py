"""The judge's identity is part of "already judged": a judge change answers every image again, a
rerun of the same judge skips them all, and every judgment row carries one judge's identity.

Judges are tiny Qwen3-VL models built in code (tests/conftest.py `tiny_vl`, and a second one built
here with other weights), run through `run_adjudication` on a bundle of K images.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections import Counter
from pathlib import Path

import pytest
from PIL import Image

from ingestion.backends.api.interfaces import ImageQuestions, JudgeIdentity, QuestionJudge
from ingestion.backends.drivers.runs import judged_images_of, read_rows, run_adjudication
from ingestion.backends.models.transformers_vl import TransformersJudge

K = 3
QUESTIONS = (("q1", "Is there a cat?"), ("q2", "Is the cat red?"))
# The prompt the tiny model's chat template (tiny.QWEN_CHAT_TEMPLATE) renders around a question,
# written out by hand: its hash, with the image budget (1024^2 pixels) on a line of its own, is
# the judge's prompt_template_sha.
RENDERED_TEMPLATE = (
    "<|im_start|>user\n<|vision_start|><|image_pad|><|vision_end|>"
    "{question} Answer yes or no.<|im_end|>\n<|im_start|>assistant\n"
)


@pytest.fixture(scope="module")
def tiny_vl_other(tmp_path_factory):
    """A second tiny judge: same architecture, other weights, another folder."""
    from ingestion.backends.tiny.models import build_tiny_qwen3_vl

    return build_tiny_qwen3_vl(tmp_path_factory.mktemp("tiny_other") / "qwen3_vl", seed=1)


@pytest.fixture(scope="module")
def judge_a(tiny_vl):
    return TransformersJudge(str(tiny_vl), model_name="tiny-a", device="cpu")


@pytest.fixture(scope="module")
def judge_other_model(tiny_vl_other):
    return TransformersJudge(str(tiny_vl_other), device="cpu")  # model name: its folder


@pytest.fixture(scope="module")
def judge_other_revision(tiny_vl):
    return TransformersJudge(str(tiny_vl), model_name="tiny-a", revision="rev-2", device="cpu")


@pytest.fixture
def bundle(tmp_path) -> Path:
    """K images of generator `lens`, each with the two questions."""
    (tmp_path / "images").mkdir()
    images, questions = [], []
    for i in range(K):
        prompt = f"p{i}"
        Image.new("RGB", (32, 32), (40 * i, 100, 200)).save(tmp_path / "images" / f"{prompt}.png")
        images.append({"prompt_id": prompt, "model_id": "lens", "path": f"images/{prompt}.png"})
        questions += [{"prompt_id": prompt, "question_id": q, "text": t} for q, t in QUESTIONS]
    for name, rows in (("images", images), ("questions", questions)):
        (tmp_path / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return tmp_path


def _rows(bundle: Path) -> list[dict]:
    return list(read_rows(bundle / "judgments.jsonl"))


def _answered(rows: list[dict], judge: TransformersJudge) -> Counter:
    """(prompt, model, question) -> how many rows of this judge answer it."""
    return Counter(
        (r["prompt_id"], r["model_id"], r["question_id"])
        for r in rows
        if (r["judge_model"], r["judge_revision"], r["prompt_template_sha"])
        == dataclasses.astuple(judge.identity)
    )


EVERY_QUESTION = Counter({(f"p{i}", "lens", q): 1 for i in range(K) for q, _ in QUESTIONS})


def _run(judge, bundle, judge_id="default"):
    return run_adjudication(judge, bundle, "lens", log=lambda _: None, judge_id=judge_id)


def test_the_identity_is_model_revision_and_rendered_prompt_hash(
    judge_a, judge_other_model, judge_other_revision, tiny_vl_other
):
    sha = hashlib.sha256(f"{RENDERED_TEMPLATE}\nimage_pixels=1048576".encode()).hexdigest()[:16]
    assert judge_a.identity.prompt_template_sha == sha
    assert judge_a.identity.judge_model == "tiny-a"
    assert judge_a.identity.judge_revision.startswith("local-")
    assert judge_other_model.identity.judge_model == str(tiny_vl_other)
    assert judge_other_revision.identity.judge_revision == "rev-2"
    assert len({judge_a.identity, judge_other_model.identity, judge_other_revision.identity}) == 3


@pytest.mark.parametrize("other", ["judge_other_model", "judge_other_revision"])
def test_a_new_judge_answers_every_image_and_the_old_one_then_skips_all(
    bundle, judge_a, other, request
):
    judge_b = request.getfixturevalue(other)
    first = _run(judge_a, bundle)
    assert (first.done, first.skipped) == (K, 0)
    second = _run(judge_b, bundle, judge_id="b")
    assert (second.done, second.skipped) == (K, 0)  # B answers all K, none skipped for A's rows
    again = _run(judge_a, bundle)
    assert (again.done, again.skipped) == (0, K)
    rows = _rows(bundle)
    assert len(rows) == 2 * K * len(QUESTIONS)
    assert _answered(rows, judge_a) == EVERY_QUESTION
    assert _answered(rows, judge_b) == EVERY_QUESTION
    # every row is one judge's: the identity of A or of B, never a blend of the two
    identities = {(r["judge_id"], JudgeIdentity.of_row(r)) for r in rows}
    assert identities == {("default", judge_a.identity), ("b", judge_b.identity)}


class _Wrapped(QuestionJudge):
    """A judge that delegates to `inner`, optionally crashing once it has judged `crash_after`
    images, or declaring another identity than the one its judgments carry."""

    def __init__(self, inner, crash_after: int | None = None, claims: JudgeIdentity | None = None):
        self.inner, self.left = inner, crash_after
        self.identity = claims or inner.identity

    def judge(self, item: ImageQuestions):
        if self.left == 0:
            raise RuntimeError("crash")
        if self.left is not None:
            self.left -= 1
        return self.inner.judge(item)


def test_a_new_judge_after_a_crash_answers_every_image_not_only_the_rest(
    bundle, judge_a, judge_other_model
):
    """The old resume key (prompt, generator) let B judge only the image A missed, leaving a
    judgment set that mixed two judges."""
    with pytest.raises(RuntimeError, match="crash"):
        _run(_Wrapped(judge_a, crash_after=K - 1), bundle)
    assert len(_answered(_rows(bundle), judge_a)) == (K - 1) * len(QUESTIONS)
    stats = _run(judge_other_model, bundle, judge_id="other")
    assert (stats.done, stats.skipped) == (K, 0)
    assert _answered(_rows(bundle), judge_other_model) == EVERY_QUESTION
    resumed = _run(judge_a, bundle)  # A resumes where it crashed: its one missing image
    assert (resumed.done, resumed.skipped) == (1, K - 1)
    assert _answered(_rows(bundle), judge_a) == EVERY_QUESTION


def test_rows_without_a_full_identity_are_nobodys(bundle, judge_a):
    """Rows written before the identity was recorded (no prompt_template_sha) do not count as
    this judge's: it answers those images again."""
    identity = dataclasses.asdict(judge_a.identity)
    legacy = {**identity, "prompt_template_sha": None}
    rows = [
        {"prompt_id": f"p{i}", "model_id": "lens", "question_id": "q1", **legacy} for i in range(K)
    ]
    assert judged_images_of(judge_a.identity, rows) == set()
    assert judged_images_of(judge_a.identity, [{**rows[0], **identity}]) == {("p0", "lens")}


def test_a_judgment_stamped_with_another_identity_is_refused(bundle, judge_a):
    impostor = _Wrapped(judge_a, claims=JudgeIdentity("tiny-b", "rev-b", "0" * 16))
    with pytest.raises(ValueError, match="running judge's identity"):
        _run(impostor, bundle)
    assert _rows(bundle) == []
