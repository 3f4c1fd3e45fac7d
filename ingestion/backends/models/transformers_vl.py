"""Qwen3-VL through transformers: the yes/no judge and the text transcriber.

The judge encodes each image once and answers all of its questions from that cached prefix (one
batch of question suffixes, left-padded); the answer is the greedy next token, and p_yes the
log-sum-exp rule over every spelling of yes and no at that position (parsing.answer_spellings,
parsing.p_yes_from_answer_scores: the same rule as the vLLM judge).

A Thinking judge (`reasoning_budget` set: Qwen3-VL-*-Thinking) first reasons: all questions of an
image generate greedily as one left-padded batch, up to the budget, stopping at `</think>`; then
each question whose reasoning ended is asked again with its reasoning and `</think>\n\n` appended
(parsing.ANSWER_AFTER_REASONING), in one batch, and its answer and p_yes are read from that next
token exactly as above. A reasoning the budget cut off is a missing answer with its reason.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from ingestion.backends.api.cache import resolve_revision
from ingestion.backends.api.interfaces import (
    JUDGE_IMAGE_PIXELS,
    ImageQuestions,
    JudgeEngine,
    JudgeIdentity,
    Judgment,
    QuestionJudge,
    TextTranscriber,
    Transcription,
    TranscriptionRequest,
    capped_image_size,
    template_sha,
)
from ingestion.backends.api.parsing import (
    ANSWER_AFTER_REASONING,
    REASONING_UNCLOSED,
    THINK_END,
    answer_spellings,
    judgment_after_reasoning,
    judgment_from_text,
    opened_for_reasoning,
    over_budget,
    p_yes_from_token_scores,
    read_transcription,
)
from ingestion.backends.models.devices import device_name, pick_device
from ingestion.backends.models.images import load_rgb

JUDGE_INSTRUCTION = "{question} Answer yes or no."
VISION_END = "<|vision_end|>"  # Qwen-VL's end-of-image special token
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

    def __call__(self, text, images, return_tensors="pt", padding=True, **image_kwargs):
        vision = self.image_processor(images=images, return_tensors=return_tensors, **image_kwargs)
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
        # straight onto the device as the weights are read (`device_map`): loading first and
        # then `.to(device)` would hold the whole judge in host memory (about 58 GiB in bf16)
        kwargs = {"dtype": torch_dtype, "device_map": str(self.device)}
        if revision:
            kwargs["revision"] = revision
        self.model = AutoModelForImageTextToText.from_pretrained(source, **kwargs).eval()
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
        image = load_rgb(image_path)
        encoded = self.processor(
            text=self.prompts(instructions),
            images=[image] * len(instructions),
            return_tensors="pt",
            padding=True,
        )
        return {k: v.to(self.device) for k, v in encoded.items()}


class TransformersJudge(QuestionJudge):
    """All questions of one image in two forward passes: the image prefix once (the vision
    encoder runs once per image; its K/V are kept), then every question's suffix as one
    left-padded batch that attends to that cached prefix. Only the last position's logits are
    computed (`logits_to_keep=1`): the next token after the whole prompt."""

    def __init__(
        self,
        source: str,
        model_name: str | None = None,
        revision: str | None = None,
        device: str = "auto",
        dtype: str = "bfloat16",
        image_pixels: int = JUDGE_IMAGE_PIXELS,
        reasoning_budget: int | None = None,
    ):
        """`image_pixels`: the image budget (interfaces.JUDGE_IMAGE_PIXELS), in the identity.
        `reasoning_budget`: a Thinking judge's most reasoning tokens per question (in the
        identity); None for an Instruct judge, which answers at once."""
        self.vl = _QwenVL(source, revision, device, dtype)
        self.model_name = model_name or source
        own = self.vl.processor.image_processor.size
        self.image_size = capped_image_size(
            {edge: own[edge] for edge in ("shortest_edge", "longest_edge")}, image_pixels
        )
        self.answer_tokens = answer_spellings(self.vl.tokenizer)
        if not self.answer_tokens:
            raise ValueError(f"{source}: no single-token spelling of yes or no in its vocabulary")
        # The whole prompt a question is asked with (chat template applied, {question} left in).
        (self.prompt_template,) = self.vl.prompts([JUDGE_INSTRUCTION])
        self.reasoning_budget = reasoning_budget
        if reasoning_budget is not None:
            self.think_end = thinking_end_token(self.vl.tokenizer, reasoning_budget, source)
            self.stop_ids = stop_token_ids(self.vl.model.generation_config, self.vl.tokenizer)
            self.prompt_template = opened_for_reasoning(self.prompt_template)
        self.image_prefix, self.question_suffix = split_after_image(self.prompt_template)
        sha = template_sha(self.prompt_template, image_pixels, reasoning_budget)
        self.identity = JudgeIdentity(self.model_name, self.vl.revision, sha)
        import transformers

        self.engine = JudgeEngine(
            "transformers", transformers.__version__, device_name(self.vl.device)
        )

    def encode_prefix(self, image_path: str, image=None):
        """The image prefix every question of the image shares, the image within the budget
        (`image`: the file already decoded, read here when not given)."""
        return self.vl.processor(
            text=[self.image_prefix],
            images=[image if image is not None else load_rgb(image_path)],
            return_tensors="pt",
            size=self.image_size,
        )

    def load_images(self, items: Sequence[ImageQuestions]) -> list:
        return [load_rgb(item.image_path) for item in items]

    def judge_many(
        self, items: Sequence[ImageQuestions], images: Sequence | None = None
    ) -> list[tuple[Judgment, ...]]:
        images = images if images is not None else [None] * len(items)
        return [self.judge(item, image) for item, image in zip(items, images, strict=True)]

    def next_token_logits(self, item: ImageQuestions, image=None) -> torch.Tensor:
        """(questions, vocabulary) logits of the token after each question's full prompt."""
        model, device = self.vl.model, self.vl.device
        prefix = {k: v.to(device) for k, v in self.encode_prefix(item.image_path, image).items()}
        suffixes = [
            self.vl.tokenizer.encode(
                self.question_suffix.replace("{question}", q), add_special_tokens=False
            )
            for _, q in item.questions
        ]
        with torch.inference_mode():
            # Multimodal RoPE positions of the prefix: the text after it continues at max + 1.
            positions, _ = model.model.get_rope_index(
                prefix["input_ids"],
                image_grid_thw=prefix["image_grid_thw"],
                attention_mask=prefix["attention_mask"],
                mm_token_type_ids=prefix["mm_token_type_ids"],
            )
            cache = model(
                **prefix, position_ids=positions, use_cache=True, logits_to_keep=1
            ).past_key_values
            cache.batch_repeat_interleave(len(suffixes))
            batch = left_padded_suffixes(
                suffixes,
                prefix_length=prefix["input_ids"].shape[1],
                next_position=int(positions.max()) + 1,
                pad_id=self.vl.tokenizer.pad_token_id,
            )
            out = model(
                **{k: v.to(device) for k, v in batch.items()},
                past_key_values=cache,
                use_cache=False,
                logits_to_keep=1,
            )
        return out.logits[:, -1, :].float().cpu()  # left padding: the last position is the next

    def judge(self, item: ImageQuestions, image=None) -> tuple[Judgment, ...]:
        if self.reasoning_budget is not None:
            return self.judge_after_reasoning(item, image)
        logits = self.next_token_logits(item, image)
        return tuple(
            judgment_from_text(item, question_id, *self.read_answer(row), self.identity)
            for (question_id, _), row in zip(item.questions, logits, strict=True)
        )

    def read_answer(self, logits: torch.Tensor):
        """(the greedy token's text, p_yes by the spelling rule) from one next-token logit row."""
        answer_ids = sorted(self.answer_tokens)
        scores = dict(zip(answer_ids, logits[answer_ids].tolist(), strict=True))
        raw = self.vl.tokenizer.decode([int(logits.argmax())])
        return raw, lambda: p_yes_from_token_scores(scores, self.answer_tokens)

    def judge_after_reasoning(self, item: ImageQuestions, image=None) -> tuple[Judgment, ...]:
        """A Thinking judge: every question reasons first (one batch, up to the budget), then the
        questions whose reasoning ended are answered after it (one more batch)."""
        image = image if image is not None else load_rgb(item.image_path)
        prompts = [self.prompt_template.replace("{question}", q) for _, q in item.questions]
        reasonings = self.reason(prompts, image)
        ended = [i for i, (_, unanswered) in enumerate(reasonings) if unanswered is None]
        after = [prompts[i] + reasonings[i][0] + ANSWER_AFTER_REASONING for i in ended]
        answers = dict(zip(ended, self.last_logits(after, image), strict=True)) if ended else {}
        return tuple(
            judgment_after_reasoning(
                item,
                question_id,
                reasoning,
                unanswered,
                *(self.read_answer(answers[i]) if i in answers else ("", lambda: None)),
                self.identity,
            )
            for i, ((question_id, _), (reasoning, unanswered)) in enumerate(
                zip(item.questions, reasonings, strict=True)
            )
        )

    def reason(self, prompts: list[str], image) -> list[tuple[str, str | None]]:
        """(reasoning text, None) per prompt whose reasoning ended with `</think>` within the
        budget; (the text so far, why there is no answer) for one the budget cut off or that
        ended its turn without closing the reasoning."""
        encoded = self.encode_prompts(prompts, image)
        with torch.inference_mode():
            out = self.vl.model.generate(
                **encoded,
                max_new_tokens=self.reasoning_budget,
                do_sample=False,
                eos_token_id=[self.think_end, *self.stop_ids],
                pad_token_id=self.vl.tokenizer.pad_token_id,
            )
        reasonings = []
        for row in out[:, encoded["input_ids"].shape[1] :].tolist():
            tokens, unanswered = self.split_reasoning(row)
            text = self.vl.tokenizer.decode(tokens, skip_special_tokens=True)
            reasonings.append((text, unanswered))
        return reasonings

    def encode_prompts(self, prompts: list[str], image) -> dict:
        """Whole prompts, each with the image within the budget, left-padded into one batch on
        the model's device (the Thinking path: its reasoning differs per question, so no shared
        image prefix)."""
        encoded = self.vl.processor(
            text=prompts,
            images=[image] * len(prompts),
            return_tensors="pt",
            padding=True,
            size=self.image_size,
        )
        return {k: v.to(self.vl.device) for k, v in encoded.items()}

    def split_reasoning(self, generated: list[int]) -> tuple[list[int], str | None]:
        """The reasoning tokens of one generated row (up to its first stop; `generate` pads a
        row that stopped early) and why there is no answer: None when `</think>` ended it."""
        stops = (self.think_end, *self.stop_ids)
        end = next((i for i, token in enumerate(generated) if token in stops), None)
        if end is None:
            return generated, over_budget(self.reasoning_budget)
        unanswered = None if generated[end] == self.think_end else REASONING_UNCLOSED
        return generated[:end], unanswered

    def last_logits(self, prompts: list[str], image) -> torch.Tensor:
        """(prompts, vocabulary) logits of the token after each whole prompt (left-padded)."""
        with torch.inference_mode():
            out = self.vl.model(
                **self.encode_prompts(prompts, image),
                use_cache=False,
                logits_to_keep=1,
            )
        return out.logits[:, -1, :].float().cpu()


