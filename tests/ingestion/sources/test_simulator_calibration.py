"""The simulator's planted truth and its calibration to Table 2: the planted rates, capability
shapes and coupling, the text score recovered from the transcriptions, and the demo scale
recovering Table 2.

The calibration check recomputes the HCQ views straight from the bundle files (json or duckdb to
read, numpy and plain Python to score: validity masking, a UTF-16 Levenshtein with a brute-force
assignment of blocks to targets), independently of the project's dbt models and of
`method.text_match`, and compares them with `seeds/paper_table2.csv`.
"""

from __future__ import annotations

import csv
import itertools
import json
from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest

from ingestion.paths import SEEDS_DIR
from ingestion.sources import simulator
from ingestion.sources.simulator import DEMO_CONCEPTS, SimulationConfig, simulate
from ingestion.sources.simulator.outcomes import _transcribe
from ingestion.sources.simulator.vocabulary import _SPURIOUS
from tests.ingestion.sources.simulated import STRUCTURE_MODELS, paper_table2, read_table

# ---------------------------------------------------------------------------------------------
# Recomputing the HCQ views (independent of ingestion/ readers and the dbt models)
# ---------------------------------------------------------------------------------------------


def utf16(text: str) -> list[int]:
    raw = text.encode("utf-16-le")
    return [int.from_bytes(raw[i : i + 2], "little") for i in range(0, len(raw), 2)]


def levenshtein(a: list[int], b: list[int]) -> int:
    row = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        prev, row[0] = row[0], i
        for j, z in enumerate(b, 1):
            prev, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, prev + (x != z))
    return row[-1]


def text_distance(targets: list[str], blocks: list[str]) -> tuple[int, int]:
    """(D, L): best assignment of distinct blocks to targets, by brute force over permutations."""
    lengths = [len(utf16(t)) for t in targets]
    cost = [[min(levenshtein(utf16(t), utf16(b)), len(utf16(t))) for b in blocks] for t in targets]
    slots = list(range(len(blocks))) + [None] * len(targets)  # None: target left unmatched
    best = sum(lengths)
    for chosen in itertools.permutations(slots, len(targets)):
        used = [j for j in chosen if j is not None]
        if len(used) != len(set(used)):
            continue
        total = sum(lengths[i] if j is None else cost[i][j] for i, j in enumerate(chosen))
        best = min(best, total)
    return best, sum(lengths)


def recompute_views(folder: Path) -> dict[tuple[str, str], dict[str, float]]:
    """(model, language) -> {capability: score, group: view, 'total': HCQ} as fractions."""
    with (SEEDS_DIR / "capabilities.csv").open(encoding="utf-8") as f:
        taxonomy = list(csv.DictReader(f))
    group_of = {r["capability"]: r["group_key"] for r in taxonomy}
    group_order = {r["group_key"]: int(r["group_order"]) for r in taxonomy}
    groups = sorted(group_order, key=group_order.__getitem__)

    language = {p["prompt_id"]: p["language"] for p in read_table(folder, "prompts")}
    questions = read_table(folder, "questions")
    index = {(q["prompt_id"], q["question_id"]): i for i, q in enumerate(questions)}
    n = len(questions)
    parents = [[index[q["prompt_id"], p] for p in q["parents"]] for q in questions]
    depth = [0] * n  # longest path from a root, by fixed-point iteration
    changed = True
    while changed:
        changed = False
        for i in range(n):
            d = max((depth[p] + 1 for p in parents[i]), default=0)
            if d != depth[i]:
                depth[i], changed = d, True
    cap = np.array([q["capability"] for q in questions])
    lang = np.array([language[q["prompt_id"]] for q in questions])
    targets = defaultdict(list)
    for q in questions:
        if q["text_target"] is not None:
            targets[q["prompt_id"]].append(q["text_target"])

    answers: dict[str, np.ndarray] = {}
    for j in read_table(folder, "judgments"):
        arr = answers.setdefault(j["model_id"], np.full(n, -2, np.int8))
        arr[index[j["prompt_id"], j["question_id"]]] = {"yes": 1, "no": 0, None: -1}[j["answer"]]
    text = defaultdict(lambda: [0, 0])
    for t in read_table(folder, "transcriptions"):
        if t["status"] == "ok":
            d, length = text_distance(targets[t["prompt_id"]], list(t["blocks"]))
            acc = text[t["model_id"], language[t["prompt_id"]]]
            acc[0] += d
            acc[1] += length

    order = sorted(range(n), key=depth.__getitem__)
    views = {}
    for model, y in answers.items():
        assert (y != -2).all(), "a (model, question) without a judgment"
        valid = np.zeros(n, bool)
        for i in order:  # METHOD 2: own answer present, every parent valid and "yes"
            valid[i] = y[i] >= 0 and all(valid[p] and y[p] == 1 for p in parents[i])
        for lg in ("en", "zh"):
            scores = {}
            for c in group_of:
                if c == "text_rendering" and (model, lg) in text:
                    d, length = text[model, lg]
                    scores[c] = max(0.0, 1 - d / length)
                    continue
                mask = valid & (cap == c) & (lang == lg)
                if mask.any():
                    scores[c] = float((y[mask] == 1).mean())
            view = dict(scores)
            for g in groups:
                members = [scores[c] for c in group_of if group_of[c] == g and c in scores]
                view[g] = float(np.mean(members))
            view["total"] = float(np.mean([view[g] for g in groups]))
            view["n_valid_min"] = min(
                int((valid & (cap == c) & (lang == lg)).sum()) for c in group_of
            )
            views[model, lg] = view
    return views


