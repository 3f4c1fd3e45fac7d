"""method.subsets (METHOD 16) against planted truth and independent routes: the item model
recovers planted parameters, the subset estimator is unbiased over plans on a hand-built world
whose full-benchmark HCQ is computed here by brute force, and its interval covers."""

from __future__ import annotations

import numpy as np
import pytest

from method.bootstrap import ConceptStats
from method.subsets import (
    Plan,
    Planner,
    Predictor,
    estimate,
    fit_items,
    hajek_variance,
    make_plan,
    pps_probabilities,
    rank_against,
    sequential_poisson,
    summarise_validation,
    validation_cases,
)

GROUPS = ("e", "e", "t", "a", "a", "a")  # a small taxonomy: group sizes 2, 1, 3
CAPABILITIES = ("c1", "c2", "text", "c4", "c5", "c6")


def brute_hcq(num, den):
    """Eq. 2-4 by loops over one language's summed statistics [T]: group means of the
    defined scores, then their mean."""
    views = []
    for g in dict.fromkeys(GROUPS):
        scores = [n / d for n, d, gg in zip(num, den, GROUPS, strict=True) if gg == g and d > 0]
        if scores:
            views.append(sum(scores) / len(scores))
    return sum(views) / len(views)


def world_stats(num: np.ndarray, den: np.ndarray, is_transcription: np.ndarray) -> ConceptStats:
    """Statistics [C, M, 2, T] of the small taxonomy, concepts c000.. and models m0.., en and zh."""
    n_concepts, n_models = num.shape[:2]
    return ConceptStats(
        concept_ids=tuple(f"c{i:03d}" for i in range(n_concepts)),
        model_ids=tuple(f"m{k}" for k in range(n_models)),
        languages=("en", "zh"),
        capabilities=CAPABILITIES,
        capability_groups=GROUPS,
        is_transcription=is_transcription,
        numerator=num,
        denominator=den,
    )


def hand_world(n_concepts=240, n_models=6, seed=3) -> ConceptStats:
    """A world with item heterogeneity: concept difficulty shifts every model's success, concepts
    hold 0-6 questions per capability, and generator quality differs. Statistics are fixed
    integers, so the full-benchmark HCQ is a known number."""
    rng = np.random.default_rng(seed)
    shape = (n_concepts, n_models, 2, len(CAPABILITIES))
    den = rng.integers(0, 7, size=(shape[0], 1, *shape[2:])) * (rng.random(shape) < 0.95)
    den = np.broadcast_to(den, shape).astype(float)
    skill = np.linspace(-0.5, 1.5, n_models)[None, :, None, None]
    difficulty = rng.normal(0, 1, size=(n_concepts, 1, 1, 1))
    p = 1 / (1 + np.exp(-(skill - difficulty + rng.normal(0, 0.3, shape))))
    num = rng.binomial(den.astype(int), p).astype(float)
    return world_stats(num, den, is_transcription=np.array([c == "text" for c in CAPABILITIES]))


def test_item_fit_recovers_planted_parameters():
    # 300 respondents of known ability answer 2,000 items with planted slope and intercept;
    # each item-respondent cell holds 4 binomial trials.
    rng = np.random.default_rng(11)
    n_items, n_resp = 2000, 300
    theta = rng.normal(0.5, 1.0, size=(n_resp, 1, 1))
    slope = rng.uniform(0.5, 2.0, size=(n_items, 1, 1))
    centre = theta.mean()
    intercept = rng.normal(centre, 1.0, size=(n_items, 1, 1))
    p = 1 / (1 + np.exp(-(slope[:, None] * (theta[None] - centre) + intercept[:, None])))
    trials = np.full(p.shape, 4.0)
    successes = rng.binomial(4, p).astype(float)
    items = fit_items(successes, trials, theta, slope_sd=2.0, intercept_sd=3.0)
    r_slope = np.corrcoef(items.slope.ravel(), slope.ravel())[0, 1]
    r_intercept = np.corrcoef(items.intercept.ravel(), intercept.ravel())[0, 1]
    assert r_slope > 0.9, r_slope
    assert r_intercept > 0.97, r_intercept
    # the covariance is the inverse of a positive-definite information
    assert (items.covariance[..., 0, 0] > 0).all() and (items.covariance[..., 1, 1] > 0).all()


