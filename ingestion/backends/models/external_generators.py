"""Generators that diffusers cannot load: they run through their authors' own inference code.

HiDream-O1-Image ships no `model_index.json` and Lens ships its own inference code and pipeline
class (issues 10 and 23). Neither code is a package installed here, so each backend refuses to
start with a message that says what to install, instead of a silent fallback to a diffusers
class that would draw other images (or crash mid-run). A backend around the official code
replaces the refusal once that code is installable.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence

from ingestion.backends.api.generators import GeneratorSpec
from ingestion.backends.api.interfaces import GeneratedBatch, GenerationRequest, ImageGenerator


class GeneratorUnavailableError(RuntimeError):
    """A generator whose official inference code is not installed."""


class OfficialCodeGenerator(ImageGenerator):
    """A generator run by its authors' code: `module` must be importable, else a refusal."""

    backend: str
    module: str  # the import name of the official inference code
    install_hint: str

    def __init__(self, spec: GeneratorSpec, device: str = "auto", batch_size: int = 1):
        self.spec = spec
        self.model_id = spec.model_id
        if importlib.util.find_spec(self.module) is None:
            raise GeneratorUnavailableError(
                f"generator {spec.model_id} ({spec.source}) runs through its official "
                f"inference code, not diffusers: Python module {self.module!r} is not "
                f"installed. {self.install_hint}"
            )
        raise GeneratorUnavailableError(  # pragma: no cover - needs the official code
            f"generator {spec.model_id}: module {self.module!r} is installed but no backend "
            "around it is written yet (ingestion/backends/models/external_generators.py)"
        )

    def generate(self, requests: Sequence[GenerationRequest]) -> GeneratedBatch:
        raise NotImplementedError  # pragma: no cover - __init__ never returns


class HiDreamO1Generator(OfficialCodeGenerator):
    backend = "hidream_o1"
    module = "hidream_o1"
    install_hint = (
        "Install the HiDream-O1-Image inference code from its authors' repository (HiDream-ai; "
        "the model card names it) into this environment, and download the weights of "
        "HiDream-ai/HiDream-O1-Image."
    )


class LensGenerator(OfficialCodeGenerator):
    backend = "lens"
    module = "lens"
    install_hint = (
        "Install Microsoft's Lens inference code (github.com/microsoft/Lens, arXiv 2605.21573; "
        "its LensPipeline is not in diffusers) into this environment, and download the weights "
        "of microsoft/Lens."
    )
