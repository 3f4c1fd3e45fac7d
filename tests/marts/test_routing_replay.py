"""An independent replay of the router's evaluation (METHOD 12) on the small routing world.

Written from METHOD 12 and docs/marts.md's "Cost-aware routing", sharing no code with
`method.routing` or the routing models: the request-level evidence is rebuilt in plain Python
from `marts.fct_question_records` (Eq. 2) and the bundle's transcriptions (Eq. 3, through the
reference Levenshtein and brute-force assignment of tests/helpers.py); the folds
are the ones `marts.fct_router_decisions` reports.

- Decisions: every request's out-of-fold Q-Profile prediction for every generator, recomputed from
  the capability scores of the four other folds in the request's language, and the Q, C and
  oracle choices with their tie rules; and each outer fold's epsilon, from its inner folds.
- Paired bootstrap: each router's bilingual difference to each reference, and its 95% percentile
  interval over concept resamples, once with this file's own draws (a Monte Carlo tolerance) and
  once with the draws the seed defines (exactly).
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pytest
import yaml

from ingestion.paths import PROJECT_ROOT
from tests.helpers import query, reference_text_match

GRID = [round(0.005 * i, 3) for i in range(21)]  # METHOD 12: eps from 0 to 0.10 in 0.005 steps
TIE = 1e-12  # predictions equal up to float rounding count as tied
LEVEL = 95  # the paired interval's coverage, percent


@dataclass
class World:
    """Request-level sums of every generator, indexed by plain Python keys."""

    models: list[str]
    cost: dict[str, float]
    group_of: dict[str, str]
    language: dict[str, str]  # request -> language
    concept: dict[str, str]  # request -> concept
    fold: dict[str, int]  # request -> fold
    active: dict[str, set[str]]  # request -> the capabilities its questions carry
    sums: dict[tuple[str, str, str], list[float]]  # (model, request, capability) -> [num, den]
    profiles: dict = field(default_factory=dict)  # (model, language, held-out folds) -> scores


def load_world(bundle: Path, warehouse: Path) -> World:
    taxonomy = query(warehouse, "select capability, group_key, evidence from seeds.capabilities")
    group_of = {c: g for c, g, _ in taxonomy}
    text_capability = next(c for c, _, e in taxonomy if e == "transcription")
    sums: dict = defaultdict(lambda: [0.0, 0.0])
    active, targets = defaultdict(set), defaultdict(dict)
    for model, prompt, question, capability, valid, yes, target in query(
        warehouse,
        "select model_id, prompt_id, question_id, capability, is_valid, outcome_masked, "
        "text_target from marts.fct_question_records",
    ):
        active[prompt].add(capability)
        if capability == text_capability:
            if target:
                targets[prompt][question] = target
            continue
        cell = sums[model, prompt, capability]  # Eq. 2: valid yes over valid questions
        cell[0] += bool(valid) * (yes or 0)
        cell[1] += bool(valid)
    with (bundle / "transcriptions.jsonl").open(encoding="utf-8") as f:
        for line in f:
            row = json.loads(line)
            if row["status"] != "ok" or not targets[row["prompt_id"]]:
                continue  # Eq. 3: only ok transcriptions count
            wanted = [targets[row["prompt_id"]][q] for q in sorted(targets[row["prompt_id"]])]
            distance, length = reference_text_match(wanted, row["blocks"])
            cell = sums[row["model_id"], row["prompt_id"], text_capability]
            cell[0] += length - distance
            cell[1] += length
    requests = query(
        warehouse,
        "select distinct prompt_id, concept_id, language, fold, model_id, cost_gpu_s_per_mp "
        "from marts.fct_router_decisions where router like 'fixed:%'",
    )
    return World(
        models=sorted({r[4] for r in requests}),
        cost={r[4]: r[5] for r in requests},
        group_of=group_of,
        language={r[0]: r[2] for r in requests},
        concept={r[0]: r[1] for r in requests},
        fold={r[0]: r[3] for r in requests},
        active=dict(active),
        sums=dict(sums),
    )


def hcq(scores: dict[str, float], group_of: dict[str, str]) -> float:
    """Eq. 4: mean of the scores within each group, then over the groups; NaN with none."""
    groups = defaultdict(list)
    for capability, score in scores.items():
        groups[group_of[capability]].append(score)
    if not groups:
        return float("nan")
    return sum(sum(v) / len(v) for v in groups.values()) / len(groups)


def scores_of(num_den: dict[str, list[float]]) -> dict[str, float]:
    return {c: max(0.0, n / d) for c, (n, d) in num_den.items() if d > 0}


def profile(world: World, model: str, language: str, held_out: frozenset[int]) -> dict[str, float]:
    """The model's capability scores over the reference folds' requests of one language (every
    fold but the `held_out` ones)."""
    pooled = defaultdict(lambda: [0.0, 0.0])
    for (m, request, capability), (num, den) in world.sums.items():
        reference = world.fold[request] not in held_out
        if m == model and world.language[request] == language and reference:
            pooled[capability][0] += num
            pooled[capability][1] += den
    return scores_of(pooled)


def pick(quality: dict[str, float], cost: dict[str, float], eps: float) -> str:
    """The cheapest generator (then the first model id) within eps of the best prediction."""
    known = {m: q for m, q in quality.items() if not np.isnan(q)}
    if not known:
        return min(quality, key=lambda m: (cost[m], m))
    best = max(known.values())
    candidates = [m for m, q in known.items() if q >= best - eps - TIE]
    return min(candidates, key=lambda m: (cost[m], m))


def predict(world: World, request: str, held_out: set[int]) -> dict[str, float]:
    """Q-Profile: HCQ of each model's reference-fold scores, restricted to the request's
    active capabilities (a capability without a reference score drops out)."""
    out = {}
    for m in world.models:
        key = (m, world.language[request], frozenset(held_out))
        if key not in world.profiles:
            world.profiles[key] = profile(world, *key)
        active = {c: s for c, s in world.profiles[key].items() if c in world.active[request]}
        out[m] = hcq(active, world.group_of)
    return out


@pytest.fixture(scope="module")
def world(routing_world) -> World:
    return load_world(*routing_world)


@pytest.fixture(scope="module")
def decisions(routing_world) -> dict[tuple[str, str], tuple[str, float, float | None]]:
    """(router, request) -> (model, predicted quality fraction, eps) from the mart."""
    rows = query(
        routing_world[1],
        "select router, prompt_id, model_id, predicted_quality_frac, eps "
        "from marts.fct_router_decisions",
    )
    return {(r, p): (m, q, e) for r, p, m, q, e in rows}


def test_out_of_fold_predictions_and_choices_replayed(world, decisions):
    assert len(set(world.fold.values())) == 5
    eps_of_fold = defaultdict(set)
    routed = defaultdict(int)
    for request in sorted(world.language):
        fold, active = world.fold[request], world.active[request]
        predicted = predict(world, request, {fold})
        for m in world.models:  # each fixed router's row carries that generator's prediction
            model, got, _ = decisions[f"fixed:{m}", request]
            assert model == m
            assert got == pytest.approx(predicted[m], abs=1e-12, nan_ok=True), (request, m)
        model, got, _ = decisions["q_profile_q", request]
        assert model == pick(predicted, world.cost, 0.0), request
        assert got == pytest.approx(predicted[model], abs=1e-12)
        model, got, eps = decisions["q_profile_c", request]
        assert model == pick(predicted, world.cost, eps), request
        eps_of_fold[fold].add(eps)
        realised = {
            m: hcq(
                scores_of({c: world.sums.get((m, request, c), [0, 0]) for c in active}),
                world.group_of,
            )
            for m in world.models
        }
        model, got, _ = decisions["oracle", request]
        assert model == pick(realised, world.cost, 0.0), request
        assert got == pytest.approx(realised[model], abs=1e-12)
        routed[decisions["q_profile_c", request][0]] += 1
    # one epsilon per outer fold, from the grid
    assert all(len(e) == 1 and next(iter(e)) in GRID for e in eps_of_fold.values())
    # the world makes routing non-trivial: Q-Profile-C uses more than one generator
    assert len(routed) >= 2, routed


def routed_selection_quality(world: World, assignment: dict[str, str]) -> float:
    """The 50/50 mean over languages of the routed virtual generator's HCQ (all capabilities
    with evidence), the figure epsilon is selected on."""
    pooled = defaultdict(lambda: [0.0, 0.0])
    for request, model in assignment.items():
        for c in world.active[request]:
            n, d = world.sums.get((model, request, c), (0.0, 0.0))
            pooled[world.language[request], c][0] += n
            pooled[world.language[request], c][1] += d
    languages = sorted({lang for lang, _ in pooled})
    per_language = [
        hcq(scores_of({c: v for (lg, c), v in pooled.items() if lg == lang}), world.group_of)
        for lang in languages
    ]
    return sum(per_language) / len(per_language)


def test_each_folds_epsilon_replayed_on_its_inner_folds(world, decisions):
    """METHOD 12: on outer fold f's training folds, each inner fold is predicted from the three
    remaining ones; eps is the largest grid value whose routed quality is not below the best
    fixed generator's there (0 when none clears it)."""
    folds = sorted(set(world.fold.values()))
    chosen = {world.fold[p]: e for (r, p), (_, _, e) in decisions.items() if r == "q_profile_c"}
    for outer in folds:
        training = [p for p in sorted(world.language) if world.fold[p] != outer]
        predicted = {p: predict(world, p, {outer, world.fold[p]}) for p in training}
        best_fixed = max(
            routed_selection_quality(world, dict.fromkeys(training, m)) for m in world.models
        )
        clearing = [
            eps
            for eps in GRID
            if routed_selection_quality(
                world, {p: pick(predicted[p], world.cost, eps) for p in training}
            )
            >= best_fixed - TIE
        ]
        assert chosen[outer] == max(clearing, default=0.0), outer


