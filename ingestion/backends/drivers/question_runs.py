"""Question construction as a resumable run (METHOD 13): every prompt of a bundle that has neither
questions nor a recorded rejection is written, validated (`api.question_contract`) and appended,
batch by batch; accepted rows go to questions.jsonl, rejections and audit flags beside them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ingestion.backends.api.interfaces import QuestionWriter, QuestionWriteRequest
from ingestion.backends.api.question_contract import Construction, construct_questions
from ingestion.backends.drivers.runs import append_rows, batched, read_rows


def build_questions(
    writer: QuestionWriter,
    requests: list[QuestionWriteRequest],
    bundle: Path,
    capabilities: set[str] | None = None,
) -> list[Construction]:
    """Write, validate and record: accepted rows to questions.jsonl, rejected prompts with their
    reasons to question_rejections.jsonl, audit flags to question_audit.jsonl."""
    raws = writer.write_many(requests)
    results = [
        construct_questions(request, raw, capabilities)
        for request, raw in zip(requests, raws, strict=True)
    ]
    bundle = Path(bundle)
    append_rows(bundle / "questions.jsonl", [q for c in results for q in c.questions])
    append_rows(
        bundle / "question_rejections.jsonl",
        [
            {"prompt_id": c.prompt_id, "reasons": list(c.reasons), "raw_text": c.raw_text}
            for c in results
            if not c.accepted
        ],
    )
    append_rows(
        bundle / "question_audit.jsonl",
        [{"question_id": q, "flag": f} for c in results for q, f in c.audit_flags],
    )
    return results


@dataclass
class ConstructionStats:
    planned: int = 0
    skipped: int = 0
    accepted: int = 0
    rejected: int = 0
    questions: int = 0
    audit_flags: int = 0
    reasons: dict[str, int] = field(default_factory=dict)  # reason -> prompts rejected for it

    def metadata(self) -> dict:
        return {
            "planned": self.planned,
            "skipped": self.skipped,
            "accepted": self.accepted,
            "rejected": self.rejected,
            "questions": self.questions,
            "audit_flags": self.audit_flags,
            "rejection_reasons": dict(self.reasons),
        }


def run_question_construction(
    writer: QuestionWriter,
    bundle: Path,
    capabilities: set[str] | None = None,
    batch_size: int = 32,
    log=print,
) -> ConstructionStats:
    """Questions for every prompt of <bundle>/prompts.jsonl that has neither questions nor a
    recorded rejection, `batch_size` prompts per `write_many` call (one LLM batch), each batch
    validated and appended before the next (resumable: a rerun writes only what is missing)."""
    bundle = Path(bundle)
    prompts = list(read_rows(bundle / "prompts.jsonl"))
    settled = {q["prompt_id"] for q in read_rows(bundle / "questions.jsonl")} | {
        r["prompt_id"] for r in read_rows(bundle / "question_rejections.jsonl")
    }
    pending = [
        QuestionWriteRequest(p["prompt_id"], p.get("language", "en"), p["text"])
        for p in prompts
        if p["prompt_id"] not in settled
    ]
    stats = ConstructionStats(planned=len(prompts), skipped=len(prompts) - len(pending))
    reasons: dict[str, int] = {}
    for batch in batched(pending, batch_size):
        for result in build_questions(writer, list(batch), bundle, capabilities):
            if result.accepted:
                stats.accepted += 1
                stats.questions += len(result.questions)
                stats.audit_flags += len(result.audit_flags)
            else:
                stats.rejected += 1
                for reason in result.reasons:
                    reasons[reason[:120]] = reasons.get(reason[:120], 0) + 1
        log(f"questions: {stats.accepted} prompts accepted, {stats.rejected} rejected")
    stats.reasons = reasons
    return stats
