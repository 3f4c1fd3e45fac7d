"""The question writer (METHOD 13) on a causal LM through transformers: the prompts of a batch
left-padded in one greedy `generate`, each in the model's chat template with thinking off
(question_writer.writer_prompt). The output is raw text, validated by
question_writer.construct_questions like any writer's. On CPU it runs the tiny text LM
(tiny.build_tiny_text_lm); on GPUs the vLLM writer (vllm_backend.VllmQuestionWriter) is the fast
path for the paper's Qwen3-235B-A22B.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from ingestion.backends.api.cache import resolve_revision
from ingestion.backends.api.interfaces import QuestionWriter, QuestionWriteRequest
from ingestion.backends.api.question_contract import writer_prompt
from ingestion.backends.models.devices import pick_device


class TransformersQuestionWriter(QuestionWriter):
    def __init__(
        self,
        source: str,
        tags: list[str],
        model_name: str | None = None,
        revision: str | None = None,
        device: str = "auto",
        dtype: str = "bfloat16",
        max_new_tokens: int = 1024,
    ):
        from transformers import AutoModelForCausalLM, AutoTokenizer

        self.tags = list(tags)
        self.device = pick_device(device)
        torch_dtype = getattr(torch, dtype) if self.device.type == "cuda" else torch.float32
        # straight onto the device as the weights are read, never whole in host memory first
        kwargs = {"dtype": torch_dtype, "device_map": str(self.device)}
        if revision:
            kwargs["revision"] = revision
        self.model = AutoModelForCausalLM.from_pretrained(source, **kwargs).eval()
        self.tokenizer = AutoTokenizer.from_pretrained(
            source, **({"revision": revision} if revision else {})
        )
        self.tokenizer.padding_side = "left"
        self.model_name = model_name or source
        self.revision = resolve_revision(
            source, revision, getattr(self.model.config, "_commit_hash", None)
        )
        self.max_new_tokens = max_new_tokens

    def write(self, request: QuestionWriteRequest) -> str:
        (raw,) = self.write_many([request])
        return raw

    def write_many(self, requests: Sequence[QuestionWriteRequest]) -> list[str]:
        prompts = [writer_prompt(self.tokenizer, self.tags, r.text) for r in requests]
        inputs = self.tokenizer(
            prompts, return_tensors="pt", padding=True, add_special_tokens=False
        ).to(self.device)
        with torch.inference_mode():
            out = self.model.generate(
                **inputs,
                max_new_tokens=self.max_new_tokens,
                do_sample=False,
                pad_token_id=self.tokenizer.pad_token_id,
            )
        new = out[:, inputs["input_ids"].shape[1] :]
        return self.tokenizer.batch_decode(new, skip_special_tokens=True)
