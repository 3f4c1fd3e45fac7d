"""Resumable drivers that append model outputs to a bundle folder, batch by batch.

Design: the GPU assets write an evidence bundle (CONTRACTS.md) instead of raw tables. Each batch's
rows are appended to `<bundle>/images.jsonl` (or judgments/transcriptions) in one locked,
fsync'd write after its PNGs are on disk (written atomically), so a crash loses at most the batch
in flight; the existing `import_bundle` asset then validates and loads the folder into the raw
tables, unchanged. Image rows carry seed, steps, guidance, generator_revision and backend
(CONTRACTS "Additions", kept in raw.images), the drawn width x height (the image's own size) and
`gpus`, the devices the draw held (`GeneratedBatch.devices`: one for a CPU draw, whose bundle the
import would refuse with 0, and whose cost is then its latency, as the calibration counts it);
columns the contract does not know (revision, device, raw_text, reason, ...) stay in the bundle
files as provenance; the import ignores them. A judgment row
carries its judge's identity (judge_model, judge_revision, prompt_template_sha: the Judgment's
fields), which the import keeps in raw.judgments (CONTRACTS "Additions").
Resuming: an item is done when its row is in the bundle file (and, for images, its PNG is in the
store); done items are skipped, so a rerun draws each missing image once and never adds a row
twice. For judgments "done" is per judge: an image counts as judged only by rows that carry the
current judge's identity (model, revision, prompt-template hash; base.JudgeIdentity) and its
`judge_id` (default `default`), so a new judge answers every image again and every row holds one
judge's answer. The import keys judgments by (prompt, generator, question, judge_id), so a second
judge in the same bundle needs a judge_id of its own: two identities under one judge_id are
refused there as duplicates, loudly, rather than mixed. Images are judged in chunks
(`judge_many`, one vLLM generate() call per chunk); each chunk's rows are one append, so a crash
loses at most the chunk in flight. An image is judged when each of its questions has a row: a kill
can cut a large append between two lines (a write is not atomic), and the rerun then asks the
image only the questions it lacks, so no question is lost or answered twice.
Image paths stay inside: the judging and transcription runs open each image at `bundle / path`,
so they read images.jsonl through `image_rows`, which refuses (BundleError, file, line and where
the path leads, in the import's words: `ingestion.bundle.image_paths`) every row whose path
resolves, symbolic links followed, outside the bundle folder and the named image roots, before
anything is judged or written; the assets call it before the model is loaded. The judge is handed
the path as the check resolved it (`checked_image_path`) and opens it without following a link
(`models.images.load_rgb`, O_NOFOLLOW): a link put in an image's place after the check is refused,
never read.
Progress: each run reports how far it has got (images drawn, judged, of how many) to a
`progress` callback (`ingestion.backends.drivers.progress`) as its rows land; `log` gets the
rest (generation's plan, the rates at the end).
"""

from __future__ import annotations

import dataclasses
import os
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from ingestion.backends.api.cache import cache_key
from ingestion.backends.api.generators import GeneratorSpec, image_seed
from ingestion.backends.api.ids import validate_id
from ingestion.backends.api.interfaces import (
    GenerationRequest,
    ImageGenerator,
    ImageQuestions,
    JudgeEngine,
    JudgeIdentity,
    Judgment,
    QuestionJudge,
)
from ingestion.backends.drivers.image_store import ImageStore
from ingestion.backends.drivers.progress import CountLines, Progress
from ingestion.bundle.format import DEFAULT_JUDGE_ID
from ingestion.bundle.image_paths import image_root_problems, path_problems
from ingestion.bundle.jsonl_append import (  # re-exported (question runs)
    append_rows,
    read_numbered_rows,
    read_rows,
)
from ingestion.bundle.problems import BundleError

Log = Callable[[str], None]
IMAGES_FILE = "images.jsonl"


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


