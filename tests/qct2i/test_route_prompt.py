"""`qct2i route --prompt TEXT`: the configured question writer (cpu profile: the tiny text LM,
its answer forced, see tests/ingestion/backends/forced_answers.py) turns a plain prompt into
questions, which are then routed. Independent route: the same questions written by hand to a
file and routed with `qct2i route FILE` give the same ranking."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ingestion.backends.tiny.models import build_tiny_text_lm
from qct2i.cli import main
from tests.ingestion.backends.forced_answers import force_answer

WRITER_ANSWER = json.dumps(
    {
        "questions": [
            {"id": "q1", "text": "Is there a cat?", "tag": "animals", "parents": []},
            {"id": "q2", "text": "Is the cat black?", "tag": "color", "parents": ["q1"]},
        ]
    }
)
BY_HAND = [
    {"prompt_id": "request", "question_id": "request-q1", "text": "Is there a cat?",
     "capability": "animals", "parents": []},
    {"prompt_id": "request", "question_id": "request-q2", "text": "Is the cat black?",
     "capability": "color", "parents": ["request-q1"]},
]  # fmt: skip


def _tiny_writer(root: Path, answer: str) -> Path:
    build_tiny_text_lm(root / "text_lm")
    force_answer(root / "text_lm", answer)
    return root


@pytest.fixture
def published(routing_world, monkeypatch):
    _, warehouse = routing_world
    monkeypatch.setenv("QCT2I_WAREHOUSE", str(warehouse))
    monkeypatch.setenv("QCT2I_ML_PROFILE", "cpu")
    return warehouse


def test_route_prompt_writes_questions_then_routes_them(published, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("QCT2I_TINY_MODELS", str(_tiny_writer(tmp_path / "tiny", WRITER_ANSWER)))
    assert main(["route", "--prompt", "a black cat", "--json", "--eps", "0.03"]) == 0
    from_prompt = json.loads(capsys.readouterr().out)

    file = tmp_path / "by_hand.jsonl"
    file.write_text("".join(json.dumps(r) + "\n" for r in BY_HAND))
    assert main(["route", str(file), "--json", "--eps", "0.03"]) == 0
    from_file = json.loads(capsys.readouterr().out)

    assert [r["prompt_id"] for r in from_prompt["requests"]] == ["request"]
    assert from_prompt["requests"][0]["ranking"]  # every generator ranked
    assert from_prompt == from_file


def test_a_rejected_writer_output_is_a_clear_error(published, tmp_path, monkeypatch, capsys):
    bad = WRITER_ANSWER.replace('"color"', '"colour_of_things"')
    monkeypatch.setenv("QCT2I_TINY_MODELS", str(_tiny_writer(tmp_path / "tiny", bad)))
    assert main(["route", "--prompt", "a black cat"]) == 2
    err = capsys.readouterr().err
    assert "rejected" in err and "colour_of_things" in err and "Traceback" not in err


def test_route_needs_a_file_or_a_prompt_not_both(published, capsys):
    assert main(["route"]) == 2
    assert main(["route", "questions.jsonl", "--prompt", "a cat"]) == 2
    assert "one of the two" in capsys.readouterr().err