# ---------------------------------------------------------------------------------------------
# Planted truth
# ---------------------------------------------------------------------------------------------


def test_planted(world):
    planted = json.loads(world.planted_path.read_text(encoding="utf-8"))
    table2 = paper_table2()
    assert planted["seed"] == 0 and planted["concepts"] == 400
    assert planted["coupling"] == simulator.DEFAULT_COUPLING
    assert planted["missing_rate"] == simulator.MISSING_RATE
    with (SEEDS_DIR / "capabilities.csv").open(encoding="utf-8") as f:
        taxonomy = list(csv.DictReader(f))
    groups = {r["group_key"] for r in taxonomy}
    assert planted["shape_mix"] == simulator.GENERATOR_SHAPE_MIX
    for model in STRUCTURE_MODELS:
        offsets = planted["capability_offsets"][model]
        for g in groups:
            assert sum(offsets[r["capability"]] for r in taxonomy if r["group_key"] == g) == (
                pytest.approx(0.0, abs=1e-12)
            )
        for lang in ("en", "zh"):
            cell = planted["rates"][model][lang]
            assert set(cell["capabilities"]) == {r["capability"] for r in taxonomy}
            assert all(0 <= r <= 1 for r in cell["capabilities"].values())
            for g in groups:
                members = [
                    cell["capabilities"][r["capability"]] for r in taxonomy if r["group_key"] == g
                ]
                assert np.mean(members) == pytest.approx(table2[model, lang, g] / 100)
                assert cell["groups"][g] == pytest.approx(table2[model, lang, g] / 100)
            assert 100 * cell["hcq_total"] == pytest.approx(table2[model, lang, "total"], abs=0.05)
            text = planted["text_char_accuracy"][model][lang]
            assert text == pytest.approx(table2[model, lang, "text"] / 100)
        assert 0.01 <= planted["ocr"]["unavailable_rate"][model] <= 0.03
        assert planted["cost"][model]["cost_gpu_s_per_mp"] > 0


def test_generators_differ_in_capability_shape():
    """Each generator's offsets mix the shared evenly spaced shape with a permutation of it, so
    the permuted part, recovered by hand, holds each group's shared values once; and two
    generators are strong at different capabilities (the router's complementarity, METHOD 12)."""
    with (SEEDS_DIR / "capabilities.csv").open(encoding="utf-8") as f:
        taxonomy = list(csv.DictReader(f))
    members = defaultdict(list)
    for r in sorted(taxonomy, key=lambda r: int(r["capability_order"])):
        members[r["group_key"]].append(r["capability"])
    shared = {}  # evenly spaced in [-1, 1] by capability order: -1, -0.5, 0, 0.5, 1 for five
    for caps in members.values():
        step = 2 / (len(caps) - 1) if len(caps) > 1 else 0.0
        shared.update({c: (-1 + k * step if len(caps) > 1 else 0.0) for k, c in enumerate(caps)})
    mix = 0.55
    tax = simulator.load_taxonomy()
    models = [g["model_id"] for g in simulator.load_generators()]
    shapes = {m: simulator.capability_offsets(tax, m, mix) for m in models}
    for offsets in shapes.values():
        for caps in members.values():
            permuted = sorted((offsets[c] - (1 - mix) * shared[c]) / mix for c in caps)
            assert permuted == pytest.approx(sorted(shared[c] for c in caps), abs=1e-12)
    for group, caps in members.items():
        strongest = {max(caps, key=offsets.__getitem__) for offsets in shapes.values()}
        assert len(strongest) > 1 or len(caps) == 1, group
    assert simulator.capability_offsets(tax, "lens", 0.0) == pytest.approx(shared)


