"""The question writer (METHOD 13) on a causal LM through transformers: the prompts of a batch
left-padded in one greedy `generate`, each in the model's chat template with thinking off
(question_writer.writer_prompt). The output is raw text, validated by
question_writer.construct_questions like any writer's. On CPU it runs the tiny text LM
(tiny.build_tiny_text_lm); on GPUs the vLLM writer (vllm_backend.VllmQuestionWriter) is the fast
path for the paper's Qwen3-235B-A22B.

The same loader (`load_causal_lm`) serves the capability attributor
(`TransformersCapabilityAttributor`, METHOD 13a), which does not generate but scores: for each
question the log-probability of every taxonomy key's answer `{"capability": "<key>"}` after the
instruction, the most probable taken. That is the model's own choice among the answers the schema
allows (what constrained decoding aims at, exactly: greedy constrained decoding can commit to a
first token whose key is the less probable), always a valid key, deterministic. Per question the
instruction runs once and its key-value cache serves every key's continuation, batched.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

import torch

from ingestion.backends.api.attribution_contract import (
    ANSWER_PREFIX,
    ANSWER_SUFFIX,
    attribution_prompt,
    instruction_sha,
)
from ingestion.backends.api.cache import resolve_revision
from ingestion.backends.api.interfaces import (
    AttributionRequest,
    AttributorIdentity,
    CapabilityAttributor,
    QuestionWriter,
    QuestionWriteRequest,
)
from ingestion.backends.api.question_contract import writer_prompt
from ingestion.backends.models.devices import pick_device


def load_causal_lm(
    source: str,
    revision: str | None,
    device: torch.device,
    dtype: str = "bfloat16",
    local_files_only: bool = False,
):
    """(model, tokenizer, recorded revision) of a causal LM: `dtype` on CUDA, float32 elsewhere,
    loaded straight onto the device as the weights are read, never whole in host memory first."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    torch_dtype = getattr(torch, dtype) if device.type == "cuda" else torch.float32
    kwargs = {"dtype": torch_dtype, "device_map": str(device), "local_files_only": local_files_only}
    if revision:
        kwargs["revision"] = revision
    model = AutoModelForCausalLM.from_pretrained(source, **kwargs).eval()
    tokenizer = AutoTokenizer.from_pretrained(
        source,
        local_files_only=local_files_only,
        **({"revision": revision} if revision else {}),
    )
    commit = getattr(model.config, "_commit_hash", None)
    return model, tokenizer, resolve_revision(source, revision, commit)


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
        self.tags = list(tags)
        self.device = pick_device(device)
        self.model, self.tokenizer, self.revision = load_causal_lm(
            source, revision, self.device, dtype
        )
        self.tokenizer.padding_side = "left"
        self.model_name = model_name or source
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


class TransformersCapabilityAttributor(CapabilityAttributor):
    """Each question's capability as the taxonomy key whose answer the causal LM finds most
    probable (module docstring). `definitions`: key -> scope (attribution_contract's
    `read_definitions`). `local_files_only`: load from the local cache or folder only (`qct2i
    import-release --attribute-with` never downloads)."""

    def __init__(
        self,
        source: str,
        definitions: dict[str, str],
        model_name: str | None = None,
        revision: str | None = None,
        device: str = "auto",
        dtype: str = "bfloat16",
        local_files_only: bool = False,
    ):
        self.definitions = dict(definitions)
        self.keys = list(self.definitions)
        self.device = pick_device(device)
        self.model, self.tokenizer, resolved = load_causal_lm(
            source, revision, self.device, dtype, local_files_only
        )
        self.identity = AttributorIdentity(
            model_name or source, resolved, instruction_sha(self.definitions)
        )

    def attribute_many(self, requests: Sequence[AttributionRequest]) -> list[str]:
        return [self._attribute(request) for request in requests]

    def _attribute(self, request: AttributionRequest) -> str:
        context = attribution_prompt(self.tokenizer, self.definitions, request) + ANSWER_PREFIX
        scores = self.continuation_logprobs(context, [k + ANSWER_SUFFIX for k in self.keys])
        # the most probable key; on an exact tie the first in the taxonomy's order
        best = max(range(len(self.keys)), key=lambda i: (scores[i], -i))
        return json.dumps({"capability": self.keys[best]})

    def continuation_logprobs(self, context: str, continuations: list[str]) -> list[float]:
        """log P(continuation | context) for each continuation, summed over its tokens. Each is
        tokenized with the context (a byte-level BPE may merge across the seam) and scored from
        the first token where any departs from the context's own tokens, so every continuation
        is scored on the same prefix. The prefix runs once and its cache is shared by all."""

        def encode(text: str) -> list[int]:
            return self.tokenizer(text, add_special_tokens=False)["input_ids"]

        own = encode(context)
        sequences = [encode(context + c) for c in continuations]
        shared = min(min(_common_prefix(own, s) for s in sequences), len(own))
        shared = max(1, min(shared, min(len(s) for s in sequences) - 1))
        tails = [s[shared:] for s in sequences]
        width = max(len(t) for t in tails)
        pad = self.tokenizer.pad_token_id or 0
        ids = torch.tensor([t + [pad] * (width - len(t)) for t in tails], device=self.device)
        mask = torch.tensor(
            [[1] * (shared + len(t)) + [0] * (width - len(t)) for t in tails], device=self.device
        )
        with torch.inference_mode():
            prefix = torch.tensor([sequences[0][:shared]], device=self.device)
            head = self.model(input_ids=prefix, use_cache=True, logits_to_keep=1)
            cache = head.past_key_values
            cache.batch_repeat_interleave(len(tails))
            rest = self.model(input_ids=ids, attention_mask=mask, past_key_values=cache)
        # tail token 0 is predicted by the prefix's last position, token i by the tail's i - 1
        first = head.logits[:, -1:].float().expand(len(tails), 1, -1)
        logprobs = torch.log_softmax(torch.cat([first, rest.logits[:, :-1].float()], 1), -1)
        token_lp = logprobs.gather(-1, ids[..., None])[..., 0]
        return [float(token_lp[row, : len(tail)].sum()) for row, tail in enumerate(tails)]


def _common_prefix(a: list[int], b: list[int]) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n
