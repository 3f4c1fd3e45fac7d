"""Question construction from RECORDED LLM outputs: accepted questions or recorded rejections."""

from __future__ import annotations

import json

from ingestion.backends.api.interfaces import QuestionWriteRequest
from ingestion.backends.api.question_contract import audit, construct_questions
from ingestion.backends.drivers.question_runs import build_questions
from ingestion.backends.models.recorded_writer import RecordedQuestionWriter


def _q(i, text, tag="animals", parents=(), **extra):
    return {"id": i, "text": text, "tag": tag, "parents": list(parents), **extra}


RECORDED = {
    "good": json.dumps(
        {
            "questions": [
                _q("q1", "Is there a cat?", entity="cat"),
                _q("q2", "Is the cat red?", tag="color", parents=["q1"], entity="cat"),
                _q("q3", "Does the sign read 'OPEN'?", tag="text_rendering", text_target="OPEN"),
            ]
        }
    ),
    "malformed": '{"questions": [{"id": "q1", "text": "Is there a cat?"',
    "cycle": json.dumps(
        {
            "questions": [
                _q("q0", "Is there a chair?", tag="man_made"),
                _q("q1", "Is there a cat?", parents=["q2"]),
                _q("q2", "Is the cat red?", tag="color", parents=["q1"]),
            ]
        }
    ),
    "unknown_tag": json.dumps({"questions": [_q("q1", "Is there a cat?", tag="vibes")]}),
    "no_root": json.dumps({"questions": [_q("q1", "Is there a cat?", parents=["q1"])]}),
    "missing_parent": json.dumps({"questions": [_q("q1", "Is it red?", parents=["q9"])]}),
    "audit": json.dumps(
        {
            "questions": [
                _q("q1", "Is there a cat and a dog?"),
                _q("q2", "Is the cat not sleeping?", parents=["q1"]),
            ]
        }
    ),
}


def _construct(prompt_id):
    return construct_questions(QuestionWriteRequest(prompt_id, "en", "x"), RECORDED[prompt_id])


def test_well_formed_output_becomes_bundle_rows():
    result = _construct("good")
    assert result.accepted and result.audit_flags == ()
    assert [(q["question_id"], q["capability"], q["parents"]) for q in result.questions] == [
        ("good-q1", "animals", []),
        ("good-q2", "color", ["good-q1"]),
        ("good-q3", "text_rendering", []),
    ]
    assert result.questions[2]["text_target"] == "OPEN"


def test_malformed_json_is_rejected_with_the_reason():
    result = _construct("malformed")
    assert not result.accepted and result.questions == ()
    assert result.reasons[0].startswith("malformed JSON")


def test_a_cycle_is_rejected():
    result = _construct("cycle")
    assert not result.accepted
    assert any("form a cycle of parents" in r for r in result.reasons)


def test_an_unknown_tag_is_rejected():
    result = _construct("unknown_tag")
    assert not result.accepted and any("vibes" in r for r in result.reasons)


def test_no_root_and_missing_parent_are_rejected():
    no_root = _construct("no_root")
    assert any("no root question" in r for r in no_root.reasons)
    assert any("lists itself as a parent" in r for r in no_root.reasons)
    missing = _construct("missing_parent")
    assert any("is not a question of prompt" in r for r in missing.reasons)


def test_audit_flags_non_atomic_and_non_yes_questions():
    result = _construct("audit")
    assert result.accepted  # flags are for review, not rejection
    assert [(q, f.split(":")[0]) for q, f in result.audit_flags] == [
        ("audit-q1", "non-atomic"),
        ("audit-q2", "non-yes"),
    ]
    assert audit([{"question_id": "x", "text": "Is the photo black-and-white?"}]) == []
    assert audit([{"question_id": "x", "text": "一只猫和一只狗在吗？"}])[0][1].startswith(
        "non-atomic"
    )


def test_build_questions_keeps_accepted_rows_rejections_and_flags(tmp_path):
    writer = RecordedQuestionWriter(RECORDED)
    requests = [QuestionWriteRequest(p, "en", "x") for p in ("good", "cycle", "malformed", "audit")]
    build_questions(writer, requests, tmp_path)
    lines = lambda name: [json.loads(x) for x in (tmp_path / name).read_text().splitlines()]  # noqa: E731
    assert [q["question_id"] for q in lines("questions.jsonl")] == [
        "good-q1",
        "good-q2",
        "good-q3",
        "audit-q1",
        "audit-q2",
    ]
    rejected = lines("question_rejections.jsonl")
    assert [r["prompt_id"] for r in rejected] == ["cycle", "malformed"]
    assert all(r["reasons"] and r["raw_text"] for r in rejected)
    assert len(lines("question_audit.jsonl")) == 2
