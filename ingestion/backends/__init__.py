"""Model backends behind small interfaces: image generation, yes/no judging, text transcription and
question writing. Importing this package (or `ingestion`) never imports torch, diffusers,
transformers or vllm: concrete backends are registered by name as "module:Class" strings and
imported only by `registry.create`.
"""

from ingestion.backends.api.cache import cache_key
from ingestion.backends.api.interfaces import (
    GeneratedBatch,
    GenerationRequest,
    ImageGenerator,
    ImageQuestions,
    JudgeIdentity,
    Judgment,
    QuestionJudge,
    QuestionWriter,
    QuestionWriteRequest,
    TextTranscriber,
    Transcription,
    TranscriptionRequest,
)
from ingestion.backends.api.registry import BACKENDS, create, resolve

__all__ = [
    "BACKENDS",
    "GeneratedBatch",
    "GenerationRequest",
    "ImageGenerator",
    "ImageQuestions",
    "JudgeIdentity",
    "Judgment",
    "QuestionJudge",
    "QuestionWriteRequest",
    "QuestionWriter",
    "TextTranscriber",
    "Transcription",
    "TranscriptionRequest",
    "cache_key",
    "create",
    "resolve",
]
