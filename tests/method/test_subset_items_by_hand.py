"""The `irt` plans' item model (METHOD 16, `method.subsets.items`) against loops written here from
the docstrings: `ItemModel.probability`, `overdispersion`, `irt_sizes` for both estimators, and
`fit_items` against scipy's optimiser of the same log-posterior. Written for mutants every test
survived or no test reached (mutation testing, issue 36): the older tests checked these only
through the plans' unbiasedness over hundreds of draws, which a wrong size measure keeps."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.optimize import minimize

from method.bootstrap import ConceptStats
from method.subsets.items import (
    ItemModel,
    fit_items,
    irt_sizes,
    irt_sizes_by_estimator,
    overdispersion,
)

LANGUAGES = ("en", "zh")
CAPABILITIES = ("a1", "a2", "b")
GROUPS = ("A", "A", "B")


def small_stats(num: np.ndarray, den: np.ndarray) -> ConceptStats:
    """ConceptStats [C, K, 2, 3] of the two-group taxonomy, concepts c0.. and models r0.."""
    return ConceptStats(
        concept_ids=tuple(f"c{i}" for i in range(num.shape[0])),
        model_ids=tuple(f"r{k}" for k in range(num.shape[1])),
        languages=LANGUAGES,
        capabilities=CAPABILITIES,
        capability_groups=GROUPS,
        is_transcription=np.zeros(3, bool),
        numerator=num,
        denominator=den,
    )


def small_world() -> tuple[np.ndarray, np.ndarray]:
    """Evidence [C=4, K=3, L=2, T=3] with the corners the size measure handles apart:
    zh a1 has no evidence at all (unavailable: zh a2 then carries group A alone), en a2 has one
    valid question of one reference only (the others' ability stands at the centre; a total of
    exactly 1), en b of reference 0 scores 1 (binomial variance 0), the rest binomial counts."""
    rng = np.random.default_rng(36)
    den = rng.integers(1, 5, size=(4, 3, 2, 3)).astype(float)
    num = rng.binomial(den.astype(int), 0.6).astype(float)
    den[:, :, 1, 0] = num[:, :, 1, 0] = 0.0
    den[:, :, 0, 1] = num[:, :, 0, 1] = 0.0
    den[2, 1, 0, 1], num[2, 1, 0, 1] = 1.0, 1.0
    num[:, 0, 0, 2] = den[:, 0, 0, 2]
    return num, den


def small_items(shape=(4, 2, 3)) -> ItemModel:
    """An item model with every parameter distinct (so a slope read for an intercept, or one
    covariance entry for another, changes the numbers)."""
    rng = np.random.default_rng(7)
    a, b, r = (
        rng.uniform(0.2, 0.6, shape),
        rng.uniform(0.3, 0.9, shape),
        rng.uniform(-0.1, 0.1, shape),
    )
    cov = np.zeros((*shape, 2, 2))
    cov[..., 0, 0], cov[..., 1, 1], cov[..., 0, 1], cov[..., 1, 0] = a, b, r, r
    return ItemModel(
        slope=rng.uniform(0.5, 1.5, shape),
        intercept=rng.normal(0.3, 0.8, shape),
        centre=rng.normal(0.2, 0.5, shape[1:]),
        covariance=cov,
        fitted=np.ones(shape, bool),
    )


def sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x))


def hand_design_weights(available) -> dict:
    """Eq. 4's bilingual weight of each available (language, capability): half of
    1 / (non-empty groups x available capabilities of the group)."""
    weights = {}
    for li in range(2):
        sizes = {g: sum(available[li][t] for t in range(3) if GROUPS[t] == g) for g in set(GROUPS)}
        n_groups = sum(1 for size in sizes.values() if size)
        for t in range(3):
            weights[li, t] = 0.5 / (n_groups * sizes[GROUPS[t]]) if available[li][t] else 0.0
    return weights


def hand_phi(num, den, k, li, t) -> float:
    """Observed over binomial variance of one reference's cell, floored at 1 (1 where the
    binomial variance is 0)."""
    concepts = range(num.shape[0])
    total = sum(den[c, k, li, t] for c in concepts)
    s = sum(num[c, k, li, t] for c in concepts) / total if total else 0.0
    binomial = sum(den[c, k, li, t] * s * (1 - s) for c in concepts)
    if binomial <= 0:
        return 1.0
    observed = sum((num[c, k, li, t] - s * den[c, k, li, t]) ** 2 for c in concepts)
    return max(observed / binomial, 1.0)


def hand_irt_sizes(num, den, items: ItemModel, estimator: str) -> list[float]:
    """irt_sizes' docstring by loops: per concept, the mean over references of the sum over
    cells of (w / D)^2 E[(num - S den)^2], with E as the docstring writes it per estimator."""
    n_c, n_k = num.shape[:2]
    cells = [(k, li, t) for k in range(n_k) for li in range(2) for t in range(3)]
    totals = {cell: sum(den[(c, *cell)] for c in range(n_c)) for cell in cells}
    available = [
        [any(totals[k, li, t] > 0 for k in range(n_k)) for t in range(3)] for li in range(2)
    ]
    weights = hand_design_weights(available)
    sizes = []
    for c in range(n_c):
        variance = 0.0
        for k in range(n_k):
            for li in range(2):
                for t in range(3):
                    total = totals[k, li, t]
                    if total == 0:
                        continue
                    s = sum(num[cc, k, li, t] for cc in range(n_c)) / total
                    centre = items.centre[li, t]
                    theta = math.log(
                        min(max(s, 1e-3), 1 - 1e-3) / (1 - min(max(s, 1e-3), 1 - 1e-3))
                    )
                    x = theta - centre
                    p = sigmoid(items.slope[c, li, t] * x + items.intercept[c, li, t])
                    cov = items.covariance[c, li, t]
                    logit_var = x * x * cov[0, 0] + 2 * x * cov[0, 1] + cov[1, 1]
                    d = den[c, k, li, t]
                    noise = hand_phi(num, den, k, li, t) * d * p * (1 - p)
                    if estimator == "greg":
                        mean_d = sum(den[c, kk, li, t] for kk in range(n_k)) / n_k
                        expected = (
                            noise + d * d * (p * (1 - p)) ** 2 * logit_var
                            + (p - s) ** 2 * (d - mean_d) ** 2
                        )  # fmt: skip
                    else:
                        departure = max((p - s) ** 2 - (p * (1 - p)) ** 2 * logit_var, 0.0)
                        expected = noise + d * d * departure
                    variance += expected * weights[li, t] ** 2 / total**2 / n_k
        sizes.append(math.sqrt(variance))
    return sizes


def test_item_probability_by_hand():
    """Guards `ItemModel.probability`: sigmoid(a (theta - centre) + d) per concept and generator
    (a sign turned or a division for the product moves every value)."""
    items = small_items()
    theta = np.random.default_rng(1).normal(0.5, 1.0, size=(2, 2, 3))
    got = items.probability(theta)
    assert got.shape == (4, 2, 2, 3)
    for c, k, li, t in np.ndindex(got.shape):
        x = theta[k, li, t] - items.centre[li, t]
        want = sigmoid(items.slope[c, li, t] * x + items.intercept[c, li, t])
        assert got[c, k, li, t] == pytest.approx(want, rel=1e-12)


@pytest.mark.filterwarnings("error")
def test_overdispersion_by_hand():
    """Guards `overdispersion`: per reference and cell the squared residuals over the binomial
    variance, summed over concepts (not over everything), floored at 1 and 1 where the binomial
    variance is 0 (a cell without evidence or a perfect score), with no RuntimeWarning for those
    0/0 cells. The hand cell: den (2, 1), num (2, 0): S = 2/3, binomial 6/9 (under 1), residuals
    +-2/3, phi = (8/9) / (6/9) = 4/3."""
    num, den = small_world()
    num[:2, 1, 1, 2], den[:2, 1, 1, 2], num[2:, 1, 1, 2], den[2:, 1, 1, 2] = (2, 0), (2, 1), 0, 0
    got = overdispersion(num, den)
    assert got[1, 1, 2] == pytest.approx(4 / 3)
    for k, li, t in np.ndindex(got.shape):
        assert got[k, li, t] == pytest.approx(hand_phi(num, den, k, li, t), rel=1e-12)
    assert (got[:, 1, 0] == 1.0).all() and got[0, 0, 2] == 1.0


@pytest.mark.filterwarnings("error")
@pytest.mark.parametrize("estimator", ["ht", "greg"])
def test_irt_sizes_by_hand(estimator):
    """Guards `irt_sizes` term by term (noise with overdispersion, the de-biased departure for
    `ht`, the prediction error and valid-count departure for `greg`, the Laplace logit variance
    from all three covariance entries, the weights over available capabilities, the scale by the
    reference's total and the mean over references), on a world with an unavailable capability,
    a reference without evidence in a cell and a cell of total 1; no RuntimeWarning from them."""
    num, den = small_world()
    items = small_items()
    got = irt_sizes(num, den, small_stats(num, den), items, estimator)
    want = hand_irt_sizes(num, den, items, estimator)
    assert got == pytest.approx(want, rel=1e-10)


@pytest.mark.filterwarnings("error")
def test_both_estimators_sizes_at_once_by_hand():
    """Guards `irt_sizes_by_estimator` (the validation's one call per fold for both
    estimators): each estimator's sizes are its own by hand, in either order, so a term one
    estimator computes cannot leak into the other's (e.g. `greg`'s expectation kept for `ht`)."""
    num, den = small_world()
    items, stats = small_items(), small_stats(num, den)
    for order in (("greg", "ht"), ("ht", "greg")):
        got = irt_sizes_by_estimator(num, den, stats, items, order)
        assert list(got) == list(order)
        for estimator in order:
            want = hand_irt_sizes(num, den, items, estimator)
            assert got[estimator] == pytest.approx(want, rel=1e-10)


def test_irt_sizes_default_to_the_design_only_estimator():
    """Guards the default: without `estimator` the sizes are the `ht` ones, which differ from
    the `greg` ones on this world."""
    num, den = small_world()
    items, stats = small_items(), small_stats(num, den)
    assert (
        irt_sizes(num, den, stats, items).tolist()
        == irt_sizes(num, den, stats, items, "ht").tolist()
    )
    assert (
        irt_sizes(num, den, stats, items).tolist()
        != irt_sizes(num, den, stats, items, "greg").tolist()
    )


def map_cell(y, n, x, centre, slope_sd=0.5, intercept_sd=1.0):
    """(slope, intercept) maximising one cell's binomial log-likelihood plus its Gaussian
    priors, by scipy (BFGS), and the inverse of the negative Hessian there, by hand."""

    def negative_log_posterior(params):
        a, d = params
        value = (a - 1.0) ** 2 / (2 * slope_sd**2) + (d - centre) ** 2 / (2 * intercept_sd**2)
        for yk, nk, xk in zip(y, n, x, strict=True):
            eta = a * xk + d
            value -= yk * eta - nk * math.log1p(math.exp(eta))
        return value

    a, d = minimize(negative_log_posterior, [1.0, centre], method="BFGS", options={"gtol": 1e-10}).x
    info = [
        nk * sigmoid(a * xk + d) * (1 - sigmoid(a * xk + d)) for nk, xk in zip(n, x, strict=True)
    ]
    h_aa = sum(xk * xk * i for xk, i in zip(x, info, strict=True)) + 1 / slope_sd**2
    h_ad = sum(xk * i for xk, i in zip(x, info, strict=True))
    h_dd = sum(info) + 1 / intercept_sd**2
    det = h_aa * h_dd - h_ad**2
    return a, d, np.array([[h_dd, -h_ad], [-h_ad, h_aa]]) / det


def test_fit_items_is_the_map_of_each_cell():
    """Guards `fit_items`: each cell with reference evidence is the MAP of its own 2PL (checked
    against scipy on the same log-posterior, with abilities centred on the references' mean and
    a reference's missing ability replaced by the others' mean), its covariance the inverse
    information there; a cell without evidence keeps the prior (slope 1, intercept the centre,
    covariance diag(sd^2)). Extreme counts (all or none right) need the damped steps."""
    num, den = small_world()
    num[0, :, 0, 0], den[0, :, 0, 0] = (5, 5, 5), (5, 5, 5)
    num[1, :, 0, 0], den[1, :, 0, 0] = (0, 0, 0), (6, 6, 6)
    theta = np.random.default_rng(3).normal(0.4, 0.9, size=(3, 2, 3))
    theta[1, 1, 2] = np.nan
    got = fit_items(num, den, theta)
    filled = theta.copy()
    filled[1, 1, 2] = (theta[0, 1, 2] + theta[2, 1, 2]) / 2
    centre = filled.mean(axis=0)
    assert got.centre == pytest.approx(centre, rel=1e-12)
    for c, li, t in np.ndindex(4, 2, 3):
        n = den[c, :, li, t]
        if n.sum() == 0:
            assert (got.slope[c, li, t], got.intercept[c, li, t]) == (1.0, centre[li, t])
            assert got.covariance[c, li, t].tolist() == [[0.25, 0.0], [0.0, 1.0]]
            assert not got.fitted[c, li, t]
            continue
        a, d, cov = map_cell(num[c, :, li, t], n, filled[:, li, t] - centre[li, t], centre[li, t])
        assert got.fitted[c, li, t]
        assert got.slope[c, li, t] == pytest.approx(a, abs=1e-5)
        assert got.intercept[c, li, t] == pytest.approx(d, abs=1e-5)
        assert got.covariance[c, li, t] == pytest.approx(cov, rel=1e-4, abs=1e-8)


def test_fit_items_priors_are_the_arguments():
    """Guards `fit_items`' slope_sd / intercept_sd: tighter priors than the defaults give the
    MAP under those priors (scipy), and the prior covariance of an unfitted cell is theirs."""
    num, den = small_world()
    theta = np.random.default_rng(4).normal(0.0, 1.0, size=(3, 2, 3))
    got = fit_items(num, den, theta, slope_sd=0.3, intercept_sd=0.7)
    centre = theta.mean(axis=0)
    a, d, cov = map_cell(
        num[0, :, 0, 2], den[0, :, 0, 2], theta[:, 0, 2] - centre[0, 2], centre[0, 2], 0.3, 0.7
    )
    assert (got.slope[0, 0, 2], got.intercept[0, 0, 2]) == pytest.approx((a, d), abs=1e-5)
    assert got.covariance[0, 0, 2] == pytest.approx(cov, rel=1e-4)
    assert got.covariance[0, 1, 0] == pytest.approx(np.array([[0.09, 0.0], [0.0, 0.49]]))


@pytest.mark.parametrize(
    ("theta", "trials", "successes"),
    [
        ([1.26, -4.99, 3.46, 1.71], [20, 11, 33, 11], [18, 0, 33, 10]),
        (
            [0.1, 0.04, -2.1, 1.38, -3.04, 1.96, 4.48],
            [30, 28, 29, 23, 15, 11, 18],
            [0, 0, 0, 2, 0, 4, 9],
        ),
    ],
)
def test_fit_items_of_one_item_over_spread_abilities(theta, trials, successes):
    """Guards `fit_items`' Newton steps on a single fitted cell over abilities spread far from
    their centre (where slope and intercept are strongly coupled): the MAP (scipy) and its
    covariance, which a step dropping the coupling term, a wider damping or a stop after the
    first step (as if one cell were no cell) miss by 1e-3 or more."""
    theta_k = np.array(theta, float)[:, None, None]
    num = np.array(successes, float)[None, :, None, None]
    den = np.array(trials, float)[None, :, None, None]
    got = fit_items(num, den, theta_k)
    centre = float(theta_k.mean())
    a, d, cov = map_cell(num[0, :, 0, 0], den[0, :, 0, 0], theta_k[:, 0, 0] - centre, centre)
    assert (got.slope.item(), got.intercept.item()) == pytest.approx((a, d), abs=1e-5)
    assert got.covariance[0, 0, 0] == pytest.approx(cov, rel=1e-4)
