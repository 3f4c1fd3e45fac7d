"""Turning raw model text into answers and text blocks (pure functions, tested on recorded text)."""

from __future__ import annotations

import json
import math
from collections.abc import Callable

from ingestion.backends.base import ImageQuestions, JudgeIdentity, Judgment

YES = ("yes", "是")
NO = ("no", "否")


def parse_yes_no(text: str) -> tuple[str | None, str | None]:
    """('yes'|'no', None), or (None, reason) for anything else: never a silent 'no'."""
    word = text.strip().strip(".!。！\"'").strip().lower()
    if word in YES:
        return "yes", None
    if word in NO:
        return "no", None
    if not word:
        return None, "empty output"
    return None, f"output {text.strip()[:60]!r} is neither yes nor no"


def p_yes_from_logits(yes_logit: float, no_logit: float) -> float:
    """Softmax over the two answer tokens' logits: P(yes | answer is yes or no)."""
    m = max(yes_logit, no_logit)
    ey, en = math.exp(yes_logit - m), math.exp(no_logit - m)
    return ey / (ey + en)


def p_yes_from_logprobs(logprobs: dict[str, float]) -> float | None:
    """The same from a top-k logprob map (token text -> logprob); None if neither is in it."""
    yes = [v for k, v in logprobs.items() if k.strip().lower() in YES]
    no = [v for k, v in logprobs.items() if k.strip().lower() in NO]
    if not yes and not no:
        return None
    if not no:
        return 1.0
    if not yes:
        return 0.0
    return p_yes_from_logits(max(yes), max(no))


def parse_blocks(text: str) -> tuple[tuple[str, ...] | None, str | None]:
    """Text blocks from a JSON answer: {"blocks": [..]} or a bare list of strings (code fences
    allowed). (blocks, None) or (None, reason)."""
    body = text.strip()
    if body.startswith("```"):
        body = body.strip("`")
        body = body[4:] if body.startswith("json") else body
    try:
        value = json.loads(body)
    except json.JSONDecodeError as e:
        return None, f"not JSON: {e.msg} at char {e.pos}"
    if isinstance(value, dict):
        if "blocks" not in value:
            return None, "JSON object without 'blocks'"
        value = value["blocks"]
    if not isinstance(value, list) or not all(isinstance(b, str) for b in value):
        return None, "'blocks' is not a list of strings"
    return tuple(b.strip() for b in value if b.strip()), None


def judgment_from_text(
    item: ImageQuestions,
    question_id: str,
    raw: str,
    p_yes: Callable[[], float | None],
    judge: JudgeIdentity,
) -> Judgment:
    """One judgment row from the judge's raw answer; `p_yes` is asked only for a yes or a no."""
    answer, reason = parse_yes_no(raw)
    return Judgment(
        item.prompt_id,
        item.model_id,
        question_id,
        answer,
        p_yes() if answer is not None else None,
        raw,
        reason,
        judge.judge_model,
        judge.judge_revision,
        judge.prompt_template_sha,
    )
