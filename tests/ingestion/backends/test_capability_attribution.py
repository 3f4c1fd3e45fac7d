"""Capability attribution by a language model (METHOD 13a; docs/attribution.md, "By a language
model"): the tiny text LM through the real loader and scorer, the driver over a bundle folder (with
recorded answers for refusals), the cache, and `qct2i import-release --attribute-with` end to end
into `fct_attribution_agreement`.

The tiny text LM's hidden state is the same at every position (tiny.build_tiny_text_lm), so its
head alone decides the answer: a head that favours one key's tokens makes every question that
key. The scorer's exactness is checked on a copy with random weights against full forward passes.
"""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path

import pytest
import torch

from ingestion.backends.api.attribution_contract import (
    ANSWER_PREFIX,
    ANSWER_SUFFIX,
    attribution_prompt,
    instruction_sha,
    parse_attribution,
    read_definitions,
)
from ingestion.backends.api.interfaces import AttributionRequest
from ingestion.backends.api.registry import create
from ingestion.backends.drivers.attribution_runs import FAILURES_FILE, run_attribution
from ingestion.backends.models.recorded_writer import RecordedCapabilityAttributor
from ingestion.backends.tiny.models import build_tiny_text_lm, set_text_lm_logits
from ingestion.bundle import read_questions_file
from ingestion.bundle.load import DEFAULT_TAXONOMY_SEED
from ingestion.sources.releases import convert_folder
from tests.helpers import query, run_main
from tests.ingestion.sources.test_tiif_release import write_tiif_fixture

DEFINITIONS = read_definitions(DEFAULT_TAXONOMY_SEED)
KEYS = set(DEFINITIONS)
FAVOURED = "color"  # the key the steered head makes every answer


def _jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _attributor(folder: Path, name: str = "tiny"):
    return create(
        "attributor",
        "transformers",
        source=str(folder),
        definitions=DEFINITIONS,
        model_name=name,
        device="cpu",
        local_files_only=True,
    )


def _tails(tokenizer, context: str) -> dict[str, list[int]]:
    """Each key's answer tokens after `context`, read off the tokenizer: the context's own tokens
    must be a prefix of the whole answer's (the seam after `"` does not merge here)."""
    own = tokenizer(context, add_special_tokens=False)["input_ids"]
    tails = {}
    for key in DEFINITIONS:
        whole = tokenizer(context + key + ANSWER_SUFFIX, add_special_tokens=False)["input_ids"]
        assert whole[: len(own)] == own
        tails[key] = whole[len(own) :]
    return tails


