"""A judge and an OCR reader without a model, which record the image paths they are given: for the
tests of what the runs hand to a backend (test_run_image_paths.py, and the GPU assets' tests)."""

from __future__ import annotations

from ingestion.backends.api.interfaces import (
    ImageQuestions,
    JudgeIdentity,
    Judgment,
    QuestionJudge,
    TextTranscriber,
    Transcription,
    TranscriptionRequest,
)

IDENTITY = JudgeIdentity("fake-judge", "r1", "t1")


class RecordingJudge(QuestionJudge):
    """Answers yes to everything and records the image paths it was given."""

    identity = IDENTITY

    def __init__(self):
        self.opened: list[str] = []

    def judge(self, item: ImageQuestions) -> tuple[Judgment, ...]:
        self.opened.append(item.image_path)
        return tuple(
            Judgment(item.prompt_id, item.model_id, qid, "yes", 0.9, "yes", None, *_identity())
            for qid, _text in item.questions
        )


def _identity() -> tuple[str, str, str]:
    return IDENTITY.judge_model, IDENTITY.judge_revision, IDENTITY.prompt_template_sha


class RecordingReader(TextTranscriber):
    """Reads "hi" from every image and records the image paths it was given."""

    ocr_model, ocr_revision = "fake-ocr", "r1"

    def __init__(self):
        self.opened: list[str] = []

    def transcribe(self, request: TranscriptionRequest) -> Transcription:
        self.opened.append(request.image_path)
        return Transcription(
            request.prompt_id, "lens", "ok", ("hi",), '["hi"]', None, "fake-ocr", "r1"
        )
