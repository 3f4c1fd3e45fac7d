"""A question writer that replays recorded LLM outputs (tests, audits, re-validation)."""

from __future__ import annotations

from collections.abc import Mapping

from ingestion.backends.api.interfaces import QuestionWriter, QuestionWriteRequest


class RecordedQuestionWriter(QuestionWriter):
    """Replays recorded LLM outputs by prompt id (tests, audits, re-validation)."""

    def __init__(self, outputs: Mapping[str, str]):
        self.outputs = dict(outputs)

    def write(self, request: QuestionWriteRequest) -> str:
        return self.outputs[request.prompt_id]