def generation_requests(spec: GeneratorSpec, prompts: Iterable[dict]) -> list[GenerationRequest]:
    """One request per prompt with the generator's settings and the (concept, generator) seed."""
    return [
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


def run_generation(
    spec: GeneratorSpec,
    prompts: Iterable[dict],
    generator: ImageGenerator,
    bundle: Path,
    batch_size: int = 4,
    log: Log = print,
    after_image: Callable[[int], None] | None = None,
    progress: Progress | None = None,
) -> RunStats:
    """Draw every prompt with `generator` into <bundle>/images/ and <bundle>/images.jsonl,
    reporting "images drawn" of the planned to `progress` (`progress.py`; default: plain count
    lines through `log`) once before the first batch and after each batch is recorded."""
    bundle = Path(bundle)
    store = ImageStore(bundle / "images")
    rows_file = bundle / "images.jsonl"
    have_rows = {r.get("image_id") for r in read_rows(rows_file)}
    requests = generation_requests(spec, prompts)
    stats = RunStats(planned=len(requests))

    def done(r: GenerationRequest) -> bool:
        return image_id(r.model_id, r.prompt_id, r.seed) in have_rows and store.exists(
            r.model_id, r.prompt_id, r.seed
        )

    pending = [r for r in requests if not done(r)]
    stats.skipped = len(requests) - len(pending)
    log(f"{spec.model_id}: {len(requests)} images planned, {stats.skipped} already done")
    progress = progress or CountLines(log, spec.model_id)
    progress(stats.skipped, stats.planned, "images drawn")
    backend = getattr(generator, "backend", "diffusers")
    start = time.perf_counter()
    for batch in batched(pending, batch_size):
        result = generator.generate(batch)
        rows = []
        for request, image in zip(batch, result.images, strict=True):
            width, height = image.size  # what was drawn (a pipeline may rescale the request)
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
                    "width": width,
                    "height": height,
                    "latency_s": result.latency_s / len(batch),
                    "gpus": result.devices,  # a CPU draw holds one device (`device` says which)
                    "path": "images/"
                    + store.relative_path(
                        request.model_id, request.prompt_id, request.seed
                    ).as_posix(),
                    "seed": request.seed,
                    "steps": request.steps,
                    "guidance": request.guidance,
                    "revision": result.revision,
                    "generator_revision": result.revision,  # CONTRACTS "Additions"
                    "backend": backend,
                    "device": result.device,
                    "batch_size": len(batch),
                    "batch_latency_s": result.latency_s,
                    "cache_key": cache_key(
                        request, backend, request.model_id, result.revision, request.seed
                    ),
                }
            )
        append_rows(rows_file, rows, unique_key="image_id")
        have_rows.update(r["image_id"] for r in rows)
        stats.gpu_seconds += result.gpu_seconds
        stats.megapixels += result.megapixels
        stats.seconds = time.perf_counter() - start
        progress(stats.skipped + stats.done, stats.planned, "images drawn")
    stats.seconds = time.perf_counter() - start
    if stats.done:
        log(
            f"{spec.model_id}: {stats.done} drawn in {stats.seconds:.1f}s "
            f"({stats.rate:.2f} images/s, {stats.gpu_s_per_mp or 0:.3f} device-s/MP)"
        )
    return stats


def judged_images_of(
    judge: JudgeIdentity, rows: Iterable[dict], judge_id: str = DEFAULT_JUDGE_ID
) -> set[tuple[str, str]]:
    """(prompt_id, model_id) of the images `judge` answered under `judge_id`; rows of other
    judges, and rows that record no full identity (written before it was recorded), are not this
    judge's. A row without judge_id is judge `default`, as the import reads it."""
    return {
        (r["prompt_id"], r["model_id"])
        for r in rows
        if JudgeIdentity.of_row(r) == judge and (r.get("judge_id") or DEFAULT_JUDGE_ID) == judge_id
    }


def answered_questions_of(
    judge: JudgeIdentity, rows: Iterable[dict], model_id: str, judge_id: str = DEFAULT_JUDGE_ID
) -> set[tuple[str, str]]:
    """(prompt_id, question_id) of the questions of `model_id`'s images that `judge` answered
    under `judge_id` (`judged_images_of`'s rule, per question): an image counts as judged only
    when every one of its questions is, since a kill can cut a chunk's append between lines."""
    return {
        (r["prompt_id"], r["question_id"])
        for r in rows
        if r.get("model_id") == model_id
        and JudgeIdentity.of_row(r) == judge
        and (r.get("judge_id") or DEFAULT_JUDGE_ID) == judge_id
    }


def judgment_row(
    judgment: Judgment,
    judge: JudgeIdentity,
    judge_id: str = DEFAULT_JUDGE_ID,
    engine: JudgeEngine | None = None,
) -> dict:
    """The bundle row of a judgment, refused if it names another judge than the one running;
    with the engine and device it ran on, when the judge knows them."""
    row = dataclasses.asdict(judgment)
    if JudgeIdentity.of_row(row) != judge:
        raise ValueError(f"judgment {row} does not carry the running judge's identity {judge}")
    return {**row, "judge_id": judge_id, **(engine.row() if engine else {})}


def image_rows(bundle: Path, image_roots: Sequence[Path] = ()) -> list[dict]:
    """The rows of <bundle>/images.jsonl, or BundleError when an image root is not a folder or
    any row's path resolves (symbolic links followed) outside the bundle folder and every root:
    the import's rule and words (`ingestion.bundle.image_paths`), applied to every row, not only
    to the generator being judged, since the import would refuse the bundle for any of them."""
    bundle = Path(bundle)
    numbered = list(read_numbered_rows(bundle / IMAGES_FILE))
    problems = image_root_problems(image_roots) or path_problems(
        IMAGES_FILE,
        [(line, row["path"]) for line, row in numbered if isinstance(row.get("path"), str)],
        bundle,
        image_roots,
    )
    if problems:
        raise BundleError(bundle, problems)
    return [row for _, row in numbered]


