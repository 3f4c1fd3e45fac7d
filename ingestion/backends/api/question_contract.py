"""The question-writing contract (METHOD 13): the JSON schema and instruction a writer is given,
and the validation of what it returns, like an imported bundle's questions.

The writer backend returns raw text (an LLM under a JSON schema, or recorded outputs); this module
parses it, checks the schema, then runs the bundle's own `questions` rules
(`ingestion.bundle.read_questions_file`: known capability tags, parents inside the prompt, no
self-parents, acyclic) plus "at least one root". A prompt that fails is rejected as a whole with
every reason kept. Accepted questions then go through a rule-based audit that flags likely
non-atomic questions (a conjunction joining two requirements) and questions a compliant image
would answer "no" (negations): flags are recorded for review, they do not reject.
"""

from __future__ import annotations

import json
import re
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from ingestion.backends.api.ids import UnsafeIdError, validate_id
from ingestion.backends.api.interfaces import QuestionWriteRequest

QUESTION_SCHEMA = {
    "type": "object",
    "properties": {
        "questions": {
            "type": "array",
            "minItems": 1,
            "items": {
                "type": "object",
                "properties": {
                    "id": {"type": "string"},
                    "text": {"type": "string"},
                    "tag": {"type": "string"},
                    "parents": {"type": "array", "items": {"type": "string"}},
                    "entity": {"type": ["string", "null"]},
                    "text_target": {"type": ["string", "null"]},
                },
                "required": ["id", "text", "tag", "parents"],
            },
        }
    },
    "required": ["questions"],
}

INSTRUCTION = (
    "Turn the prompt into yes/no questions about the image. Rules: Target Yes (an image that "
    "follows the prompt answers yes), Atomicity (one visual requirement per question), Coverage "
    "(every salient constraint), Tag Validity (tag = the capability of the question's core "
    "predicate, one of: {tags}). Give parents (ids of questions this one presupposes), the entity "
    "key it is about, and text_target for rendered text. Answer JSON only.\nPrompt: {prompt}"
)


def writer_prompt(tokenizer, tags: list[str], text: str) -> str:
    """The instruction for one prompt in the LLM's own chat template, as a user turn, generation
    prompt added, thinking off (Qwen3's `enable_thinking=False`: the answer is the JSON alone;
    templates without that switch ignore it)."""
    instruction = INSTRUCTION.format(tags=", ".join(tags), prompt=text)
    return tokenizer.apply_chat_template(
        [{"role": "user", "content": instruction}],
        add_generation_prompt=True,
        tokenize=False,
        enable_thinking=False,
    )


@dataclass(frozen=True)
class Construction:
    prompt_id: str
    raw_text: str
    questions: tuple[dict, ...] = ()
    reasons: tuple[str, ...] = ()
    audit_flags: tuple[tuple[str, str], ...] = field(default=())

    @property
    def accepted(self) -> bool:
        return not self.reasons


def _schema_problems(value) -> list[str]:
    if not isinstance(value, dict) or not isinstance(value.get("questions"), list):
        return ["the output is not an object with a 'questions' list"]
    if not value["questions"]:
        return ["the output has no questions"]
    problems = []
    for i, q in enumerate(value["questions"], 1):
        if not isinstance(q, dict):
            problems.append(f"question {i} is not an object")
            continue
        for key in ("id", "text", "tag"):
            if not isinstance(q.get(key), str) or not q[key].strip():
                problems.append(f"question {i}: '{key}' must be a non-empty string")
        parents = q.get("parents")
        if not isinstance(parents, list) or not all(isinstance(p, str) for p in parents):
            problems.append(f"question {i}: 'parents' must be a list of strings")
        for key in ("entity", "text_target"):
            if q.get(key) is not None and not isinstance(q[key], str):
                problems.append(f"question {i}: '{key}' must be a string or null")
    return problems


def _rows(prompt_id: str, questions: list[dict]) -> list[dict]:
    def qid(local: str) -> str:
        return f"{prompt_id}-{validate_id(local, 'question id')}"

    return [
        {
            "prompt_id": prompt_id,
            "question_id": qid(q["id"]),
            "text": q["text"].strip(),
            "capability": q["tag"],
            "parents": [qid(p) for p in q["parents"]],
            "entity": q.get("entity"),
            "text_target": q.get("text_target"),
        }
        for q in questions
    ]


def _bundle_rule_problems(rows: list[dict], capabilities: set[str] | None) -> list[str]:
    from ingestion.bundle import BundleError, read_questions_file
    from ingestion.bundle.format import write_bundle

    with tempfile.TemporaryDirectory() as tmp:
        write_bundle(Path(tmp), {"questions": rows})
        try:
            read_questions_file(Path(tmp) / "questions.jsonl", capabilities)
        except BundleError as e:
            return [p.reason for p in e.problems]
    return []


_CONJUNCTION = re.compile(r"\s(and|or|but)\s|[,;]\s*(and|or)\s|和|并且|以及|或者")
_NEGATION = re.compile(r"\b(not|no|never|without|none)\b|n't\b|没有|不是|不|无")


def audit(rows: list[dict]) -> list[tuple[str, str]]:
    """(question_id, flag) for questions that look non-atomic or not phrased for a 'yes'."""
    flags = []
    for row in rows:
        text = row["text"].lower()
        if _CONJUNCTION.search(text):
            flags.append((row["question_id"], "non-atomic: a conjunction joins two requirements"))
        if _NEGATION.search(text):
            flags.append((row["question_id"], "non-yes: negated, a compliant image may answer no"))
    return flags


def construct_questions(
    request: QuestionWriteRequest, raw: str, capabilities: set[str] | None = None
) -> Construction:
    """Accepted questions (bundle rows) or the reasons for rejecting the prompt."""
    try:
        value = json.loads(raw)
    except json.JSONDecodeError as e:
        return Construction(request.prompt_id, raw, reasons=(f"malformed JSON: {e.msg}",))
    problems = _schema_problems(value)
    if problems:
        return Construction(request.prompt_id, raw, reasons=tuple(problems))
    try:
        rows = _rows(request.prompt_id, value["questions"])
    except UnsafeIdError as e:
        return Construction(request.prompt_id, raw, reasons=(str(e),))
    problems = _bundle_rule_problems(rows, capabilities)
    if all(row["parents"] for row in rows):
        problems.append("no root question: every question has a parent")
    if problems:
        return Construction(request.prompt_id, raw, reasons=tuple(problems))
    return Construction(request.prompt_id, raw, tuple(rows), audit_flags=tuple(audit(rows)))