def test_item_fit_of_homogeneous_items_stays_at_the_prior_centre():
    # Every item is the capability's mean item (a = 1, d = mean ability): the MAP stays near it.
    rng = np.random.default_rng(5)
    theta = rng.normal(1.0, 0.5, size=(12, 2, 3))
    p = 1 / (1 + np.exp(-theta))
    trials = np.full((500, 12, 2, 3), 3.0)
    items = fit_items(rng.binomial(3, p[None].repeat(500, 0)).astype(float), trials, theta)
    assert abs(np.median(items.slope) - 1.0) < 0.05
    assert abs(np.median(items.intercept - items.centre)) < 0.1


def test_pps_probabilities_cap_at_one_and_sum_to_the_sample_size():
    sizes = np.array([100.0, 1, 1, 1, 1, 1, 1, 1])
    pi = pps_probabilities(sizes, 3)
    # the big unit is taken with certainty; the other 2 draws spread over 7 equal units
    assert pi[0] == 1.0 and pi[1:] == pytest.approx(np.full(7, 2 / 7))
    assert pi.sum() == pytest.approx(3)


def test_sequential_poisson_is_nested_in_the_budget():
    sizes = np.random.default_rng(0).uniform(0.1, 3, 500)
    small = sequential_poisson(sizes, 20, np.random.default_rng(9)).chosen
    large = sequential_poisson(sizes, 60, np.random.default_rng(9)).chosen
    assert set(small) <= set(large) and len(large) == 60


def test_hajek_variance_of_simple_random_sampling_is_the_textbook_formula():
    y = np.array([[3.0], [5.0], [1.0], [8.0]])
    n_pop, n = 20, 4
    pi = np.full(n, n / n_pop)
    got = hajek_variance(y, pi, np.zeros(n, int))
    textbook = n_pop**2 * (1 - n / n_pop) * np.var(y[:, 0], ddof=1) / n
    assert got[0] == pytest.approx(textbook)


@pytest.mark.parametrize("estimator", ["ht", "greg"])
@pytest.mark.parametrize("strategy", ["random", "stratified", "irt"])
def test_subset_estimate_is_unbiased_and_covers_on_a_hand_built_world(strategy, estimator):
    stats = hand_world()
    new = 3  # the held-out generator; the others are the references
    num, den = stats.numerator[:, new], stats.denominator[:, new]
    truth_en = brute_hcq(num[:, 0].sum(0), den[:, 0].sum(0))
    truth_zh = brute_hcq(num[:, 1].sum(0), den[:, 1].sum(0))
    truth = (truth_en + truth_zh) / 2
    planner = Planner(stats, tuple(k for k in range(6) if k != new))
    design = planner.strata() if strategy == "stratified" else planner.sizes(strategy, estimator)
    predictor = Predictor.from_planner(planner)
    estimates, covered = [], []
    for seed in range(600):
        plan = make_plan(strategy, 0.25, seed, planner, design)
        assert len(plan.chosen) == 60
        est = estimate(estimator, num, den, plan, stats, predictor)
        estimates.append(est.total[2])
        covered.append(est.ci_lo[2] <= truth <= est.ci_hi[2])
    estimates = np.array(estimates)
    spread = estimates.std(ddof=1)
    # unbiased: the mean over plans sits within 4 Monte Carlo standard errors plus a ratio bias
    # allowance of a tenth of the plan-to-plan spread
    assert abs(estimates.mean() - truth) < 4 * spread / np.sqrt(len(estimates)) + 0.1 * spread
    assert 0.9 <= np.mean(covered) <= 0.99


def test_random_plan_with_ht_is_the_plain_hcq_of_the_drawn_prompts():
    # agg_subset_validation's baseline `random-ht`: with equal inclusion probabilities the Hajek
    # ratios are the drawn concepts' own capability scores, so the estimate is the HCQ a user
    # computes on a random subset without any correction (brute force, per language).
    stats = hand_world()
    new = 2
    num, den = stats.numerator[:, new], stats.denominator[:, new]
    planner = Planner(stats, tuple(k for k in range(6) if k != new))
    plan = make_plan("random", 0.1, 7, planner)
    est = estimate("ht", num, den, plan, stats, None)
    drawn = plan.chosen
    plain = [brute_hcq(num[drawn, lang].sum(0), den[drawn, lang].sum(0)) for lang in (0, 1)]
    assert est.total[2] == pytest.approx(sum(plain) / 2, abs=1e-12)


