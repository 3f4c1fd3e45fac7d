"""Model backends as Dagster resources, chosen by environment.

QCT2I_ML_PROFILE=cpu (default): every generator partition draws with a tiny Stable Diffusion
pipeline and the judge is a tiny Qwen3-VL, both built in code into QCT2I_TINY_MODELS (default
<warehouse folder>/tiny_models) on first use and then loaded by the real loaders.
QCT2I_ML_PROFILE=gpu: the generators of seeds/generators.csv (a folder <QCT2I_MODEL_ROOT>/<model_id>
overrides the hub id) and the judge QCT2I_JUDGE_MODEL (default Qwen/Qwen3-VL-30B-A3B-Instruct) on
QCT2I_JUDGE_BACKEND (default vllm), its engine settings from the resource's config; a Thinking judge
(Qwen3-VL-*-Thinking) with QCT2I_JUDGE_REASONING_BUDGET=N, its most reasoning tokens per question.
Nothing here imports torch; the backends do, when a run loads them.
"""

import functools
import os
from pathlib import Path

import dagster as dg
from pydantic import Field

from ingestion.backends.api.generators import LOCAL, GeneratorSpec, load_generator_specs
from ingestion.backends.api.registry import create
from ingestion.backends.tiny.models import (
    TINY_SD_OVERRIDES,
    build_tiny_qwen3_vl,
    build_tiny_stable_diffusion,
    build_tiny_text_lm,
)
from ingestion.bundle.format import DEFAULT_JUDGE_ID
from ingestion.paths import warehouse_path

DEFAULT_JUDGE = "Qwen/Qwen3-VL-30B-A3B-Instruct"  # the choice is argued in docs/gpu.md
DEFAULT_OCR = "Qwen/Qwen3-VL-30B-A3B-Instruct"  # the paper reads text with Qwen3-VL-30B Instruct
DEFAULT_WRITER = "Qwen/Qwen3-235B-A22B"  # the paper's question writer (thinking off)


def default_tiny_dir() -> str:
    return os.environ.get("QCT2I_TINY_MODELS") or str(warehouse_path().parent / "tiny_models")


# The tiny models the cpu profile builds in code (ingestion.backends.tiny.models): a name, the file
# that shows a folder already holds one, and its builder.
TINY_MODELS = {
    "lm": ("config.json", build_tiny_text_lm),
    "sd": ("model_index.json", build_tiny_stable_diffusion),
    "vl": ("config.json", build_tiny_qwen3_vl),
    # a Thinking checkpoint's tokenizer: the cpu profile's judge when it is given a reasoning budget
    "vl-thinking": ("config.json", functools.partial(build_tiny_qwen3_vl, thinking=True)),
}


def _tiny(folder: Path, builder: str) -> str:
    """The folder, holding the tiny model `builder` names (built there on first use)."""
    if builder not in TINY_MODELS:
        known = ", ".join(sorted(TINY_MODELS))
        raise ValueError(f"unknown tiny model {builder!r}; known: {known}")
    marker, build = TINY_MODELS[builder]
    if not (folder / marker).exists():
        build(folder)
    return str(folder)


class ImageGeneratorResource(dg.ConfigurableResource):
    profile: str = "cpu"  # "cpu": tiny built-in pipeline; "gpu": the real generators
    model_root: str | None = None  # <model_root>/<model_id> overrides the hub id when present
    tiny_dir: str | None = None
    device: str = "auto"
    batch_size: int = 4

    def spec(self, model_id: str) -> GeneratorSpec:
        spec = load_generator_specs()[model_id]
        if spec.origin == LOCAL:  # a user's generator (`qct2i evaluate`): its own weights
            return spec
        if self.profile == "cpu":
            folder = Path(self.tiny_dir or default_tiny_dir()) / "stable_diffusion"
            return spec.with_overrides(source=_tiny(folder, "sd"), **TINY_SD_OVERRIDES)
        if self.model_root and (Path(self.model_root) / model_id).is_dir():
            return spec.with_overrides(source=str(Path(self.model_root) / model_id))
        return spec

    def load(self, spec: GeneratorSpec, batch_size: int | None = None):
        """The generator, loaded (offloaded or not) for draws of `batch_size` images, by default
        the resource's."""
        batch = batch_size or self.batch_size
        return create("generator", spec.backend, spec=spec, device=self.device, batch_size=batch)


