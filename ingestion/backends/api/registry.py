"""Backends by name, as lazy "module:Class" import paths (nothing heavy is imported here)."""

from __future__ import annotations

import importlib
from typing import Any

BACKENDS: dict[str, dict[str, str]] = {
    "generator": {
        "diffusers": "ingestion.backends.models.diffusers_generator:DiffusersGenerator",
        "hidream_o1": "ingestion.backends.models.external_generators:HiDreamO1Generator",
        "lens": "ingestion.backends.models.external_generators:LensGenerator",
    },
    "judge": {
        "transformers": "ingestion.backends.models.transformers_vl:TransformersJudge",
        "vllm": "ingestion.backends.models.vllm_backend:VllmJudge",
    },
    "transcriber": {
        "transformers": "ingestion.backends.models.transformers_vl:TransformersTranscriber",
    },
    "question_writer": {
        "recorded": "ingestion.backends.models.recorded_writer:RecordedQuestionWriter",
        "vllm": "ingestion.backends.models.vllm_backend:VllmQuestionWriter",
    },
    "attributor": {
        "recorded": "ingestion.backends.models.recorded_writer:RecordedCapabilityAttributor",
        "transformers": (
            "ingestion.backends.models.transformers_writer:TransformersCapabilityAttributor"
        ),
        "vllm": "ingestion.backends.models.vllm_backend:VllmCapabilityAttributor",
    },
}


def resolve(kind: str, name: str) -> type:
    """The backend class registered as `name` for `kind`, imported now."""
    try:
        target = BACKENDS[kind][name]
    except KeyError:
        known = {k: sorted(v) for k, v in BACKENDS.items()}
        raise KeyError(f"no {kind} backend named {name!r}; known: {known}") from None
    module, _, attribute = target.partition(":")
    return getattr(importlib.import_module(module), attribute)


def create(kind: str, name: str, **kwargs: Any):
    return resolve(kind, name)(**kwargs)
