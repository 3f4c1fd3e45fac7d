"""Model backends as Dagster resources, chosen by environment.

QCT2I_ML_PROFILE=cpu (default): every generator partition draws with a tiny Stable Diffusion
pipeline and the judge is a tiny Qwen3-VL, both built in code into QCT2I_TINY_MODELS (default
<warehouse folder>/tiny_models) on first use and then loaded by the real loaders.
QCT2I_ML_PROFILE=gpu: the generators of seeds/generators.csv (a folder <QCT2I_MODEL_ROOT>/<model_id>
overrides the hub id) and the judge QCT2I_JUDGE_MODEL (default Qwen/Qwen3-VL-8B-Instruct).
Nothing here imports torch; the backends do, when a run loads them.
"""

import os
from pathlib import Path

import dagster as dg

from ingestion.backends.generators import GeneratorSpec, load_generator_specs
from ingestion.backends.registry import create
from ingestion.backends.tiny import TINY_SD_OVERRIDES
from ingestion.paths import warehouse_path

DEFAULT_JUDGE = "Qwen/Qwen3-VL-8B-Instruct"


def default_tiny_dir() -> str:
    return os.environ.get("QCT2I_TINY_MODELS") or str(warehouse_path().parent / "tiny_models")


def _tiny(folder: Path, builder: str) -> str:
    if not (folder / ("model_index.json" if builder == "sd" else "config.json")).exists():
        from ingestion.backends import tiny

        if builder == "sd":
            tiny.build_tiny_stable_diffusion(folder)
        else:
            tiny.build_tiny_qwen3_vl(folder)
    return str(folder)


class ImageGeneratorResource(dg.ConfigurableResource):
    profile: str = "cpu"  # "cpu": tiny built-in pipeline; "gpu": the real generators
    model_root: str | None = None  # <model_root>/<model_id> overrides the hub id when present
    tiny_dir: str | None = None
    device: str = "auto"
    batch_size: int = 4

    def spec(self, model_id: str) -> GeneratorSpec:
        spec = load_generator_specs()[model_id]
        if self.profile == "cpu":
            folder = Path(self.tiny_dir or default_tiny_dir()) / "stable_diffusion"
            return spec.with_overrides(source=_tiny(folder, "sd"), **TINY_SD_OVERRIDES)
        if self.model_root and (Path(self.model_root) / model_id).is_dir():
            return spec.with_overrides(source=str(Path(self.model_root) / model_id))
        return spec

    def load(self, spec: GeneratorSpec):
        return create("generator", "diffusers", spec=spec, device=self.device)


class QuestionJudgeResource(dg.ConfigurableResource):
    profile: str = "cpu"
    backend: str = "transformers"  # or "vllm"
    model: str = DEFAULT_JUDGE
    revision: str | None = None
    tiny_dir: str | None = None
    device: str = "auto"

    def load(self):
        if self.profile == "cpu":
            folder = Path(self.tiny_dir or default_tiny_dir()) / "qwen3_vl"
            return create(
                "judge",
                "transformers",
                source=_tiny(folder, "vl"),
                model_name="tiny-qwen3-vl",
                revision=self.revision,  # pins the recorded revision (part of the judge's identity)
                device="cpu",
            )
        return create(
            "judge", self.backend, source=self.model, revision=self.revision, device=self.device
        )


def ml_resources_from_env() -> dict[str, dg.ConfigurableResource]:
    profile = os.environ.get("QCT2I_ML_PROFILE", "cpu")
    return {
        "image_generator": ImageGeneratorResource(
            profile=profile, model_root=os.environ.get("QCT2I_MODEL_ROOT")
        ),
        "question_judge": QuestionJudgeResource(
            profile=profile,
            backend=os.environ.get("QCT2I_JUDGE_BACKEND", "transformers"),
            model=os.environ.get("QCT2I_JUDGE_MODEL", DEFAULT_JUDGE),
        ),
    }
