"""Resumable drivers that append model outputs to a bundle folder, batch by batch.

Design: the GPU assets write an evidence bundle (CONTRACTS.md) instead of raw tables. Each batch's
rows are appended to `<bundle>/images.jsonl` (or judgments/transcriptions) in one locked,
fsync'd write after its PNGs are on disk (written atomically), so a crash loses at most the batch
in flight; the existing `import_bundle` asset then validates and loads the folder into the raw
tables, unchanged. Columns the contract does not know (seed, steps, guidance, revision, raw_text,
reason, ...) stay in the bundle files as provenance; the import ignores them. A judgment row
carries its judge's identity (judge_model, judge_revision, prompt_template_sha: the Judgment's
fields), which the import keeps in raw.judgments (CONTRACTS "Additions").
Resuming: an item is done when its row is in the bundle file (and, for images, its PNG is in the
store); done items are skipped, so a rerun draws each missing image once and never adds a row
twice. For judgments "done" is per judge: an image counts as judged only by rows that carry the
current judge's identity (model, revision, prompt-template hash; base.JudgeIdentity), so a new
judge answers every image again and every row holds one judge's answer. The rows name no
`judge_id`, so the import reads them as judge `default` and keys them by (prompt, generator,
question, `default`): a bundle holding two identities' answers is refused there as duplicates,
loudly, rather than mixed. A second judge's rows need a `judge_id` of their own (this driver
writes none yet), or replace the stored answers with `qct2i import --append --replace-judge
default`.
"""

from __future__ import annotations

import dataclasses
import fcntl
import json
import os
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from ingestion.backends.base import (
    GenerationRequest,
    ImageGenerator,
    ImageQuestions,
    JudgeIdentity,
    Judgment,
    QuestionJudge,
)
from ingestion.backends.cache import cache_key
from ingestion.backends.generators import GeneratorSpec, image_seed
from ingestion.backends.store import ImageStore, validate_id

Log = Callable[[str], None]


def read_rows(path: Path) -> Iterator[dict]:
    """Rows of a JSONL file; a torn last line (a crash mid-write) and blank lines are skipped."""
    if not path.exists():
        return
    with path.open(encoding="utf-8") as f:
        for line in f:
            if not line.endswith("\n"):
                return
            try:
                row = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(row, dict):
                yield row


def append_rows(path: Path, rows: Sequence[dict]) -> None:
    """Append whole lines under an exclusive lock (partitions may run at once); a torn last line
    left by a crash is cut first; the write is flushed and fsync'd before the lock is released."""
    if not rows:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    data = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows).encode("utf-8")
    with path.open("a+b") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            f.seek(0)
            content = f.read()
            if content and not content.endswith(b"\n"):
                f.truncate(content.rfind(b"\n") + 1)
            f.seek(0, os.SEEK_END)
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def batched(items: Sequence, size: int) -> Iterator[Sequence]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


@dataclass
class RunStats:
    planned: int = 0
    skipped: int = 0
    done: int = 0
    seconds: float = 0.0
    gpu_seconds: float = 0.0
    megapixels: float = 0.0
    questions: int = 0  # judged questions (adjudication runs)

    @property
    def gpu_s_per_mp(self) -> float | None:
        return self.gpu_seconds / self.megapixels if self.megapixels else None

    @property
    def rate(self) -> float:
        return self.done / self.seconds if self.seconds else 0.0


def image_id(model_id: str, prompt_id: str, seed: int) -> str:
    return f"{validate_id(model_id, 'model_id')}__{validate_id(prompt_id, 'prompt_id')}__s{seed}"