class QuestionJudgeResource(dg.ConfigurableResource):
    profile: str = "cpu"
    backend: str = "vllm"  # or "transformers"
    model: str = DEFAULT_JUDGE
    revision: str | None = None
    judge_id: str = DEFAULT_JUDGE_ID  # the name its answers are keyed by (one identity per name)
    tiny_dir: str | None = None
    device: str = "auto"
    chunk_images: int = 64  # images per judge_many call (one vLLM generate()) and per append
    # vLLM engine settings (backend "vllm" only)
    max_model_len: int = 8192  # a 1 MP image is ~1k tokens; questions are short
    limit_mm_per_prompt: dict[str, int] = Field(default_factory=lambda: {"image": 1, "video": 0})
    tensor_parallel_size: int = 1
    gpu_memory_utilization: float = 0.9
    max_num_seqs: int | None = None  # vLLM's default when unset
    # a Thinking judge's most reasoning tokens per question (part of its identity: give it a
    # judge_id of its own); None: an Instruct judge, answering at once (docs/gpu.md)
    reasoning_budget: int | None = None

    def engine_settings(self) -> dict:
        settings = {
            "max_model_len": self.max_model_len,
            "limit_mm_per_prompt": dict(self.limit_mm_per_prompt),
            "tensor_parallel_size": self.tensor_parallel_size,
            "gpu_memory_utilization": self.gpu_memory_utilization,
        }
        if self.max_num_seqs is not None:
            settings["max_num_seqs"] = self.max_num_seqs
        return settings

    def load(self):
        thinking = (
            {} if self.reasoning_budget is None else {"reasoning_budget": self.reasoning_budget}
        )
        if self.profile == "cpu":
            tiny, name = ("vl-thinking", "qwen3_vl_thinking") if thinking else ("vl", "qwen3_vl")
            folder = Path(self.tiny_dir or default_tiny_dir()) / name
            return create(
                "judge",
                "transformers",
                source=_tiny(folder, tiny),
                model_name="tiny-qwen3-vl",
                revision=self.revision,  # pins the recorded revision (part of the judge's identity)
                device="cpu",
                **thinking,
            )
        engine = self.engine_settings() if self.backend == "vllm" else {}
        return create(
            "judge",
            self.backend,
            source=self.model,
            revision=self.revision,
            device=self.device,
            **engine,
            **thinking,
        )


class TextTranscriberResource(dg.ConfigurableResource):
    """The OCR reader of Eq. 3 (transformers Qwen3-VL): on the cpu profile the tiny model."""

    profile: str = "cpu"
    model: str = DEFAULT_OCR
    revision: str | None = None
    tiny_dir: str | None = None
    device: str = "auto"
    max_new_tokens: int = 2048  # a dense sign's JSON block list; cut answers are `truncated`

    def load(self):
        if self.profile == "cpu":
            folder = Path(self.tiny_dir or default_tiny_dir()) / "qwen3_vl"
            source, name = _tiny(folder, "vl"), "tiny-qwen3-vl"
        else:
            source, name = self.model, self.model
        return create(
            "transcriber",
            "transformers",
            source=source,
            model_name=name,
            revision=self.revision,
            device="cpu" if self.profile == "cpu" else self.device,
            max_new_tokens=self.max_new_tokens,
        )