@pytest.fixture(scope="module")
def steered(tmp_path_factory) -> Path:
    """The tiny text LM whose head favours the tokens of FAVOURED's answer (+30 each)."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    folder = build_tiny_text_lm(tmp_path_factory.mktemp("attribution") / "text_lm")
    tokenizer = AutoTokenizer.from_pretrained(folder)
    context = attribution_prompt(tokenizer, DEFINITIONS, AttributionRequest("q", "en", "x"))
    tails = _tails(tokenizer, context + ANSWER_PREFIX)
    favoured = set(tails[FAVOURED])
    # every other key needs a token the head does not favour, or it could tie
    assert all(set(tail) - favoured for key, tail in tails.items() if key != FAVOURED)
    model = AutoModelForCausalLM.from_pretrained(folder)
    set_text_lm_logits(model, dict.fromkeys(favoured, 30.0))
    model.save_pretrained(folder)
    return folder


def test_the_answer_is_the_key_the_model_finds_most_probable(steered, tmp_path):
    """Guards against a scorer that reads anything but the model (the rule's label, the first key,
    a fixed guess) and against a cache that misplaces positions: with random weights, each key's
    score equals log P(answer | instruction) from a plain forward pass over the whole text, and
    the answer is their argmax; with the steered head, the favoured key for every question."""
    from transformers import AutoModelForCausalLM

    folder = tmp_path / "random"
    shutil.copytree(steered, folder)
    model = AutoModelForCausalLM.from_pretrained(folder)
    generator = torch.Generator().manual_seed(0)
    with torch.no_grad():
        for weights in (
            model.model.embed_tokens.weight,
            model.lm_head.weight,
            model.model.layers[0].self_attn.o_proj.weight,
            model.model.layers[0].mlp.down_proj.weight,
        ):
            weights.copy_(torch.randn(weights.shape, generator=generator))
    model.save_pretrained(folder)

    random = _attributor(folder)
    request = AttributionRequest("q", "zh", "桌子上有两只猫吗？")
    context = attribution_prompt(random.tokenizer, DEFINITIONS, request) + ANSWER_PREFIX
    tails = _tails(random.tokenizer, context)
    own = random.tokenizer(context, add_special_tokens=False)["input_ids"]
    expected = {}
    for key, tail in tails.items():
        ids = torch.tensor([own + tail])
        with torch.inference_mode():
            logprobs = torch.log_softmax(model(input_ids=ids).logits[0].float(), -1)
        expected[key] = sum(float(logprobs[len(own) - 1 + i, t]) for i, t in enumerate(tail))
    keys = list(DEFINITIONS)
    scores = random.continuation_logprobs(context, [k + ANSWER_SUFFIX for k in keys])
    assert scores == pytest.approx([expected[k] for k in keys], abs=1e-3)
    (raw,) = random.attribute_many([request])
    assert json.loads(raw) == {"capability": max(expected, key=expected.get)}

    questions = ["Is there a cat?", "Is the cup blue?", "有猫吗？"]
    answers = _attributor(steered).attribute_many(
        [AttributionRequest("q", "en", text) for text in questions]
    )
    assert [json.loads(a) for a in answers] == [{"capability": FAVOURED}] * 3


def test_parse_refuses_what_is_not_one_key_of_the_taxonomy():
    """Guards against a malformed or invented answer becoming a label."""
    assert parse_attribution('{"capability": "color"}', KEYS).capability == "color"
    for raw, reason in (
        ('{"capability": "colour"}', "unknown capability 'colour'"),
        ('{"capability": 3}', "not an object with a 'capability' string"),
        ('["color"]', "not an object with a 'capability' string"),
        ('{"capability": "col', "malformed JSON"),
    ):
        refused = parse_attribution(raw, KEYS)
        assert refused.capability is None and reason in refused.reason and refused.raw_text == raw


def test_the_definitions_are_the_seed_scopes_and_part_of_the_identity(tmp_path):
    """Guards against a prompt without METHOD 13a's scopes, and against a cache that serves
    answers given under other definitions (the instruction's hash must change with them)."""
    assert len(DEFINITIONS) == 21 and all(DEFINITIONS.values())
    assert DEFINITIONS["material"].startswith("what something is made of")
    names_only = tmp_path / "capabilities.csv"
    names_only.write_text("capability,group_key\nred,a\nblue,a\n", encoding="utf-8")
    assert read_definitions(names_only) == {"red": "", "blue": ""}
    assert instruction_sha(read_definitions(names_only)) != instruction_sha(DEFINITIONS)


def _hand_bundle(folder: Path) -> Path:
    """Three prompts (en, zh), six questions; "Is there a cat?" asked in two prompts; one with a
    text target."""
    prompts = [
        {"prompt_id": p, "concept_id": p[:2], "language": lang, "source": "t", "text": "x"}
        for p, lang in (("c1-en", "en"), ("c2-en", "en"), ("c1-zh", "zh"))
    ]
    questions = [
        ("c1-en", "q1", "Is there a cat?", "animals", "rule:entity_noun"),
        ("c1-en", "q2", "Is the cat made of wood?", "texture", "rule:predicate_texture"),
        ("c2-en", "q1", "Is there a cat?", "animals", "rule:entity_noun"),
        ("c2-en", "q2", "Is the cat asleep?", "state", "rule:condition"),
        ("c1-zh", "q1", "有猫吗？", "scientific_cultural_knowledge", "default:multilingualism"),
        ("c1-zh", "q2", "招牌上写着“开”吗？", "text_rendering", "rule:quoted_text"),
    ]
    folder.mkdir()
    (folder / "prompts.jsonl").write_text("".join(json.dumps(p) + "\n" for p in prompts))
    rows = [
        {"prompt_id": p, "question_id": q, "text": t, "capability": c, "parents": [],
         "capability_source": s, "text_target": "开" if c == "text_rendering" else None}
        for p, q, t, c, s in questions
    ]  # fmt: skip
    (folder / "questions.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return folder


RECORDED = {
    "Is there a cat?": '{"capability": "animals"}',
    "Is the cat made of wood?": '{"capability": "material"}',
    "Is the cat asleep?": '{"capability": "vibes"}',  # not a key: refused
    "有猫吗？": '{"capability": "animals"',  # cut short: refused
}


def test_the_driver_relabels_keeps_the_rule_and_refuses_without_guessing(tmp_path):
    """Guards against a refused answer becoming a label, a rule label lost or overwritten by a
    second run, a text target's question relabelled, and a cache that asks again: the model's
    key with `model:<id>` and the former label beside it; refused answers keep their row and are
    listed with the reason; the same text in two prompts is asked once; a question with a text
    target is not asked; a rerun asks nothing; other definitions ask again."""
    bundle = _hand_bundle(tmp_path / "bundle")
    before = _jsonl(bundle / "questions.jsonl")
    cache = tmp_path / "cache" / "answers.jsonl"
    recorded = RecordedCapabilityAttributor(RECORDED, model="rec")

    stats = run_attribution(recorded, bundle, cache, KEYS, batch_size=2, log=lambda _: None)

    assert recorded.asked == 4  # five questions, four texts
    rows = _jsonl(bundle / "questions.jsonl")
    assert [(r["capability"], r["capability_source"], r.get("rule_capability")) for r in rows] == [
        ("animals", "model:rec", "animals"),
        ("material", "model:rec", "texture"),
        ("animals", "model:rec", "animals"),
        ("state", "rule:condition", None),
        ("scientific_cultural_knowledge", "default:multilingualism", None),
        ("text_rendering", "rule:quoted_text", None),  # its text target decides: not asked
    ]
    assert [{k: r[k] for k in ("text", "parents")} for r in rows] == [
        {k: r[k] for k in ("text", "parents")} for r in before
    ]
    failures = _jsonl(bundle / FAILURES_FILE)
    assert [(f["question_id"], f["prompt_id"]) for f in failures] == [
        ("q2", "c2-en"),
        ("q1", "c1-zh"),
    ]
    assert "unknown capability 'vibes'" in failures[0]["reason"]
    assert failures[1]["reason"].startswith("malformed JSON")
    assert (stats.attributed, stats.changed, stats.failed, stats.asked) == (3, 1, 2, 4)
    assert stats.text_targets == 1
    read_questions_file(bundle / "questions.jsonl", KEYS)  # the bundle's own rules hold

    again = RecordedCapabilityAttributor({}, model="rec")  # any question asked would KeyError
    rerun = run_attribution(again, bundle, cache, KEYS, log=lambda _: None)
    assert again.asked == 0 and rerun.cached == 5
    assert _jsonl(bundle / "questions.jsonl") == rows  # rule_capability kept, not the model's

    other = RecordedCapabilityAttributor(RECORDED, model="rec", instruction_sha="other")
    run_attribution(other, bundle, cache, KEYS, log=lambda _: None)
    assert other.asked == 4


def test_a_model_that_cannot_be_loaded_offline_refuses_the_import(tmp_path):
    """Guards against a missing model (a folder that is not there, a hub id not in the local
    cache) ending in a traceback or, worse, an import with the rules' labels said to be the
    model's: the command exits 2 with the reason and imports nothing."""
    release = write_tiif_fixture(tmp_path / "tiif")
    warehouse, absent = tmp_path / "w.duckdb", tmp_path / "no_model"
    args = ["import-release", "tiif", "--root", str(release), "--attribute-with", str(absent)]
    refused = run_main(args, warehouse)
    assert refused.returncode == 2
    assert f"{absent}: --attribute-with: cannot load the model offline" in refused.stderr
    assert not warehouse.exists()


@pytest.mark.dbt
def test_import_release_attributes_with_the_tiny_model_end_to_end(steered, tmp_path, monkeypatch):
    """Guards against the `--attribute-with` path failing anywhere between loading the model and
    the mart: every TIIF question gets the model's key with `model:<folder name>`, its rule label
    kept (equal to a conversion without the model); the bundle imports and builds; the agreement
    mart equals a count over the bundle's rows by hand; a second run of the same model on the
    same questions makes no model call."""
    release = write_tiif_fixture(tmp_path / "tiif")
    cache, out, warehouse = tmp_path / "cache.jsonl", tmp_path / "out", tmp_path / "w.duckdb"
    args = ["import-release", "tiif", "--root", str(release), "--out", str(out)]
    done = run_main(
        [*args, "--attribute-with", str(steered), "--attribution-cache", str(cache)], warehouse
    )
    assert done.returncode == 0, done.stderr
    assert "attributed by text_lm: 24 of 24 questions" in done.stdout

    rules = convert_folder("tiif", release, tmp_path / "rules", False)
    by_rule = {
        (r["prompt_id"], r["question_id"]): r for r in _jsonl(rules.folder / "questions.jsonl")
    }
    rows = _jsonl(out / "questions.jsonl")
    assert len(rows) == len(by_rule) == 24
    for row in rows:
        rule = by_rule[(row["prompt_id"], row["question_id"])]
        assert (row["capability"], row["capability_source"]) == (FAVOURED, "model:text_lm")
        assert row["rule_capability"] == rule["capability"]

    built = run_main(["build", "--official-judge", "GPT-4o"], warehouse)
    assert built.returncode == 0, built.stderr[-3000:]
    expected = []
    for scope in [*sorted({r["rule_capability"] for r in rows}), "__all__"]:
        mine = [r for r in rows if scope in ("__all__", r["rule_capability"])]
        agree = sum(r["capability"] == r["rule_capability"] for r in mine)
        others = Counter(r["capability"] for r in mine if r["capability"] != r["rule_capability"])
        top = min(others.items(), key=lambda kv: (-kv[1], kv[0])) if others else (None, 0)
        expected.append(("text_lm", scope, len(mine), agree, agree / len(mine), *top))
    got = query(
        warehouse,
        "select attribution_model, capability, n_questions, n_agree, agreement_share, "
        "top_other_capability, n_top_other from marts.fct_attribution_agreement "
        "order by capability = '__all__', capability",
    )
    assert got == expected
    assert any(row[3] > 0 for row in got) and any(row[3] == 0 for row in got)

    calls = []
    transformers_writer = "ingestion.backends.models.transformers_writer"
    monkeypatch.setattr(
        f"{transformers_writer}.TransformersCapabilityAttributor.attribute_many",
        lambda self, requests: calls.append(requests) or [],
    )
    rerun = run_attribution(_attributor(steered, "text_lm"), rules.folder, cache, KEYS)
    assert calls == [] and rerun.cached == 24
    assert _jsonl(rules.folder / "questions.jsonl") == rows
