"""The resumable OCR driver (Eq. 3's evidence): every image of one generator whose prompt has a
text target is read once into <bundle>/transcriptions.jsonl, with the same append and resume
contract as runs.py (one locked, fsync'd append per image; a torn last line is cut).

A row carries the contract's columns (CONTRACTS "Additions": ocr_model, ocr_revision, reason) and
the raw answer as provenance. An `unavailable` transcription (truncated at the token limit, or an
answer that is not a block list) is written and counted like an `ok` one, so it leaves Eq. 3
visibly (METHOD 3), never by silence. The bundle holds one transcription per image (the table's
key is (prompt, generator)), so a run with another OCR model than the one that wrote the rows is
refused before it reads anything; an image is done when its row is there. An image path that
leads outside the bundle folder and the named image roots refuses the bundle before any image is
read, as for judging (`runs.image_rows`).
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ingestion.backends.api.interfaces import TextTranscriber, Transcription, TranscriptionRequest
from ingestion.backends.drivers.progress import CountLines, Progress
from ingestion.backends.drivers.runs import (
    Log,
    append_rows,
    checked_image_path,
    images_to_process,
    read_rows,
)


@dataclass
class TranscriptionStats:
    planned: int = 0
    skipped: int = 0
    done: int = 0
    seconds: float = 0.0
    outcomes: Counter = field(default_factory=Counter)  # ok / truncated / unparseable

    def metadata(self) -> dict:
        return {
            "planned": self.planned,
            "skipped": self.skipped,
            "transcribed": self.done,
            "ok": self.outcomes["ok"],
            "unavailable_truncated": self.outcomes["truncated"],
            "unavailable_unparseable": self.outcomes["unparseable"],
            "images_per_s": self.done / self.seconds if self.seconds else 0.0,
        }


def outcome(transcription: Transcription) -> str:
    """'ok', or the kind of reason an unavailable transcription gives."""
    if transcription.status == "ok":
        return "ok"
    return (transcription.reason or "unparseable").split(":", 1)[0]


def transcription_row(t: Transcription) -> dict:
    return {
        "prompt_id": t.prompt_id,
        "model_id": t.model_id,
        "status": t.status,
        "blocks": list(t.blocks),
        "ocr_model": t.ocr_model,
        "ocr_revision": t.ocr_revision,
        "reason": t.reason,
        "raw_text": t.raw_text,
    }


def prompts_with_text_targets(question_rows: Iterable[dict]) -> set[str]:
    return {q["prompt_id"] for q in question_rows if q.get("text_target")}


def refuse_other_reader(rows: list[dict], ocr_model: str, ocr_revision: str) -> None:
    for line, row in enumerate(rows, 1):
        if (row.get("ocr_model"), row.get("ocr_revision")) != (ocr_model, ocr_revision):
            raise ValueError(
                f"transcriptions.jsonl line {line}: read by {row.get('ocr_model')!r} at "
                f"{row.get('ocr_revision')!r}, not by the running {ocr_model!r} at "
                f"{ocr_revision!r}; the bundle holds one transcription per image (use a new "
                "bundle, or remove those rows, to read the images again)"
            )


def run_transcription(
    transcriber: TextTranscriber,
    bundle: Path,
    model_id: str,
    log: Log = print,
    image_roots: Sequence[Path] = (),
    progress: Progress | None = None,
) -> TranscriptionStats:
    """Transcribe every image of `model_id` whose prompt has a text target; images with a row
    are skipped. A bundle with an image path outside its folder and `image_roots` is refused
    (BundleError, as by the import) before any image is read. `progress` (default: plain count
    lines through `log`) hears "images read" of the planned, before the first and after each."""
    bundle = Path(bundle)
    rows_file = bundle / "transcriptions.jsonl"
    existing = list(read_rows(rows_file))
    refuse_other_reader(existing, transcriber.ocr_model, transcriber.ocr_revision)
    done = {(r["prompt_id"], r["model_id"]) for r in existing}
    with_text = prompts_with_text_targets(read_rows(bundle / "questions.jsonl"))
    images, pending = images_to_process(bundle, model_id, with_text, done, image_roots)
    stats = TranscriptionStats(planned=len(images))
    stats.skipped = len(images) - len(pending)
    progress = progress or CountLines(log, model_id)
    progress(stats.skipped, stats.planned, "images read")
    start = time.perf_counter()
    for image in pending:
        path = checked_image_path(bundle, image["path"])
        request = TranscriptionRequest(image["prompt_id"], model_id, path)
        result = transcriber.transcribe(request)
        append_rows(rows_file, [transcription_row(result)])
        stats.done += 1
        stats.outcomes[outcome(result)] += 1
        stats.seconds = time.perf_counter() - start
        progress(stats.skipped + stats.done, stats.planned, "images read")
    stats.seconds = time.perf_counter() - start
    if stats.done:
        outcomes = dict(stats.outcomes)
        log(f"{model_id}: {stats.done} transcribed in {stats.seconds:.1f}s ({outcomes})")
    return stats
