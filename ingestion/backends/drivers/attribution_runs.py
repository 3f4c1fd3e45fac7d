"""Capability attribution by a language model over a bundle folder (METHOD 13a), after a converter
has written it with the rules' labels: each question of questions.jsonl is given the capability
the model names, its rule's label kept beside it.

A question with a text target is not asked: it is `text_rendering` by its target, the evidence
Eq. 3 scores, whatever its wording. A question the model attributes gets `capability` = the
model's key, `capability_source` = `model:<model>` and `rule_capability` = the label it had (the
rules', a default's or the release's; kept from the first attribution when a bundle is attributed
again). A question whose answer fails (`attribution_contract.parse_attribution`: malformed, not
the schema, a key the taxonomy lacks) keeps its row unchanged; the failure and its reason go to
attribution_failures.jsonl beside it and into the run's counts, never a guessed label.

Cache: every answer, failures included (decoding is greedy, so the same model asked the same
way answers the same), is appended batch by batch to a JSONL file keyed by the SHA-256 of the
question's normalised text and language and the attributor's identity (model, revision,
instruction with the taxonomy's definitions: `AttributorIdentity`). A rerun, a run interrupted
half way, or another release asking the same question of the same model costs no model call.
questions.jsonl is rewritten once, atomically, when every question has its answer.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from ingestion.backends.api.attribution_contract import Attribution, parse_attribution
from ingestion.backends.api.cache import cache_key
from ingestion.backends.api.interfaces import AttributionRequest, CapabilityAttributor
from ingestion.backends.drivers.runs import Log, append_rows, batched, read_rows
from ingestion.bundle.problems import BundleError, Problem
from ingestion.paths import warehouse_path

QUESTIONS_FILE = "questions.jsonl"
FAILURES_FILE = "attribution_failures.jsonl"
MODEL_SOURCE = "model:"


def default_attribution_cache() -> Path:
    """The cache beside the warehouse (QCT2I_WAREHOUSE's folder), shared by every run there."""
    return warehouse_path().parent / "attribution_cache.jsonl"


@dataclass
class AttributionStats:
    questions: int = 0
    cached: int = 0  # answers read from the cache: no model call
    asked: int = 0  # questions sent to the model
    attributed: int = 0  # questions now labelled by the model
    changed: int = 0  # of those, a label other than the rule's
    failed: int = 0  # answers refused: the question keeps its label
    text_targets: int = 0  # questions with a text target: text_rendering by it, not asked
    reasons: dict[str, int] = field(default_factory=dict)  # failure reason -> questions

    def metadata(self) -> dict:
        return {
            "questions": self.questions,
            "cached": self.cached,
            "asked": self.asked,
            "attributed": self.attributed,
            "changed": self.changed,
            "failed": self.failed,
            "text_targets": self.text_targets,
            "failure_reasons": dict(self.reasons),
        }

    def summary(self, model: str) -> str:
        return (
            f"attributed by {model}: {self.attributed} of {self.questions} questions "
            f"({self.changed} changed from the rules' label), {self.failed} refused answers kept "
            f"their label, {self.text_targets} with a text target kept theirs; "
            f"{self.cached} answers from the cache, {self.asked} asked"
        )


def attribution_key(request: AttributionRequest, attributor: CapabilityAttributor) -> str:
    """The cache key: the question's text and language (normalised) and the attributor's
    identity; the question's id is not part of it, so any bundle's same question hits."""
    identity = attributor.identity
    asked = {
        "text": request.text,
        "language": request.language,
        "instruction": identity.instruction_sha,
    }
    return cache_key(asked, "capability_attribution", identity.model, identity.revision, None)


def run_attribution(
    attributor: CapabilityAttributor,
    bundle: Path,
    cache: Path,
    keys: set[str],
    batch_size: int = 64,
    log: Log = print,
) -> AttributionStats:
    """Attribute every question of <bundle>/questions.jsonl (module docstring). `keys`: the
    taxonomy's capability keys, the only answers accepted."""
    bundle, cache = Path(bundle), Path(cache)
    rows = _question_rows(bundle)
    prompts = read_rows(bundle / "prompts.jsonl")
    languages = {p["prompt_id"]: p.get("language", "en") for p in prompts}
    # a question with a text target is text_rendering by its target (Eq. 3's evidence): kept
    asked_rows = [i for i, row in enumerate(rows) if row.get("text_target") is None]
    requests = [
        AttributionRequest(
            rows[i]["question_id"], languages.get(rows[i]["prompt_id"], "en"), rows[i]["text"]
        )
        for i in asked_rows
    ]
    keyed = [attribution_key(request, attributor) for request in requests]
    answers = {entry["key"]: entry["raw_text"] for entry in read_rows(cache)}
    stats = AttributionStats(questions=len(rows), text_targets=len(rows) - len(asked_rows))
    stats.cached = sum(key in answers for key in keyed)
    # one model call per distinct question: a bundle asks the same text in many prompts
    unanswered = zip(keyed, requests, strict=True)
    pending = list({key: request for key, request in unanswered if key not in answers}.items())
    for batch in batched(pending, batch_size):
        raws = attributor.attribute_many([request for _, request in batch])
        stats.asked += len(batch)
        entries = [
            _cache_entry(key, request, raw, attributor)
            for (key, request), raw in zip(batch, raws, strict=True)
        ]
        append_rows(cache, entries)
        answers.update((entry["key"], entry["raw_text"]) for entry in entries)
        log(f"attribution: {stats.asked} of {len(pending)} questions asked")
    parsed = zip(asked_rows, keyed, strict=True)
    results = {i: parse_attribution(answers[key], keys) for i, key in parsed}
    _rewrite(bundle, rows, results, attributor.identity.model, stats)
    return stats


def _question_rows(bundle: Path) -> list[dict]:
    path = bundle / QUESTIONS_FILE
    if not path.is_file():
        reason = "no questions.jsonl: attribution relabels a converted bundle's questions"
        raise BundleError(bundle, [Problem(QUESTIONS_FILE, None, reason)])
    return list(read_rows(path))


def _cache_entry(key: str, request: AttributionRequest, raw: str, attributor) -> dict:
    identity = attributor.identity
    return {
        "key": key,
        "model": identity.model,
        "revision": identity.revision,
        "instruction_sha": identity.instruction_sha,
        "language": request.language,
        "text": request.text,
        "raw_text": raw,
    }


def _rewrite(
    bundle: Path, rows: list[dict], results: dict[int, Attribution], model: str, stats
) -> None:
    """questions.jsonl with the model's labels (atomically: a crash leaves the old file whole)
    and the refused answers in attribution_failures.jsonl. `results`: by row index; a row
    without one (a text target's) is kept as it is."""
    failures, reasons = [], Counter()
    relabelled = []
    for i, row in enumerate(rows):
        result = results.get(i)
        if result is None:
            relabelled.append(row)
            continue
        if result.capability is None:
            failures.append(
                {
                    "prompt_id": row["prompt_id"],
                    "question_id": row["question_id"],
                    "reason": result.reason,
                    "raw_text": result.raw_text,
                }
            )
            reasons[result.reason[:120]] += 1
            relabelled.append(row)
            continue
        relabelled.append(_relabelled(row, result.capability, model))
        stats.attributed += 1
        stats.changed += result.capability != relabelled[-1]["rule_capability"]
    stats.failed, stats.reasons = len(failures), dict(reasons)
    _write_jsonl(bundle / QUESTIONS_FILE, relabelled)
    if failures:
        _write_jsonl(bundle / FAILURES_FILE, failures)
    else:  # a former run's failures no longer hold
        (bundle / FAILURES_FILE).unlink(missing_ok=True)


def _relabelled(row: dict, capability: str, model: str) -> dict:
    """The row with the model's label; the label it had before any model kept as rule_capability."""
    attributed_before = str(row.get("capability_source") or "").startswith(MODEL_SOURCE)
    rule = row.get("rule_capability") if attributed_before else row["capability"]
    source = MODEL_SOURCE + model
    return row | {"capability": capability, "capability_source": source, "rule_capability": rule}


def _write_jsonl(path: Path, rows: list[dict]) -> None:
    partial = path.with_name(path.name + ".partial")
    with partial.open("w", encoding="utf-8") as out:
        for row in rows:
            out.write(json.dumps(row, ensure_ascii=False) + "\n")
        out.flush()
        os.fsync(out.fileno())
    os.replace(partial, path)
