"""The four backend interfaces and their frozen request/result records (plain Python only)."""

from __future__ import annotations

import hashlib
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, fields
from typing import Any


@dataclass(frozen=True)
class GenerationRequest:
    """One image to draw: the prompt, the generator and every setting that changes the pixels."""

    prompt_id: str
    concept_id: str
    language: str
    text: str
    model_id: str
    seed: int
    steps: int
    guidance: float
    width: int
    height: int


@dataclass(frozen=True)
class GeneratedBatch:
    """Images for a batch of requests (same order) and the measured, device-synchronised latency
    of the one pipeline call that drew them, with the GPUs it occupied."""

    requests: tuple[GenerationRequest, ...]
    images: tuple[Any, ...]  # PIL images
    latency_s: float
    gpus: int
    device: str
    revision: str

    @property
    def megapixels(self) -> float:
        return sum(r.width * r.height for r in self.requests) / 1e6

    @property
    def devices(self) -> int:
        """The devices the call held: its GPUs, or one for a CPU run (`gpus` 0). What the
        bundle's `images.gpus` records, which the import requires to be > 0."""
        return max(self.gpus, 1)

    @property
    def gpu_seconds(self) -> float:
        """Device seconds: wall latency times the devices it held (a CPU run counts as one)."""
        return self.latency_s * self.devices


@dataclass(frozen=True)
class ImageQuestions:
    """One image with all of its questions: judged as one batch sharing the image prefix."""

    prompt_id: str
    model_id: str
    image_path: str
    questions: tuple[tuple[str, str], ...]  # (question_id, question text), in prompt order


# Every image reaches a judge within the same pixel budget, whatever size its generator drew it
# at (docs/gpu.md, "The judge's image budget"): 1024^2 pixels, 1,024 image tokens for Qwen3-VL's
# 16-pixel patches merged 2x2. Without it a 1328^2 Qwen-Image cost 1,764 tokens and a 2048^2
# HiDream-O1 4,096, each judged at another resolution than the 1024^2 rows.
JUDGE_IMAGE_PIXELS = 1024 * 1024


def capped_image_size(own: dict[str, int], pixels: int = JUDGE_IMAGE_PIXELS) -> dict[str, int]:
    """A Qwen-VL image processor's `size` (its pixel range: `shortest_edge` to `longest_edge`)
    with its top lowered to `pixels`: a larger image is scaled down to it, a smaller one kept."""
    top = min(own["longest_edge"], pixels)
    return {"shortest_edge": min(own["shortest_edge"], top), "longest_edge": top}


def template_sha(
    template: str, image_pixels: int | None = None, reasoning_budget: int | None = None
) -> str:
    """A short SHA-256 of a prompt template (the text a judge sends, placeholders left in) and,
    for a judge that sees images, its image budget: answers to the same prompt about an image
    seen at another resolution are other evidence. A Thinking judge's reasoning budget is hashed
    too (`thinking reasoning_budget=N`): with another budget other answers are cut off, so it is
    another judge, and never the Instruct judge of the same template."""
    text = template if image_pixels is None else f"{template}\nimage_pixels={image_pixels}"
    if reasoning_budget is not None:
        text += f"\nthinking reasoning_budget={reasoning_budget}"
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


@dataclass(frozen=True)
class JudgeIdentity:
    """What makes two judges' answers different evidence: the model, its revision and the prompt
    it is asked with. Part of what "already judged" means (runs.run_adjudication)."""

    judge_model: str
    judge_revision: str
    prompt_template_sha: str

    @classmethod
    def of_row(cls, row: dict) -> JudgeIdentity | None:
        """The identity a bundle row records; None for a row that records no full identity."""
        values = [row.get(f.name) for f in fields(cls)]
        return cls(*values) if all(isinstance(v, str) and v for v in values) else None


@dataclass(frozen=True)
class JudgeEngine:
    """Where a judge ran: its engine, the engine's version and the device. Recorded on every
    judgment row (`judge_engine`, `judge_engine_version`, `judge_gpu_model`), not part of the
    identity: the same model, revision and prompt on another engine or GPU is the same judge,
    but users of other benchmarks found engines and GPUs move scores, so the rows say which."""

    engine: str  # "transformers" or "vllm"
    engine_version: str
    gpu_model: str  # the device's name ("NVIDIA H200"), or "cpu"

    def row(self) -> dict[str, str]:
        return {
            "judge_engine": self.engine,
            "judge_engine_version": self.engine_version,
            "judge_gpu_model": self.gpu_model,
        }


