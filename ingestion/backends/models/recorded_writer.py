"""A question writer and a capability attributor that replay recorded LLM outputs (tests,
audits, re-validation)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ingestion.backends.api.interfaces import (
    AttributionRequest,
    AttributorIdentity,
    CapabilityAttributor,
    QuestionWriter,
    QuestionWriteRequest,
)


class RecordedQuestionWriter(QuestionWriter):
    """Replays recorded LLM outputs by prompt id (tests, audits, re-validation)."""

    def __init__(self, outputs: Mapping[str, str]):
        self.outputs = dict(outputs)

    def write(self, request: QuestionWriteRequest) -> str:
        return self.outputs[request.prompt_id]


class RecordedCapabilityAttributor(CapabilityAttributor):
    """Replays recorded attribution answers by question text; `asked` counts the questions it
    was asked (a cached question is not asked)."""

    def __init__(
        self,
        outputs: Mapping[str, str],
        model: str = "recorded",
        revision: str = "recorded",
        instruction_sha: str = "recorded",
    ):
        self.outputs = dict(outputs)
        self.identity = AttributorIdentity(model, revision, instruction_sha)
        self.asked = 0

    def attribute_many(self, requests: Sequence[AttributionRequest]) -> list[str]:
        self.asked += len(requests)
        return [self.outputs[request.text] for request in requests]
