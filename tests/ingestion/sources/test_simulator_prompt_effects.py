"""The simulator's optional prompt effects (`prompt_effect_sd`, METHOD 16's planted-effects world):
absent or 0, the bundle is byte-identical to the one written without the option; above 0, a
prompt that is hard for one generator is hard for the others."""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict

import numpy as np
import pytest

from ingestion.sources.simulator import SimulationConfig, simulate

MODELS = ("flux1-dev", "qwen-image", "glm-image", "ernie-image")


def digests(folder) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir())}


@pytest.mark.parametrize("fmt", ["jsonl", "parquet"])
def test_zero_prompt_effects_write_the_same_bytes_as_no_option(tmp_path, fmt):
    simulate(tmp_path / "absent", SimulationConfig(concepts=60, seed=5, fmt=fmt, models=MODELS))
    zero_sd = SimulationConfig(concepts=60, seed=5, fmt=fmt, models=MODELS, prompt_effect_sd=0.0)
    simulate(tmp_path / "zero", zero_sd)
    absent, zero = digests(tmp_path / "absent"), digests(tmp_path / "zero")
    assert absent == zero and "judgments." + fmt in absent and "planted.json" in absent


def root_success(folder) -> dict[tuple[str, str], dict[str, float]]:
    """Per generator: the success rate of each (concept, capability) cell's answered root
    questions (roots are always valid, so no masking is involved), both languages pooled."""
    questions = [json.loads(line) for line in (folder / "questions.jsonl").open()]
    roots = {
        (q["prompt_id"], q["question_id"]): q["capability"] for q in questions if not q["parents"]
    }
    counts = defaultdict(lambda: defaultdict(lambda: [0, 0]))
    for line in (folder / "judgments.jsonl").open():
        j = json.loads(line)
        cap = roots.get((j["prompt_id"], j["question_id"]))
        if cap is None or j["answer"] is None:
            continue
        cell = counts[j["model_id"]][(j["prompt_id"].rsplit("-", 1)[0], cap)]
        cell[0] += j["answer"] == "yes"
        cell[1] += 1
    return {m: {k: y / n for k, (y, n) in cells.items()} for m, cells in counts.items()}


def cross_generator_correlation(folder) -> float:
    """Mean over generator pairs of the correlation of their cell success rates, each centred
    on its capability's mean (so the planted capability rates do not count)."""
    rates = root_success(folder)
    cells = sorted(set.intersection(*(set(r) for r in rates.values())))
    matrix = np.array([[rates[m][c] for c in cells] for m in MODELS])
    for cap in {c[1] for c in cells}:
        idx = [i for i, c in enumerate(cells) if c[1] == cap]
        matrix[:, idx] -= matrix[:, idx].mean(axis=1, keepdims=True)
    corr = np.corrcoef(matrix)
    return float(corr[np.triu_indices(len(MODELS), 1)].mean())


def test_planted_prompt_effects_are_shared_by_generators(tmp_path):
    simulate(tmp_path / "none", SimulationConfig(concepts=300, seed=2, models=MODELS))
    with_effects = SimulationConfig(concepts=300, seed=2, models=MODELS, prompt_effect_sd=1.5)
    simulate(tmp_path / "effects", with_effects)
    # without effects the generators' cells are independent draws: correlation about 0; with a
    # logit sd of 1.5 (success probabilities of a cell spread over roughly 0.1-0.9) a hard
    # cell is hard for everyone
    assert abs(cross_generator_correlation(tmp_path / "none")) < 0.08
    assert cross_generator_correlation(tmp_path / "effects") > 0.2
    planted = json.loads((tmp_path / "effects" / "planted.json").read_text())
    assert planted["prompt_effect_sd"] == 1.5
    assert "prompt_effect_sd" not in json.loads((tmp_path / "none" / "planted.json").read_text())


def test_negative_prompt_effect_sd_is_refused(tmp_path):
    with pytest.raises(ValueError, match="prompt_effect_sd"):
        simulate(tmp_path / "bad", SimulationConfig(concepts=10, prompt_effect_sd=-0.1))