class QuestionWriterResource(dg.ConfigurableResource):
    """The question writer of METHOD 13: on the cpu profile the tiny text LM through
    transformers; on gpu `backend` (default vllm) with `model` and its engine settings. The same
    model attributes questions' capabilities (`load_attributor`, METHOD 13a)."""

    profile: str = "cpu"
    backend: str = "vllm"
    model: str = DEFAULT_WRITER
    tiny_dir: str | None = None
    batch_size: int = 64  # prompts per write_many call (one LLM batch), validated and appended
    max_tokens: int = 2048
    tensor_parallel_size: int = 8  # 235B-A22B in bf16 is ~470 GB of weights
    max_model_len: int = 8192
    gpu_memory_utilization: float = 0.9

    def load(self, tags: list[str]):
        if self.profile == "cpu":
            # the tiny path constructs its backend directly, as _tiny builds its model
            from ingestion.backends.models.transformers_writer import TransformersQuestionWriter

            folder = Path(self.tiny_dir or default_tiny_dir()) / "text_lm"
            return TransformersQuestionWriter(
                _tiny(folder, "lm"),
                tags,
                model_name="tiny-text-lm",
                device="cpu",
                max_new_tokens=self.max_tokens,
            )
        engine = {
            "tensor_parallel_size": self.tensor_parallel_size,
            "max_model_len": self.max_model_len,
            "gpu_memory_utilization": self.gpu_memory_utilization,
        }
        return create(
            "question_writer",
            self.backend,
            source=self.model,
            tags=tags,
            max_tokens=self.max_tokens,
            **(engine if self.backend == "vllm" else {}),
        )

    def load_attributor(self, definitions: dict[str, str]):
        """The capability attributor (METHOD 13a) on the writer's own model and backend: on the
        cpu profile the tiny text LM through transformers (scoring each key), on gpu `backend`
        with `model` (vLLM: decoding constrained to the answer's schema)."""
        if self.profile == "cpu":
            folder = Path(self.tiny_dir or default_tiny_dir()) / "text_lm"
            return create(
                "attributor",
                "transformers",
                source=_tiny(folder, "lm"),
                definitions=definitions,
                model_name="tiny-text-lm",
                device="cpu",
            )
        engine = {
            "tensor_parallel_size": self.tensor_parallel_size,
            "max_model_len": self.max_model_len,
            "gpu_memory_utilization": self.gpu_memory_utilization,
        }
        return create(
            "attributor",
            self.backend,
            source=self.model,
            definitions=definitions,
            **(engine if self.backend == "vllm" else {}),
        )


def ml_resources_from_env() -> dict[str, dg.ConfigurableResource]:
    profile = os.environ.get("QCT2I_ML_PROFILE", "cpu")
    return {
        "image_generator": ImageGeneratorResource(
            profile=profile,
            model_root=os.environ.get("QCT2I_MODEL_ROOT"),
            # one device per drawing process (a Celery worker, a pod): "auto" is cuda:0 of the
            # GPUs CUDA_VISIBLE_DEVICES leaves it, or name one, e.g. cuda:3
            device=os.environ.get("QCT2I_GENERATOR_DEVICE", "auto"),
        ),
        "question_judge": QuestionJudgeResource(
            profile=profile,
            backend=os.environ.get("QCT2I_JUDGE_BACKEND", "vllm"),
            model=os.environ.get("QCT2I_JUDGE_MODEL", DEFAULT_JUDGE),
            **_judge_chunk_from_env(),
            **_reasoning_budget_from_env(),
        ),
        "text_transcriber": TextTranscriberResource(
            profile=profile, model=os.environ.get("QCT2I_OCR_MODEL", DEFAULT_OCR)
        ),
        "question_writer": QuestionWriterResource(
            profile=profile, model=os.environ.get("QCT2I_WRITER_MODEL", DEFAULT_WRITER)
        ),
    }


def _judge_chunk_from_env() -> dict[str, int]:
    """QCT2I_JUDGE_CHUNK_IMAGES: the judge's `chunk_images` where no run config sets it (as in
    `qct2i evaluate`); unset, the resource's default."""
    chunk = os.environ.get("QCT2I_JUDGE_CHUNK_IMAGES")
    return {"chunk_images": int(chunk)} if chunk else {}


def _reasoning_budget_from_env() -> dict[str, int]:
    """QCT2I_JUDGE_REASONING_BUDGET: a Thinking judge's reasoning budget (tokens per question);
    unset, an Instruct judge."""
    budget = os.environ.get("QCT2I_JUDGE_REASONING_BUDGET")
    return {"reasoning_budget": int(budget)} if budget else {}