# -- the paired concept bootstrap (marts.fct_router_paired) -------------------------------------


def concept_sums(world: World, assignment: dict[str, str]):
    """(concepts, languages, capabilities, num, den): the routed records' sums per concept x
    language x capability, as arrays (C, L, T)."""
    concepts = sorted(set(world.concept.values()))
    languages = sorted(set(world.language.values()))
    capabilities = sorted(world.group_of)
    num = np.zeros((len(concepts), len(languages), len(capabilities)))
    den = np.zeros_like(num)
    c_index = {c: i for i, c in enumerate(concepts)}
    t_index = {t: i for i, t in enumerate(capabilities)}
    for request, model in assignment.items():
        ci, li = c_index[world.concept[request]], languages.index(world.language[request])
        for t in world.active[request]:
            n, d = world.sums.get((model, request, t), (0.0, 0.0))
            num[ci, li, t_index[t]] += n
            den[ci, li, t_index[t]] += d
    return concepts, languages, capabilities, num, den


def bilingual(num: np.ndarray, den: np.ndarray, capabilities, group_of) -> np.ndarray:
    """(B,) equal-weight mean over languages of each language's HCQ, from (B, L, T) sums."""
    out = np.zeros(len(num))
    for b in range(len(num)):
        per_language = [
            hcq(
                {
                    t: max(0.0, num[b, li, ti] / den[b, li, ti])
                    for ti, t in enumerate(capabilities)
                    if den[b, li, ti] > 0
                },
                group_of,
            )
            for li in range(num.shape[1])
        ]
        out[b] = sum(per_language) / len(per_language)
    return out