def run_generation(
    spec: GeneratorSpec,
    prompts: Iterable[dict],
    generator: ImageGenerator,
    bundle: Path,
    batch_size: int = 4,
    log: Log = print,
    after_image: Callable[[int], None] | None = None,
) -> RunStats:
    """Draw every prompt with `generator` into <bundle>/images/ and <bundle>/images.jsonl."""
    bundle = Path(bundle)
    store = ImageStore(bundle / "images")
    rows_file = bundle / "images.jsonl"
    have_rows = {r.get("image_id") for r in read_rows(rows_file)}
    requests = [
        GenerationRequest(
            prompt_id=validate_id(p["prompt_id"], "prompt_id"),
            concept_id=p["concept_id"],
            language=p["language"],
            text=p["text"],
            model_id=spec.model_id,
            seed=image_seed(p["concept_id"], spec.model_id),
            steps=spec.steps,
            guidance=spec.guidance,
            width=spec.width,
            height=spec.height,
        )
        for p in prompts
    ]
    stats = RunStats(planned=len(requests))

    def done(r: GenerationRequest) -> bool:
        return image_id(r.model_id, r.prompt_id, r.seed) in have_rows and store.exists(
            r.model_id, r.prompt_id, r.seed
        )

    pending = [r for r in requests if not done(r)]
    stats.skipped = len(requests) - len(pending)
    log(f"{spec.model_id}: {len(requests)} images planned, {stats.skipped} already done")
    start = time.perf_counter()
    for batch in batched(pending, batch_size):
        result = generator.generate(batch)
        rows = []
        for request, image in zip(batch, result.images, strict=True):
            store.write_png(image, request.model_id, request.prompt_id, request.seed)
            stats.done += 1
            if after_image is not None:
                after_image(stats.done)
            iid = image_id(request.model_id, request.prompt_id, request.seed)
            if iid in have_rows:
                continue  # the row survived, the PNG did not: redrawn, not recorded twice
            rows.append(
                {
                    "image_id": iid,
                    "prompt_id": request.prompt_id,
                    "model_id": request.model_id,
                    "width": request.width,
                    "height": request.height,
                    "latency_s": result.latency_s / len(batch),
                    "gpus": result.gpus,
                    "path": "images/"
                    + store.relative_path(
                        request.model_id, request.prompt_id, request.seed
                    ).as_posix(),
                    "seed": request.seed,
                    "steps": request.steps,
                    "guidance": request.guidance,
                    "revision": result.revision,
                    "device": result.device,
                    "batch_size": len(batch),
                    "batch_latency_s": result.latency_s,
                    "cache_key": cache_key(
                        request, "diffusers", request.model_id, result.revision, request.seed
                    ),
                }
            )
        append_rows(rows_file, rows)
        have_rows.update(r["image_id"] for r in rows)
        stats.gpu_seconds += result.gpu_seconds
        stats.megapixels += result.megapixels
        stats.seconds = time.perf_counter() - start
        log(
            f"{spec.model_id}: {stats.done}/{len(pending)} drawn "
            f"({stats.rate:.2f} images/s, {stats.gpu_s_per_mp or 0:.3f} device-s/MP)"
        )
    stats.seconds = time.perf_counter() - start
    return stats


def judged_images_of(judge: JudgeIdentity, rows: Iterable[dict]) -> set[tuple[str, str]]:
    """(prompt_id, model_id) of the images `judge` answered; rows of other judges, and rows that
    record no full identity (written before it was recorded), are not this judge's."""
    return {(r["prompt_id"], r["model_id"]) for r in rows if JudgeIdentity.of_row(r) == judge}


def judgment_row(judgment: Judgment, judge: JudgeIdentity) -> dict:
    """The bundle row of a judgment, refused if it names another judge than the one running."""
    row = dataclasses.asdict(judgment)
    if JudgeIdentity.of_row(row) != judge:
        raise ValueError(f"judgment {row} does not carry the running judge's identity {judge}")
    return row


def run_adjudication(
    judge: QuestionJudge,
    bundle: Path,
    model_id: str,
    log: Log = print,
) -> RunStats:
    """Judge every question of every image of `model_id` in the bundle, one image per batch,
    appending to <bundle>/judgments.jsonl; images this judge (its identity) already judged are
    skipped, another judge's rows count for nothing."""
    bundle = Path(bundle)
    rows_file = bundle / "judgments.jsonl"
    judged = judged_images_of(judge.identity, read_rows(rows_file))
    questions: dict[str, list[tuple[str, str]]] = {}
    for q in read_rows(bundle / "questions.jsonl"):
        questions.setdefault(q["prompt_id"], []).append((q["question_id"], q["text"]))
    images = [
        r
        for r in read_rows(bundle / "images.jsonl")
        if r["model_id"] == model_id and r["prompt_id"] in questions
    ]
    stats = RunStats(planned=len(images))
    pending = [r for r in images if (r["prompt_id"], r["model_id"]) not in judged]
    stats.skipped = len(images) - len(pending)
    start = time.perf_counter()
    n_questions = 0
    for image in pending:
        item = ImageQuestions(
            image["prompt_id"],
            model_id,
            str(bundle / image["path"]),
            tuple(questions[image["prompt_id"]]),
        )
        judgments = judge.judge(item)
        append_rows(rows_file, [judgment_row(j, judge.identity) for j in judgments])
        stats.done += 1
        n_questions += len(judgments)
        stats.seconds = time.perf_counter() - start
        log(
            f"{model_id}: {stats.done}/{len(pending)} images judged, {n_questions} questions "
            f"({n_questions / stats.seconds:.1f} questions/s)"
        )
    stats.seconds = time.perf_counter() - start
    stats.questions = n_questions
    return stats