def test_rank_against_the_fully_evaluated_generators():
    refs = np.array([0.9, 0.8, 0.7, np.nan])
    # 0.75 is below two references: rank 3; its interval [0.65, 0.85] spans ranks 2 to 4
    assert rank_against(0.75, 0.65, 0.85, refs) == (3, 2, 4)


def test_validation_summary_counts_cases_and_errors():
    stats = hand_world(n_concepts=120, n_models=5)
    cases = validation_cases(
        stats, budgets=(0.5,), strategies=("random",), seeds=range(3), estimators=("ht",)
    )
    (row,) = summarise_validation(cases)
    assert row["strategy"] == "random-ht" and row["estimator"] == "ht"
    assert row["n_cases"] == 5 * 3
    by_hand = 100 * np.mean([abs(c.estimate - c.truth) for c in cases])
    assert row["mae_points"] == pytest.approx(by_hand)
    # generator skills are 0.5 logit apart: half the concepts order them almost surely
    assert row["spearman"] > 0.8 and row["kendall"] > 0.6


def test_validation_folds_in_threads_give_the_serial_cases_bit_for_bit():
    """`workers` only changes how many held-out generators are computed at once: the cases, each
    float to the bit, their order and the progress messages are the one-thread run's."""
    stats = hand_world(n_concepts=120, n_models=5)
    told = {1: [], 3: []}
    cases = {}
    for workers, progress in told.items():
        cases[workers] = validation_cases(
            stats, budgets=(0.1, 0.5), seeds=range(2), progress=progress.append, workers=workers
        )
    assert len(cases[1]) == 5 * 2 * 2 * 3 * 2  # held out x budgets x seeds x plans x estimators
    assert cases[3] == cases[1]
    assert told[3] == told[1] == [f"held out {m}" for m in stats.model_ids]


def effects_world(n_concepts: int, n_models: int = 6, effect_sd: float = 1.5, seed: int = 7):
    """hand_world's layout with a strong planted prompt effect per (concept, capability), shared
    by every generator and both languages, and 4 questions per cell: a hard prompt is hard for
    everyone, which the item model can learn from the references."""
    rng = np.random.default_rng(seed)
    shape = (n_concepts, n_models, 2, len(CAPABILITIES))
    den = np.full(shape, 4.0)
    skill = np.linspace(-0.5, 1.5, n_models)[None, :, None, None]
    effect = rng.normal(0, effect_sd, size=(n_concepts, 1, 1, len(CAPABILITIES)))
    num = rng.binomial(4, np.broadcast_to(1 / (1 + np.exp(-(skill + effect))), shape)).astype(float)
    return world_stats(num, den, is_transcription=np.zeros(len(CAPABILITIES), bool))


def test_greg_has_smaller_variance_than_ht_over_every_sample_of_a_tiny_population():
    # 12 concepts, 4 drawn by simple random sampling: all C(12, 4) = 495 samples are enumerated,
    # so each estimator's design variance and bias are exact, not Monte Carlo. The references'
    # item model sees the planted prompt effects; HT cannot use them.
    import itertools

    stats = effects_world(n_concepts=12)
    new = 3
    num, den = stats.numerator[:, new], stats.denominator[:, new]
    truth = np.mean([brute_hcq(num[:, lang].sum(0), den[:, lang].sum(0)) for lang in (0, 1)])
    planner = Planner(stats, tuple(k for k in range(6) if k != new))
    predictor = Predictor.from_planner(planner)
    inclusion, stratum = np.full(12, 4 / 12), np.zeros(12, int)
    totals, variances = {"ht": [], "greg": []}, {"ht": [], "greg": []}
    for chosen in itertools.combinations(range(12), 4):
        plan = Plan("random", np.array(chosen), inclusion, stratum)
        for name in totals:
            got = estimate(name, num, den, plan, stats, predictor)
            totals[name].append(got.total[2])
            variances[name].append(got.std_error[2] ** 2)
    mse = {name: np.mean((np.array(v) - truth) ** 2) for name, v in totals.items()}
    # with a logit effect sd of 1.5 the prompt carries most of a cell's variance: the
    # model-assisted residuals leave well under half of HT's mean squared error (about a fifth)
    assert mse["greg"] < 0.5 * mse["ht"], mse
    # and the interval's variance estimate is right on average over the samples
    assert np.mean(variances["greg"]) == pytest.approx(mse["greg"], rel=0.2)
    assert abs(np.mean(totals["greg"]) - truth) < 0.1 * np.sqrt(mse["greg"])


