"""Qwen3-VL through transformers: the yes/no judge and the text transcriber.

All questions of one image go in one batch (left-padded, one forward pass); the answer is the
greedy next token, and p_yes the softmax over the 'yes' and 'no' token logits at that position.
"""

from __future__ import annotations

import torch

from ingestion.backends.base import (
    ImageQuestions,
    JudgeIdentity,
    Judgment,
    QuestionJudge,
    TextTranscriber,
    Transcription,
    TranscriptionRequest,
    template_sha,
)
from ingestion.backends.cache import resolve_revision
from ingestion.backends.diffusers_generator import pick_device
from ingestion.backends.parsing import judgment_from_text, p_yes_from_logits, parse_blocks

JUDGE_INSTRUCTION = "{question} Answer yes or no."
OCR_INSTRUCTION = (
    'List every block of text you can read in the image as JSON: {"blocks": ["...", ...]}. '
    'If there is none, answer {"blocks": []}.'
)


class ComposedVLProcessor:
    """Qwen-VL processing from an image processor and a tokenizer, for installs where
    `AutoProcessor` cannot build Qwen3VLProcessor (its video processor needs torchvision).
    Expands each <|image_pad|> to grid_t*grid_h*grid_w / merge_size**2 tokens, as it does."""

    image_token = "<|image_pad|>"

    def __init__(self, folder: str):
        from transformers import AutoImageProcessor, AutoTokenizer

        self.tokenizer = AutoTokenizer.from_pretrained(folder)
        self.image_processor = AutoImageProcessor.from_pretrained(folder)

    def apply_chat_template(self, messages, **kwargs):
        return self.tokenizer.apply_chat_template(messages, **kwargs)

    def __call__(self, text, images, return_tensors="pt", padding=True):
        vision = self.image_processor(images=images, return_tensors=return_tensors)
        merge = self.image_processor.merge_size**2
        counts = iter([int(g.prod()) // merge for g in vision["image_grid_thw"]])
        expanded = []
        for prompt in text:
            parts = prompt.split(self.image_token)
            out = parts[0]
            for part in parts[1:]:
                out += "<|placeholder|>" * next(counts) + part
            expanded.append(out.replace("<|placeholder|>", self.image_token))
        encoded = self.tokenizer(expanded, return_tensors=return_tensors, padding=padding)
        image_id = self.tokenizer.convert_tokens_to_ids(self.image_token)
        mm_types = (encoded["input_ids"] == image_id).long()  # 1 image, 0 text (as transformers)
        return {**encoded, "mm_token_type_ids": mm_types, **vision}

    def batch_decode(self, ids, **kwargs):
        return self.tokenizer.batch_decode(ids, **kwargs)


def load_vl_processor(source: str):
    from transformers import AutoProcessor

    try:
        return AutoProcessor.from_pretrained(source)
    except (ImportError, AttributeError, ValueError, TypeError, OSError):
        return ComposedVLProcessor(source)


class _QwenVL:
    def __init__(
        self,
        source: str,
        revision: str | None = None,
        device: str = "auto",
        dtype: str = "bfloat16",
    ):
        from transformers import AutoModelForImageTextToText

        self.source = source
        self.device = pick_device(device)
        torch_dtype = getattr(torch, dtype) if self.device.type == "cuda" else torch.float32
        kwargs = {"dtype": torch_dtype}
        if revision:
            kwargs["revision"] = revision
        self.model = AutoModelForImageTextToText.from_pretrained(source, **kwargs)
        self.model = self.model.to(self.device).eval()
        self.processor = load_vl_processor(source)
        self.tokenizer = self.processor.tokenizer
        self.tokenizer.padding_side = "left"
        commit = getattr(self.model.config, "_commit_hash", None)
        self.revision = resolve_revision(source, revision, commit)

    def prompts(self, instructions: list[str]) -> list[str]:
        return [
            self.processor.apply_chat_template(
                [{"role": "user", "content": [{"type": "image"}, {"type": "text", "text": i}]}],
                add_generation_prompt=True,
                tokenize=False,
            )
            for i in instructions
        ]

    def inputs(self, image_path: str, instructions: list[str]):
        from PIL import Image

        with Image.open(image_path) as opened:
            image = opened.convert("RGB")
        encoded = self.processor(
            text=self.prompts(instructions),
            images=[image] * len(instructions),
            return_tensors="pt",
            padding=True,
        )
        return {k: v.to(self.device) for k, v in encoded.items()}


class TransformersJudge(QuestionJudge):
    def __init__(
        self,
        source: str,
        model_name: str | None = None,
        revision: str | None = None,
        device: str = "auto",
        dtype: str = "bfloat16",
    ):
        self.vl = _QwenVL(source, revision, device, dtype)
        self.model_name = model_name or source
        self.yes_id = self._single_token("yes")
        self.no_id = self._single_token("no")
        # The whole prompt a question is asked with (chat template applied, {question} left in).
        (self.prompt_template,) = self.vl.prompts([JUDGE_INSTRUCTION])
        self.identity = JudgeIdentity(
            self.model_name, self.vl.revision, template_sha(self.prompt_template)
        )

    def _single_token(self, word: str) -> int:
        ids = self.vl.tokenizer.encode(word, add_special_tokens=False)
        if len(ids) != 1:
            raise ValueError(f"{word!r} is not one token in this vocabulary: {ids}")
        return ids[0]

    def next_token_logits(self, item: ImageQuestions) -> torch.Tensor:
        instructions = [JUDGE_INSTRUCTION.format(question=q) for _, q in item.questions]
        with torch.inference_mode():
            out = self.vl.model(**self.vl.inputs(item.image_path, instructions))
        return out.logits[:, -1, :].float().cpu()  # left padding: the last position is the next

    def judge(self, item: ImageQuestions) -> tuple[Judgment, ...]:
        logits = self.next_token_logits(item)
        greedy = logits.argmax(dim=-1).tolist()
        results = []
        for (question_id, _), row, token in zip(item.questions, logits, greedy, strict=True):
            results.append(
                judgment_from_text(
                    item,
                    question_id,
                    self.vl.tokenizer.decode([token]),
                    lambda row=row: p_yes_from_logits(
                        float(row[self.yes_id]), float(row[self.no_id])
                    ),
                    self.identity,
                )
            )
        return tuple(results)


class TransformersTranscriber(TextTranscriber):
    def __init__(
        self,
        source: str,
        model_name: str | None = None,
        revision: str | None = None,
        device: str = "auto",
        dtype: str = "bfloat16",
        max_new_tokens: int = 256,
    ):
        self.vl = _QwenVL(source, revision, device, dtype)
        self.model_name = model_name or source
        self.max_new_tokens = max_new_tokens

    def transcribe(self, request: TranscriptionRequest) -> Transcription:
        inputs = self.vl.inputs(request.image_path, [OCR_INSTRUCTION])
        with torch.inference_mode():
            out = self.vl.model.generate(
                **inputs, max_new_tokens=self.max_new_tokens, do_sample=False
            )
        raw = self.vl.tokenizer.decode(
            out[0, inputs["input_ids"].shape[1] :], skip_special_tokens=True
        )
        blocks, reason = parse_blocks(raw)
        return Transcription(
            request.prompt_id,
            request.model_id,
            "ok" if blocks is not None else "unavailable",
            blocks or (),
            raw,
            reason,
            self.model_name,
            self.vl.revision,
        )
