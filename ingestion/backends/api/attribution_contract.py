"""Capability attribution by a language model (METHOD 13a, the question contract's Tag Validity
rule): the instruction, the taxonomy's definitions it carries, the JSON schema of the answer, and
the validation of what an attributor returns.

A question gets the one capability of its core predicate. The model reads every key of the
taxonomy with its scope (`seeds/capabilities.csv`, column `covers`: METHOD 13a's table, "the same
definitions go into an attributing model's prompt"; a taxonomy without the column gives the keys
only) and answers `{"capability": "<key>"}`. An answer that is not that JSON, or names a key the
taxonomy lacks, is a failure with its reason: the question keeps the label it had, never a guess.
"""

from __future__ import annotations

import csv
import json
from dataclasses import dataclass
from pathlib import Path

from ingestion.backends.api.interfaces import AttributionRequest, template_sha

# The answer is this JSON object; a scoring backend reads the key's tokens after ANSWER_PREFIX and
# up to ANSWER_SUFFIX (the closing quote tells "state" from a longer key that starts with it).
ANSWER_PREFIX = '{"capability": "'
ANSWER_SUFFIX = '"}'

INSTRUCTION = (
    "Give the yes/no question about an image the one capability its core predicate checks "
    "(Tag Validity): the single visual requirement a 'yes' asserts, not the topic of the prompt "
    "it came from. A question is logical_constraints only when the requirement itself is an "
    "absence, exclusion or negation. The capabilities, each with what it covers:\n"
    "{definitions}\n"
    'Answer JSON only: {{"capability": "<one key above>"}}.\n'
    "Question ({language}): {question}"
)


def read_definitions(seed: Path) -> dict[str, str]:
    """Each capability key of the taxonomy seed with its scope (`covers`; "" where the seed has no
    such column or leaves it empty), in the seed's order."""
    with Path(seed).open(newline="", encoding="utf-8") as handle:
        return {
            row["capability"]: (row.get("covers") or "").strip() for row in csv.DictReader(handle)
        }


def definitions_block(definitions: dict[str, str]) -> str:
    return "\n".join(
        f"- {key}: {covers}" if covers else f"- {key}" for key, covers in definitions.items()
    )


def instruction_text(definitions: dict[str, str], request: AttributionRequest) -> str:
    return INSTRUCTION.format(
        definitions=definitions_block(definitions),
        language=request.language,
        question=" ".join(request.text.split()),
    )


def attribution_schema(keys: list[str]) -> dict:
    """The answer's JSON schema: one capability, a key of the taxonomy (a decoder constrained to
    it cannot name another)."""
    return {
        "type": "object",
        "properties": {"capability": {"type": "string", "enum": list(keys)}},
        "required": ["capability"],
        "additionalProperties": False,
    }


def instruction_sha(definitions: dict[str, str]) -> str:
    """What makes two attributions by one model different evidence besides the model: the
    instruction with the taxonomy's definitions filled in (question left as a placeholder) and the
    schema. Part of the cache key and the attributor's identity."""
    template = INSTRUCTION.replace("{definitions}", definitions_block(definitions))
    schema = json.dumps(attribution_schema(list(definitions)), sort_keys=True)
    return template_sha(f"{template}\n{schema}")


def attribution_prompt(tokenizer, definitions: dict[str, str], request: AttributionRequest) -> str:
    """The instruction for one question in the LLM's own chat template, as a user turn,
    generation prompt added, thinking off (as `question_contract.writer_prompt`)."""
    return tokenizer.apply_chat_template(
        [{"role": "user", "content": instruction_text(definitions, request)}],
        add_generation_prompt=True,
        tokenize=False,
        enable_thinking=False,
    )


@dataclass(frozen=True)
class Attribution:
    """One question's attribution: `capability` a taxonomy key, or None with the reason."""

    capability: str | None
    raw_text: str
    reason: str | None


def parse_attribution(raw: str, keys: set[str]) -> Attribution:
    """The capability the raw answer names, or None and why (malformed JSON, not the schema's
    object, a key the taxonomy lacks)."""
    try:
        value = json.loads(raw)
    except json.JSONDecodeError as error:
        return Attribution(None, raw, f"malformed JSON: {error.msg}")
    if not isinstance(value, dict) or not isinstance(value.get("capability"), str):
        return Attribution(None, raw, "the output is not an object with a 'capability' string")
    capability = value["capability"].strip()
    if capability not in keys:
        return Attribution(None, raw, f"unknown capability {capability!r} (not in the taxonomy)")
    return Attribution(capability, raw, None)