def thinking_end_token(tokenizer, budget: int, source: str) -> int:
    """The id of `</think>`, which ends a Thinking model's reasoning; refuses a budget under one
    token and a vocabulary without it (an Instruct checkpoint asked to think)."""
    if budget < 1:
        raise ValueError(f"reasoning_budget must be at least 1 token, not {budget}")
    token = tokenizer.convert_tokens_to_ids(THINK_END)
    if token is None or token == tokenizer.unk_token_id:
        raise ValueError(f"{source}: no {THINK_END} token in its vocabulary: not a Thinking model")
    return token


def split_after_image(template: str) -> tuple[str, str]:
    """The rendered prompt cut right after the image block: the prefix every question of an
    image shares, and the rest with {question}. The cut is at a special token, which the
    tokenizer never merges with its neighbours, so the two parts tokenise as the whole does."""
    if "{question}" not in template or VISION_END not in template.split("{question}")[0]:
        raise ValueError(f"the judge prompt has no image before its question: {template!r}")
    cut = template.index(VISION_END) + len(VISION_END)
    return template[:cut], template[cut:]


def left_padded_suffixes(
    suffixes: list[list[int]], prefix_length: int, next_position: int, pad_id: int
) -> dict[str, torch.Tensor]:
    """Question suffixes as one batch after a cached prefix of `prefix_length` tokens: padded on
    the left (so every row's last position is its own next token), the mask covering prefix and
    suffix, and each real token's position continuing the prefix's (the 3 M-RoPE rows agree on
    text), pads masked out."""
    width = max(len(s) for s in suffixes)
    ids = torch.full((len(suffixes), width), pad_id, dtype=torch.long)
    mask = torch.zeros((len(suffixes), prefix_length + width), dtype=torch.long)
    mask[:, :prefix_length] = 1
    positions = torch.zeros((len(suffixes), width), dtype=torch.long)
    for row, tokens in enumerate(suffixes):
        start = width - len(tokens)
        ids[row, start:] = torch.tensor(tokens)
        mask[row, prefix_length + start :] = 1
        positions[row, start:] = torch.arange(next_position, next_position + len(tokens))
    return {
        "input_ids": ids,
        "attention_mask": mask,
        "position_ids": positions.unsqueeze(0).expand(3, -1, -1),
    }


