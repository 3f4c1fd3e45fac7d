"""The cpu profile's tiny models: a name it does not know is an error, not a silent Qwen3-VL."""

from __future__ import annotations

import pytest

from dagster_defs.ml_resources import _tiny


def test_an_unknown_tiny_model_is_an_error_naming_the_known_ones(tmp_path):
    folder = tmp_path / "tiny" / "text_lm"
    with pytest.raises(ValueError) as refused:
        _tiny(folder, "lmm")
    assert str(refused.value) == "unknown tiny model 'lmm'; known: lm, sd, vl, vl-thinking"
    assert not (tmp_path / "tiny").exists()  # nothing built, not even the folder


@pytest.mark.parametrize("profile", ["cpu", "gpu"])
def test_a_reasoning_budget_reaches_the_judge_and_the_cpu_profiles_thinking_model(
    tmp_path, monkeypatch, profile
):
    """Issue 35's wiring: the resource's `reasoning_budget` reaches the judge's constructor on
    both profiles, and on the cpu profile the tiny model is a Thinking checkpoint in its own
    folder (the Instruct one has no </think> and would be refused). Guards against the budget
    silently dropped: an Instruct judge run under a Thinking judge's name. The backends are not
    loaded here (tests/ingestion/backends/test_thinking_judge.py runs them)."""
    from dagster_defs import ml_resources

    built, created = [], []
    monkeypatch.setattr(ml_resources, "_tiny", lambda folder, name: built.append((folder, name)))
    monkeypatch.setattr(ml_resources, "create", lambda *args, **kwargs: created.append(kwargs))
    resource = ml_resources.QuestionJudgeResource(
        profile=profile, tiny_dir=str(tmp_path), reasoning_budget=4
    )

    resource.load()

    assert created[0]["reasoning_budget"] == 4
    assert built == ([(tmp_path / "qwen3_vl_thinking", "vl-thinking")] if profile == "cpu" else [])
    assert "vl-thinking" in ml_resources.TINY_MODELS