def paired_replay(world, decisions, routers, reference, weights):
    """router -> (point difference, draws of the difference) in points against `reference`."""
    results = {}
    by_router = {}
    for router in {*routers, f"fixed:{reference}"}:
        assignment = {p: decisions[router, p][0] for p in world.language}
        _, _, capabilities, num, den = concept_sums(world, assignment)
        point = bilingual(num.sum(0)[None], den.sum(0)[None], capabilities, world.group_of)[0]
        drawn_num = np.einsum("bc,clt->blt", weights, num)
        drawn_den = np.einsum("bc,clt->blt", weights, den)
        by_router[router] = (point, bilingual(drawn_num, drawn_den, capabilities, world.group_of))
    ref_point, ref_draws = by_router[f"fixed:{reference}"]
    for router in routers:
        point, draws = by_router[router]
        results[router] = (100 * (point - ref_point), 100 * (draws - ref_draws))
    return results


@pytest.fixture(scope="module")
def paired(routing_world):
    rows = query(
        routing_world[1],
        "select router, reference_model_id, diff, ci_lo, ci_hi, n_draws "
        "from marts.fct_router_paired where router <> 'uniform_random'",
    )
    return {(r, ref): (d, lo, hi, n) for r, ref, d, lo, hi, n in rows}


def _check_paired(world, decisions, paired, weights, tolerance):
    """Assert each interval; `tolerance(lo, hi)` is the allowed error of an endpoint."""
    tail = (100 - LEVEL) / 2
    for reference in sorted({ref for _, ref in paired}):
        routers = sorted(r for r, ref in paired if ref == reference)
        replay = paired_replay(world, decisions, routers, reference, weights)
        for router, (diff, draws) in replay.items():
            got_diff, got_lo, got_hi, _ = paired[router, reference]
            lo, hi = np.percentile(draws, [tail, 100 - tail])
            assert got_diff == pytest.approx(diff, abs=1e-9), (router, reference)
            allowed = tolerance(lo, hi)
            assert got_lo == pytest.approx(lo, abs=allowed), (router, reference, "lo")
            assert got_hi == pytest.approx(hi, abs=allowed), (router, reference, "hi")