@pytest.mark.parametrize(
    ("coupling", "balanced"), [(0.0, True), (0.6, True), (0.0, False), (0.6, False)]
)
def test_planted_coupling(tmp_path, coupling, balanced):
    """Rate-adjusted P(child yes | a parent not yes) is 1 - coupling; given parents yes, 1."""
    out = simulate(
        tmp_path,
        SimulationConfig(
            concepts=300,
            models=["flux1-dev", "hidream-i1"],
            coupling=coupling,
            balanced=balanced,
        ),
    )
    planted = json.loads(out.planted_path.read_text(encoding="utf-8"))
    questions = read_table(out.out_dir, "questions")
    language = {p["prompt_id"]: p["language"] for p in read_table(out.out_dir, "prompts")}
    answers = {
        (j["model_id"], j["prompt_id"], j["question_id"]): j["answer"]
        for j in read_table(out.out_dir, "judgments")
    }
    sums = {True: [0.0, 0.0], False: [0.0, 0.0]}  # parents yes -> [successes, expected at r]
    for model in planted["models"]:
        for q in questions:
            if not q["parents"] or answers[model, q["prompt_id"], q["question_id"]] is None:
                continue
            parents_yes = all(answers[model, q["prompt_id"], p] == "yes" for p in q["parents"])
            rate = planted["rates"][model][language[q["prompt_id"]]]["capabilities"][
                q["capability"]
            ]
            sums[parents_yes][0] += answers[model, q["prompt_id"], q["question_id"]] == "yes"
            sums[parents_yes][1] += rate
    ratio_yes = sums[True][0] / sums[True][1]
    ratio_no = sums[False][0] / sums[False][1]
    assert sums[False][1] > 300
    tolerance = 0.03 if balanced else 0.1  # about 4 standard errors when independent
    assert ratio_yes == pytest.approx(1.0, abs=tolerance)
    assert ratio_no == pytest.approx(1.0 - coupling, abs=tolerance)


# ---------------------------------------------------------------------------------------------
# Calibration to Table 2
# ---------------------------------------------------------------------------------------------


def test_rendering_errors_cost_exactly_the_replaced_units():
    """A rendering's UTF-16 edit distance is the UTF-16 length of the characters it replaced."""
    targets = [[t] for t in simulator.TEXT_TARGETS] * 30
    read = _transcribe(np.random.default_rng(5), targets, 0.5, 0.0, balanced=False)
    spurious = set(_SPURIOUS)
    for [target], (status, blocks) in zip(targets, read, strict=True):
        assert status == "ok"
        [rendered] = [b for b in blocks if not set(b) <= spurious]
        assert len(rendered) == len(target)  # code points: one character for one
        replaced = sum(len(utf16(a)) for a, b in zip(target, rendered, strict=True) if a != b)
        assert text_distance([target], blocks) == (replaced, len(utf16(target)))


def test_text_score_is_recovered(world_tables, world):
    """Micro-averaged text score over ok transcriptions is the planted character accuracy."""
    planted = json.loads(world.planted_path.read_text(encoding="utf-8"))
    targets = defaultdict(list)
    for q in world_tables["questions"]:
        if q["text_target"]:
            targets[q["prompt_id"]].append(q["text_target"])
    totals = defaultdict(lambda: [0, 0])
    for t in world_tables["transcriptions"]:
        if t["status"] == "ok":
            d, length = text_distance(targets[t["prompt_id"]], t["blocks"])
            assert 0 <= d <= length
            acc = totals[t["model_id"], t["prompt_id"][-2:]]
            acc[0] += d
            acc[1] += length
    for (model, lang), (d, length) in totals.items():
        expected = planted["text_char_accuracy"][model][lang]
        assert 1 - d / length == pytest.approx(expected, abs=0.02), (model, lang)


def test_demo_scale_recovers_table2(demo_bundle):
    """On the session's demo bundle (`demo_bundle` in tests/conftest.py: DEMO_CONCEPTS, seed 0)."""
    summary = demo_bundle
    assert (summary.concepts, summary.seed) == (DEMO_CONCEPTS, 0)
    assert summary.row_counts["judgments"] < 1_000_000
    views = recompute_views(summary.out_dir)
    table2 = paper_table2()
    planted = json.loads(summary.planted_path.read_text(encoding="utf-8"))
    worst = defaultdict(lambda: (0.0, None))
    for (model, lang), view in views.items():
        for name in ("total", "entities", "text", "attributes", "relations", "semantics"):
            dev = abs(100 * view[name] - table2[model, lang, name])
            if dev >= worst[name][0]:
                worst[name] = (dev, (model, lang))
        for cap, rate in planted["rates"][model][lang]["capabilities"].items():
            assert view[cap] == pytest.approx(rate, abs=0.05), (model, lang, cap)
    report = ", ".join(f"{k} {v[0]:.2f} ({v[1][0]} {v[1][1]})" for k, v in worst.items())
    print(f"\nworst deviation from Table 2 (points) at {DEMO_CONCEPTS} concepts: {report}")
    print(
        f"fewest valid questions of a capability: {min(v['n_valid_min'] for v in views.values())}"
    )
    assert max(v[0] for v in worst.values()) < 2.0