def test_greg_interval_is_the_residual_variance_computed_by_hand():
    # One drawn sample of the effects world: the GREG standard error must equal the textbook
    # SRS variance N^2 (1 - f) s_e^2 / n of the linearised residuals, each built here from the
    # predictor's own predictions (ability, item probabilities) but with loops, not arrays.
    stats = effects_world(n_concepts=60)
    new = 2
    num, den = stats.numerator[:, new], stats.denominator[:, new]
    planner = Planner(stats, tuple(k for k in range(6) if k != new))
    predictor = Predictor.from_planner(planner)
    chosen = np.arange(0, 60, 3)  # 20 of 60
    n_pop, n = 60, len(chosen)
    plan = Plan("random", chosen, np.full(n_pop, n / n_pop), np.zeros(n_pop, int))
    got = estimate("greg", num, den, plan, stats, predictor)
    theta, _ = predictor.ability(num, den, chosen)
    items, weight = predictor.items, n_pop / n
    residual = np.zeros(n)
    for lang in range(2):
        for t in range(len(CAPABILITIES)):
            p = [
                1 / (1 + np.exp(-(items.slope[c, lang, t] * (theta[lang, t] - items.centre[lang, t])
                                  + items.intercept[c, lang, t])))
                for c in range(n_pop)
            ]  # fmt: skip
            level = sum(den[c, lang, t] for c in chosen) / sum(
                predictor.denominator[c, lang, t] for c in chosen
            )
            m = [predictor.denominator[c, lang, t] * level for c in range(n_pop)]
            n_hat = sum(p[c] * m[c] for c in range(n_pop)) + weight * sum(
                num[c, lang, t] - p[c] * m[c] for c in chosen
            )
            d_hat = sum(m) + weight * sum(den[c, lang, t] - m[c] for c in chosen)
            score = n_hat / d_hat
            # bilingual HCQ weight of (lang, t): half of 1 / (groups x group size)
            size = GROUPS.count(GROUPS[t])
            w = 0.5 / (len(set(GROUPS)) * size)
            for i, c in enumerate(chosen):
                residual[i] += (
                    w / d_hat * ((num[c, lang, t] - p[c] * m[c]) - score * (den[c, lang, t] - m[c]))
                )
    variance = n_pop**2 * (1 - n / n_pop) * np.var(residual, ddof=1) / n
    assert got.std_error[2] == pytest.approx(np.sqrt(variance), rel=1e-9)


def test_validation_of_a_single_language_release_uses_its_language():
    # An English-only release (TIFA160) has no bilingual scope: the validation reports `en`.
    from dataclasses import replace

    from method.subsets import validation_scope

    both = hand_world(n_concepts=120, n_models=4)
    english = replace(
        both, languages=("en",), numerator=both.numerator[:, :, :1],
        denominator=both.denominator[:, :, :1],
    )  # fmt: skip
    assert validation_scope(both) == "bilingual" and validation_scope(english) == "en"
    cases = validation_cases(english, budgets=(0.25,), seeds=range(2), scope="en")
    assert {c.strategy for c in cases} == {
        "random", "stratified", "irt", "random-ht", "stratified-ht", "irt-ht",
    }  # fmt: skip
    num, den = english.numerator[:, :, 0].sum(0), english.denominator[:, :, 0].sum(0)
    truth = {m: brute_hcq(num[m], den[m]) for m in range(4)}
    assert all(c.truth == pytest.approx(truth[c.model]) for c in cases)
    assert all(np.isfinite(c.estimate) and c.ci_lo <= c.estimate <= c.ci_hi for c in cases)