def test_paired_interval_replayed_with_independent_draws(world, decisions, paired):
    """Own resamples (4,000 draws, another seed): each endpoint within 0.3 of the interval's
    half-width (Monte Carlo error of two bootstraps, 1,000 and 4,000 draws: the largest here is
    0.15); a 50% interval sits about two thirds of a half-width inside."""
    n_concepts = len(set(world.concept.values()))
    rng = np.random.default_rng(12345)
    picks = rng.integers(0, n_concepts, size=(4000, n_concepts))
    weights = np.stack([np.bincount(row, minlength=n_concepts) for row in picks]).astype(float)
    _check_paired(world, decisions, paired, weights, lambda lo, hi: 0.3 * (hi - lo) / 2 + 1e-9)


def test_paired_interval_replayed_exactly_with_the_seeded_draws(world, decisions, paired):
    """The same draws as the mart, from the documented protocol: concepts in id order, draw b
    the counts of n concepts picked uniformly with replacement, `numpy.random.default_rng(
    router_seed).multinomial`, all draws in one call. The interval must then agree exactly."""
    project = yaml.safe_load((PROJECT_ROOT / "dbt_project.yml").read_text(encoding="utf-8"))
    seed = int(project["vars"]["router_seed"])
    (n_draws,) = {n for *_, n in paired.values()}
    assert n_draws == int(project["vars"]["router_bootstrap_draws"])
    n_concepts = len(set(world.concept.values()))
    uniform = np.full(n_concepts, 1 / n_concepts)
    weights = np.random.default_rng(seed).multinomial(n_concepts, uniform, size=n_draws)
    _check_paired(world, decisions, paired, weights.astype(float), lambda lo, hi: 1e-9)
