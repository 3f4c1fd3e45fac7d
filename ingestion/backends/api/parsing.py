"""Turning raw model text into answers and text blocks (pure functions, tested on recorded text)."""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Callable, Mapping

from ingestion.backends.api.interfaces import ImageQuestions, JudgeIdentity, Judgment

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


def answer_spellings(tokenizer) -> dict[int, str]:
    """token id -> 'yes' or 'no' for every single-token spelling of the answer words in this
    vocabulary: each word of YES/NO lower-case, Capitalised and UPPER, with and without a leading
    space ('yes', 'Yes', 'YES', ' yes', ...; '是', ' 是'). Qwen answers "Yes" as often as "yes",
    so P(yes) that read only 'yes' and 'no' would measure casing, not belief. `tokenizer` is any
    object with `encode(text, add_special_tokens=False)` (transformers and vLLM both)."""
    found: dict[int, str] = {}
    for answer, words in (("yes", YES), ("no", NO)):
        for word in words:
            for cased in dict.fromkeys((word, word.capitalize(), word.upper())):
                for text in (cased, " " + cased):
                    ids = tokenizer.encode(text, add_special_tokens=False)
                    if len(ids) == 1:
                        found.setdefault(ids[0], answer)
    return found


def _log_sum_exp(values: list[float]) -> float:
    top = max(values)
    if top == -math.inf:
        return top
    return top + math.log(sum(math.exp(v - top) for v in values))


def p_yes_from_answer_scores(yes: list[float], no: list[float]) -> float | None:
    """P(yes | the answer is a yes or a no) from the scores of every spelling of each word:
    sum_{t in yes} e^{s_t} / sum_{t in yes or no} e^{s_t}, as a two-way softmax of the two
    log-sum-exps. Scores are logits or logprobs (they differ by a constant that cancels). One
    rule for both judges. A word none of whose spellings was scored (a top-k map that left it out)
    counts as probability 0; None when neither word was scored."""
    if not yes and not no:
        return None
    if not no:
        return 1.0
    if not yes:
        return 0.0
    log_yes, log_no = _log_sum_exp(yes), _log_sum_exp(no)
    if log_yes == log_no == -math.inf:
        return None
    margin = log_yes - log_no  # the logistic of the margin, without overflow either way
    if margin >= 0:
        return 1.0 / (1.0 + math.exp(-margin))
    return math.exp(margin) / (1.0 + math.exp(margin))


def p_yes_from_token_scores(
    scores: Mapping[int, float], spellings: Mapping[int, str]
) -> float | None:
    """The rule above over the tokens `answer_spellings` found: `scores` is token id -> logit or
    logprob (a full logit row, or the logprobs vLLM returned for exactly those ids)."""
    yes = [scores[t] for t, a in spellings.items() if a == "yes" and t in scores]
    no = [scores[t] for t, a in spellings.items() if a == "no" and t in scores]
    return p_yes_from_answer_scores(yes, no)


def p_yes_from_logprobs(logprobs: Mapping[str, float]) -> float | None:
    """The rule above from a top-k logprob map keyed by token text (a vocabulary with no
    single-token spelling, where only the decoded top-k is known); None if no answer is in it."""
    yes = [v for k, v in logprobs.items() if k.strip().lower() in YES]
    no = [v for k, v in logprobs.items() if k.strip().lower() in NO]
    return p_yes_from_answer_scores(yes, no)


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
        return None, f"not JSON at char {e.pos}: {e.msg}"
    if isinstance(value, dict):
        if "blocks" not in value:
            return None, "JSON object without 'blocks'"
        value = value["blocks"]
    if not isinstance(value, list) or not all(isinstance(b, str) for b in value):
        return None, "'blocks' is not a list of strings"
    return tuple(b.strip() for b in value if b.strip()), None


def read_transcription(raw: str, finished: bool) -> tuple[tuple[str, ...] | None, str | None]:
    """(blocks, None) for a complete, parseable OCR answer; else (None, reason): `truncated` when
    generation hit its token limit before the end of the answer (what it wrote is a prefix, even if
    it happens to parse), `unparseable: <why>` when it ended but is not a block list. Either way
    the transcription is `unavailable` and leaves Eq. 3, counted, never silently dropped."""
    if not finished:
        return None, "truncated"
    blocks, why = parse_blocks(raw)
    if blocks is None:
        return None, f"unparseable: {why}"
    return blocks, None


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


# A Thinking judge (Qwen3-VL-*-Thinking) writes `<think>` reasoning `</think>` and then its answer
# after a blank line; its chat template opens the reasoning in the prompt. The answer is read after
# the reasoning: the prompt, the reasoning and ANSWER_AFTER_REASONING, then the next token as an
# Instruct judge's (docs/gpu.md, "Thinking or Instruct").
THINK_START, THINK_END = "<think>", "</think>"
ANSWER_AFTER_REASONING = THINK_END + "\n\n"
REASONING_UNCLOSED = "reasoning ended without </think>"


def opened_for_reasoning(prompt: str) -> str:
    """The prompt with the reasoning opened after its assistant turn (`<think>\\n`), unless its
    chat template opened it already (Qwen3-VL Thinking's does)."""
    return prompt if prompt.rstrip().endswith(THINK_START) else prompt + THINK_START + "\n"


def over_budget(budget: int) -> str:
    """The reason of an answer whose reasoning its budget cut off: missing, never 'no'."""
    return f"reasoning over budget ({budget} tokens)"


def judgment_after_reasoning(
    item: ImageQuestions,
    question_id: str,
    reasoning: str,
    unanswered: str | None,
    raw: str,
    p_yes: Callable[[], float | None],
    judge: JudgeIdentity,
) -> Judgment:
    """A Thinking judge's row, its reasoning kept. `unanswered` (over_budget, REASONING_UNCLOSED):
    no answer was read, so the row is missing with that reason (`raw` unused); else `raw` and
    `p_yes` are what was read after the reasoning, judged as an Instruct judge's answer is."""
    if unanswered is not None:
        row = judgment_from_text(item, question_id, "", p_yes, judge)
        return dataclasses.replace(row, reason=unanswered, reasoning=reasoning)
    row = judgment_from_text(item, question_id, raw, p_yes, judge)
    return dataclasses.replace(row, reasoning=reasoning)