@dataclass(frozen=True)
class Judgment:
    """A yes/no answer. `answer` None means no usable answer: `raw_text` and `reason` say why; it
    is never recorded as "no". `judge_model`, `judge_revision` and `prompt_template_sha` are the
    judge's identity. `reasoning`: what a Thinking judge reasoned before it answered (kept for
    audit, cut where its budget ran out); None for a judge that answers at once."""

    prompt_id: str
    model_id: str
    question_id: str
    answer: str | None
    p_yes: float | None
    raw_text: str
    reason: str | None
    judge_model: str
    judge_revision: str
    prompt_template_sha: str
    reasoning: str | None = None


@dataclass(frozen=True)
class TranscriptionRequest:
    prompt_id: str
    model_id: str
    image_path: str


@dataclass(frozen=True)
class Transcription:
    prompt_id: str
    model_id: str
    status: str  # "ok" or "unavailable"
    blocks: tuple[str, ...]
    raw_text: str
    reason: str | None
    ocr_model: str
    ocr_revision: str


@dataclass(frozen=True)
class QuestionWriteRequest:
    prompt_id: str
    language: str
    text: str


class ImageGenerator(ABC):
    model_id: str

    @abstractmethod
    def generate(self, requests: Sequence[GenerationRequest]) -> GeneratedBatch:
        """Draw every request in one pipeline call."""


class QuestionJudge(ABC):
    identity: JudgeIdentity  # set by the backend once its model is loaded
    engine: JudgeEngine | None = None  # where it runs, when the backend knows

    @abstractmethod
    def judge(self, item: ImageQuestions) -> tuple[Judgment, ...]:
        """Answer every question of one image, one Judgment per question, in order."""

    def judge_many(
        self, items: Sequence[ImageQuestions], images: Sequence[Any] | None = None
    ) -> list[tuple[Judgment, ...]]:
        """`judge` for each image, in order; a backend that batches images (vLLM) overrides it
        with one call for the whole chunk. `images`: what `load_images` returned for `items`."""
        return [self.judge(item) for item in items]

    def load_images(self, items: Sequence[ImageQuestions]) -> list[Any] | None:
        """The chunk's images read from disk and decoded, for `judge_many`; None for a judge that
        reads none (a text-only stand-in) or reads them itself. `run_adjudication` calls it for
        the next chunk in a background thread while this one is judged, so the accelerator does
        not wait for the files (issue 23)."""
        return None


class TextTranscriber(ABC):
    ocr_model: str  # set by the backend once its model is loaded: what its rows record
    ocr_revision: str

    @abstractmethod
    def transcribe(self, request: TranscriptionRequest) -> Transcription:
        """The text blocks visible in the image, or status 'unavailable' with a reason."""


class QuestionWriter(ABC):
    @abstractmethod
    def write(self, request: QuestionWriteRequest) -> str:
        """The LLM's raw output (JSON text under METHOD 13's contract), validated elsewhere."""

    def write_many(self, requests: Sequence[QuestionWriteRequest]) -> list[str]:
        """`write` for each request, in order; an LLM backend overrides it with one batch."""
        return [self.write(request) for request in requests]


@dataclass(frozen=True)
class AttributionRequest:
    """One question to give a capability (METHOD 13a): its text and language."""

    question_id: str
    language: str
    text: str


@dataclass(frozen=True)
class AttributorIdentity:
    """What makes two attributions different evidence: the model, its revision and the
    instruction (with the taxonomy's definitions) it is asked with. Part of the cache key."""

    model: str
    revision: str
    instruction_sha: str


class CapabilityAttributor(ABC):
    identity: AttributorIdentity  # set by the backend once its model is loaded

    @abstractmethod
    def attribute_many(self, requests: Sequence[AttributionRequest]) -> list[str]:
        """The raw answer (JSON `{"capability": "<key>"}`) for each request, in order; validated
        by `attribution_contract.parse_attribution`."""