def checked_image_path(bundle: Path, path: str) -> str:
    """The image's file as `image_rows` checked it: `bundle / path` with its symbolic links
    resolved. The judge opens it without following a link, so a link allowed by the check (inside
    the bundle or an image root) is read at its target, and one put there since is refused."""
    return os.path.realpath(Path(bundle) / path)


def images_to_process(
    bundle: Path,
    model_id: str,
    prompt_ids: Iterable[str],
    done: set[tuple[str, str]],
    image_roots: Sequence[Path] = (),
) -> tuple[list[dict], list[dict]]:
    """(the images of `model_id` whose prompt is in `prompt_ids`, those of them whose
    (prompt_id, model_id) is not `done`): what a judging or transcription run plans, and what it
    has left (a rerun skips the rest). A path leading outside the bundle folder and
    `image_roots` refuses the bundle (`image_rows`) before anything is planned."""
    wanted = set(prompt_ids)
    images = [
        r
        for r in image_rows(bundle, image_roots)
        if r["model_id"] == model_id and r["prompt_id"] in wanted
    ]
    return images, [r for r in images if (r["prompt_id"], r["model_id"]) not in done]


def images_read_ahead(
    judge: QuestionJudge, chunks: Sequence[Sequence[ImageQuestions]]
) -> Iterator[list | None]:
    """`judge.load_images` of each chunk in turn, the next chunk's read in a background thread
    while the caller judges this one (at most two chunks of decoded images held). A file that
    cannot be read raises here, when its chunk's turn comes: the chunks before it are judged
    and appended, so a broken image still costs at most its own chunk."""
    if not chunks:
        return
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="judge-images") as reader:
        upcoming = reader.submit(judge.load_images, chunks[0])
        for following in [*chunks[1:], None]:
            images = upcoming.result()
            if following is not None:
                upcoming = reader.submit(judge.load_images, following)
            yield images


def run_adjudication(
    judge: QuestionJudge,
    bundle: Path,
    model_id: str,
    log: Log = print,
    chunk_images: int = 1,
    judge_id: str = DEFAULT_JUDGE_ID,
    image_roots: Sequence[Path] = (),
    progress: Progress | None = None,
) -> RunStats:
    """Judge every question of every image of `model_id` in the bundle, `chunk_images` images
    per `judge.judge_many` call, appending each chunk's rows to <bundle>/judgments.jsonl in one
    write (a crash loses at most the chunk in flight); questions this judge (its identity, under
    `judge_id`) already answered are not asked again (an image is skipped when all of its are),
    another judge's rows count for nothing. A bundle with
    an image path outside its folder and `image_roots` is refused (BundleError) before any image
    is judged. `progress` (default: plain count lines through `log`) hears "images judged" of
    the planned, with this run's questions judged, before the first chunk and after each."""
    if chunk_images < 1:
        raise ValueError(f"chunk_images must be at least 1, not {chunk_images}")
    validate_id(judge_id, "judge_id")
    bundle = Path(bundle)
    rows_file = bundle / "judgments.jsonl"
    answered = answered_questions_of(judge.identity, read_rows(rows_file), model_id, judge_id)
    questions: dict[str, list[tuple[str, str]]] = {}
    for q in read_rows(bundle / "questions.jsonl"):
        questions.setdefault(q["prompt_id"], []).append((q["question_id"], q["text"]))
    judged = {
        (prompt_id, model_id)
        for prompt_id, asked in questions.items()
        if all((prompt_id, question_id) in answered for question_id, _ in asked)
    }
    images, pending = images_to_process(bundle, model_id, questions, judged, image_roots)
    stats = RunStats(planned=len(images))
    stats.skipped = len(images) - len(pending)
    progress = progress or CountLines(log, model_id)
    progress(stats.skipped, stats.planned, "images judged", "0 questions judged")
    start = time.perf_counter()
    n_questions = 0
    chunks = [
        [
            ImageQuestions(
                image["prompt_id"],
                model_id,
                checked_image_path(bundle, image["path"]),
                tuple(  # an image whose chunk was cut mid-write: only what it lacks
                    (question_id, text)
                    for question_id, text in questions[image["prompt_id"]]
                    if (image["prompt_id"], question_id) not in answered
                ),
            )
            for image in chunk
        ]
        for chunk in batched(pending, chunk_images)
    ]
    for items, images in zip(chunks, images_read_ahead(judge, chunks), strict=True):
        answers = judge.judge_many(items, images)
        rows = [
            judgment_row(j, judge.identity, judge_id, judge.engine) for one in answers for j in one
        ]
        append_rows(rows_file, rows)
        stats.done += len(items)
        n_questions += len(rows)
        progress(
            stats.skipped + stats.done,
            stats.planned,
            "images judged",
            f"{n_questions} questions judged",
        )
    stats.seconds = time.perf_counter() - start
    stats.questions = n_questions
    if stats.done:
        log(
            f"{model_id}: {stats.done} images judged, {n_questions} questions in "
            f"{stats.seconds:.1f}s ({n_questions / stats.seconds:.1f} questions/s)"
        )
    return stats