class TransformersTranscriber(TextTranscriber):
    """The OCR reader of Eq. 3: greedy generation of a JSON block list. `max_new_tokens` bounds
    the answer (a dense sign or a page of text needs far more than a short label); an answer cut
    at that bound is `unavailable` with reason `truncated`, one that ended but does not parse is
    `unavailable` with `unparseable: ...` (parsing.read_transcription)."""

    def __init__(
        self,
        source: str,
        model_name: str | None = None,
        revision: str | None = None,
        device: str = "auto",
        dtype: str = "bfloat16",
        max_new_tokens: int = 2048,
    ):
        self.vl = _QwenVL(source, revision, device, dtype)
        self.model_name = model_name or source
        self.max_new_tokens = max_new_tokens
        self.stop_ids = stop_token_ids(self.vl.model.generation_config, self.vl.tokenizer)
        self.ocr_model, self.ocr_revision = self.model_name, self.vl.revision

    def transcribe(self, request: TranscriptionRequest) -> Transcription:
        inputs = self.vl.inputs(request.image_path, [OCR_INSTRUCTION])
        with torch.inference_mode():
            out = self.vl.model.generate(
                **inputs,
                max_new_tokens=self.max_new_tokens,
                do_sample=False,
                eos_token_id=self.stop_ids,
                pad_token_id=self.vl.tokenizer.pad_token_id,
            )
        new = out[0, inputs["input_ids"].shape[1] :].tolist()
        finished = bool(new) and new[-1] in self.stop_ids
        raw = self.vl.tokenizer.decode(new, skip_special_tokens=True)
        blocks, reason = read_transcription(raw, finished)
        return Transcription(
            request.prompt_id,
            request.model_id,
            "ok" if blocks is not None else "unavailable",
            blocks or (),
            raw,
            reason,
            self.ocr_model,
            self.ocr_revision,
        )


def stop_token_ids(generation_config, tokenizer) -> list[int]:
    """The tokens that end an answer: the checkpoint's generation config's eos ids (Qwen3-VL
    lists <|im_end|> and <|endoftext|>), else the tokenizer's eos."""
    configured = generation_config.eos_token_id
    ids = configured if isinstance(configured, list) else [configured]
    ids = [i for i in ids if i is not None] or [tokenizer.eos_token_id]
    if None in ids:
        raise ValueError("the OCR model defines no end-of-answer token")
    return ids
