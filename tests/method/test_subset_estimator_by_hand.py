"""The subset estimators (METHOD 16, `method.subsets.estimator`) against loops written here from
the docstrings: the Hajek (`ht`) and GREG estimates with their intervals on a stratified plan
(a stratum of one, a stratum drawn with certainty, a capability without drawn evidence, a cell
of total 1), the new generator's MAP ability against scipy's optimiser, the predictor's prior,
and the rank against the references. Written for mutants every test survived or no test reached
(mutation testing, issue 36)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.optimize import minimize_scalar

from method.subsets.estimator import (
    Z95,
    Predictor,
    estimate,
    greg_estimate,
    rank_against,
    subset_estimate,
)
from method.subsets.items import ItemModel, fit_items, reference_abilities
from method.subsets.plans import Plan, Planner
from tests.method.test_subset_items_by_hand import (
    GROUPS,
    sigmoid,
    small_items,
    small_stats,
    small_world,
)

N_CONCEPTS = 9
# strata: 0 = {6} (a stratum of one), 1 = {4, 5} drawn with certainty (both skipped, and
# before the others), 2 = {0, 1, 2} drawn at unequal pi, 3 = {3, 7}, concept 8 never drawn
INCLUSION = np.array([0.5, 0.5, 0.4, 0.4, 1.0, 1.0, 0.3, 0.6, 0.5])
STRATUM = np.array([2, 2, 2, 3, 1, 1, 0, 3, 3])
CHOSEN = np.array([0, 1, 2, 3, 4, 5, 6, 7])
PLAN = Plan("stratified", CHOSEN, INCLUSION, STRATUM)


def new_generator() -> tuple[np.ndarray, np.ndarray]:
    """The new generator's evidence [9, L, T]: no zh a1 anywhere, en a2 one valid question (right)
    on concept 4 only (drawn with certainty: an estimated valid count of exactly 1), the rest
    small binomial counts."""
    rng = np.random.default_rng(8)
    den = rng.integers(1, 6, size=(N_CONCEPTS, 2, 3)).astype(float)
    num = rng.binomial(den.astype(int), 0.55).astype(float)
    den[:, 1, 0] = num[:, 1, 0] = 0.0
    den[:, 0, 1] = num[:, 0, 1] = 0.0
    den[4, 0, 1] = num[4, 0, 1] = 1.0
    return num, den


def hand_totals(num_hat, den_hat) -> list[float]:
    """Eq. 2-4 per scope (en, zh, bilingual) from capability totals [L, T] by loops."""
    per_language = []
    for li in range(2):
        views = []
        for g in dict.fromkeys(GROUPS):
            scores = [
                max(0.0, num_hat[li, t] / den_hat[li, t])
                for t in range(3)
                if GROUPS[t] == g and den_hat[li, t] > 0
            ]
            if scores:
                views.append(sum(scores) / len(scores))
        per_language.append(sum(views) / len(views) if views else math.nan)
    return [*per_language, (per_language[0] + per_language[1]) / 2]


def hand_scope_weights(available) -> dict:
    """w[scope, l, t] / nothing else: Eq. 4's weight of each available capability in the scope's
    total (en, zh, then the bilingual scope halving both)."""
    per_language = {}
    for li in range(2):
        sizes = {g: sum(available[li][t] for t in range(3) if GROUPS[t] == g) for g in GROUPS}
        n_groups = sum(1 for size in sizes.values() if size)
        for t in range(3):
            per_language[li, t] = 1 / (n_groups * sizes[GROUPS[t]]) if available[li][t] else 0.0
    weights = {}
    for li, t in per_language:
        weights[0, li, t] = per_language[li, t] if li == 0 else 0.0
        weights[1, li, t] = per_language[li, t] if li == 1 else 0.0
        weights[2, li, t] = 0.5 * per_language[li, t]
    return weights


def hand_hajek(values: list[list[float]], pi, stratum) -> list[float]:
    """hajek_variance's docstring by loops: per stratum of at least 2 drawn, not all certain,
    n/(n-1) sum (1 - pi)(y / pi - A)^2 with A the (1 - pi)-weighted mean of y / pi."""
    total = [0.0] * len(values[0])
    for label in set(stratum):
        members = [i for i, s in enumerate(stratum) if s == label]
        weight = sum(1 - pi[i] for i in members)
        if len(members) < 2 or weight <= 0:
            continue
        for j in range(len(total)):
            y = {i: values[i][j] / pi[i] for i in members}
            centre = sum((1 - pi[i]) * y[i] for i in members) / weight
            spread = sum((1 - pi[i]) * (y[i] - centre) ** 2 for i in members)
            total[j] += len(members) / (len(members) - 1) * spread
    return total


def hand_interval(num, den, num_hat, den_hat, available, predicted=None):
    """(variance per scope, weights) of the linearised residuals: e_c = sum_(l,t) w_lt
    (r_num - S r_den) / D_lt, with r = the evidence minus its prediction (none for `ht`)."""
    avail = [
        [(available is None or available[li][t]) and den_hat[li, t] > 0 for t in range(3)]
        for li in range(2)
    ]
    weights = hand_scope_weights(avail)
    values = []
    for c in CHOSEN:
        row = [0.0, 0.0, 0.0]
        for li in range(2):
            for t in range(3):
                if not avail[li][t]:
                    continue
                p_m, m = predicted[c, li, t] if predicted is not None else (0.0, 0.0)
                score = num_hat[li, t] / den_hat[li, t]
                residual = (num[c, li, t] - p_m) - score * (den[c, li, t] - m)
                for s in range(3):
                    row[s] += weights[s, li, t] / den_hat[li, t] * residual
        values.append(row)
    return hand_hajek(values, INCLUSION[CHOSEN], STRATUM[CHOSEN]), weights, avail


@pytest.mark.filterwarnings("error")
@pytest.mark.parametrize("available", [None, "given"])
def test_hajek_estimate_and_interval_by_hand(available):
    """Guards `subset_estimate`: 1/pi-weighted totals, Eq. 4 per scope, the linearisation
    variance over the strata (a stratum of one and a certainty stratum add nothing), the 95%
    interval total -+ Z95 se, the scopes and the count of drawn concepts. `available` given: all
    capabilities but en b claimed available (zh a1 has no drawn evidence: it must stay out, not
    turn into 0/0), so en b leaves the interval's weights; by default a cell of estimated valid
    count exactly 1 (en a2) counts as available. No RuntimeWarning from the empty cell."""
    num, den = new_generator()
    given = np.array([[True, True, False], [True, True, True]])
    flags = None if available is None else given
    got = subset_estimate(num, den, PLAN, small_stats(num[:, None], den[:, None]), flags)
    num_hat = sum(num[c] / INCLUSION[c] for c in CHOSEN)
    den_hat = sum(den[c] / INCLUSION[c] for c in CHOSEN)
    assert den_hat[0, 1] == 1.0
    total = hand_totals(num_hat, den_hat)
    variance, _, _ = hand_interval(
        num, den, num_hat, den_hat, None if flags is None else given.tolist()
    )
    se = np.sqrt(variance)
    assert got.scopes == ("en", "zh", "bilingual") and got.n_concepts == 8
    assert got.total == pytest.approx(total, rel=1e-12)
    assert got.std_error == pytest.approx(se, rel=1e-10)
    assert got.ci_lo == pytest.approx(np.array(total) - Z95 * se, rel=1e-10)
    assert got.ci_hi == pytest.approx(np.array(total) + Z95 * se, rel=1e-10)


def hand_ability(y, n, a, d, centre, mu, sd):
    """(MAP theta, 1 / information there) of one cell by scipy: binomial log-likelihood of the
    drawn concepts under fixed items plus the Gaussian prior."""

    def negative_log_posterior(theta):
        value = (theta - mu) ** 2 / (2 * sd**2)
        for yc, nc, ac, dc in zip(y, n, a, d, strict=True):
            eta = ac * (theta - centre) + dc
            value -= yc * eta - nc * math.log1p(math.exp(eta))
        return value

    theta = minimize_scalar(negative_log_posterior, bracket=(mu - 1, mu + 1), tol=1e-12).x
    info = sum(
        ac
        * ac
        * nc
        * sigmoid(ac * (theta - centre) + dc)
        * (1 - sigmoid(ac * (theta - centre) + dc))
        for nc, ac, dc in zip(n, a, d, strict=True)
    )
    return theta, 1 / (info + 1 / sd**2)


def small_predictor() -> Predictor:
    """Items [9, L, T] with distinct parameters and mean valid counts of every kind: zh a1 and
    en a1 have one only on the never-drawn concept 8 (zh a1 is then the model's alone; en a1
    has a drawn mean of 0, so its level stays 1), en b small ones (a drawn mean under 1), zh a2
    none, the rest 1-5."""
    items = small_items((N_CONCEPTS, 2, 3))
    denominator = np.random.default_rng(9).uniform(1.0, 5.0, size=(N_CONCEPTS, 2, 3))
    denominator[:, 1, 0] = denominator[:, 0, 0] = denominator[:, 1, 1] = 0.0
    denominator[8, 1, 0], denominator[8, 0, 0] = 3.0, 2.0
    denominator[:, 0, 2] = 0.05
    prior_mean = np.array([[0.3, -0.2, 0.5], [0.1, 0.4, -0.3]])
    prior_sd = np.array([[0.6, 0.9, 1.2], [0.7, 0.8, 1.5]])
    return Predictor(items, denominator, prior_mean, prior_sd)


def test_ability_is_the_map_of_each_cell():
    """Guards `Predictor.ability`: per (language, capability) the MAP of the binomial counts on
    the chosen concepts under the fixed items and the Gaussian prior (checked against scipy),
    and its Laplace variance 1 / (sum a^2 n p (1 - p) + 1 / sd^2). A cell without drawn evidence
    keeps the prior (mean, sd^2). en a1 and zh b are cells where an undamped Newton step runs
    off (to +27 and -324 from MAPs of 3.0 and -5.2): only the step bound of 2 both ways finds
    the optimum."""
    num, den = new_generator()
    predictor = small_predictor()
    items = predictor.items
    slope, intercept, centre = items.slope.copy(), items.intercept.copy(), items.centre.copy()
    prior_mean, prior_sd = predictor.prior_mean.copy(), predictor.prior_sd.copy()
    extremes = [
        ((0, 0), [0], [1.21], [-3.27], [17], [10], -1.53, 10.0),
        ((1, 2), [0, 1], [2.21, 1.6], [6.23, 7.25], [14, 22], [1, 4], 0.06, 30.0),
    ]
    for (li, t), drawn, a, d, n, y, mu, sd in extremes:
        den[:, li, t] = num[:, li, t] = 0.0
        den[drawn, li, t], num[drawn, li, t] = n, y
        slope[drawn, li, t], intercept[drawn, li, t], centre[li, t] = a, d, 0.0
        prior_mean[li, t], prior_sd[li, t] = mu, sd
    items = ItemModel(slope, intercept, centre, items.covariance, items.fitted)
    predictor = Predictor(items, predictor.denominator, prior_mean, prior_sd)
    theta, variance = predictor.ability(num, den, CHOSEN)
    for li, t in np.ndindex(2, 3):
        want = hand_ability(
            num[CHOSEN, li, t], den[CHOSEN, li, t], items.slope[CHOSEN, li, t],
            items.intercept[CHOSEN, li, t], items.centre[li, t],
            predictor.prior_mean[li, t], predictor.prior_sd[li, t],
        )  # fmt: skip
        assert (theta[li, t], variance[li, t]) == pytest.approx(want, rel=1e-6, abs=1e-7)
    assert theta[1, 0] == predictor.prior_mean[1, 0]
    assert variance[1, 0] == pytest.approx(predictor.prior_sd[1, 0] ** 2)


@pytest.mark.filterwarnings("error")
@pytest.mark.parametrize("available", [None, "given"])
def test_greg_estimate_and_interval_by_hand(available):
    """Guards `greg_estimate` term by term (its docstring by loops, with the ability from
    scipy): the valid count m_c scaled by the drawn concepts' level, N_hat and D_hat as the
    prediction over all concepts plus the 1/pi residuals of the drawn ones, Eq. 4 per scope, the
    residuals' Hajek variance over the strata plus the ability's variance on zh a1, which only the
    model sees ((w dN/dtheta)^2 Var theta), the interval, the scopes and the drawn count. Cells
    of every kind: a drawn mean valid count of 0 with drawn evidence (en a1), one under 1 (en b),
    a cell nobody has (zh a2, claimed available when `available` is given: it must stay out),
    one all wrong (zh b, whose N_hat would fall below 0 unclipped). No RuntimeWarning."""
    num, den = new_generator()
    num[:, 1, 1] = den[:, 1, 1] = num[:, 1, 2] = 0.0
    predictor = small_predictor()
    given = np.array([[True, True, False], [True, True, True]])
    flags = None if available is None else given
    stats = small_stats(num[:, None], den[:, None])
    got = greg_estimate(num, den, PLAN, stats, predictor, flags)
    items, pd = predictor.items, predictor.denominator
    num_hat, den_hat = np.zeros((2, 3)), np.zeros((2, 3))
    predicted, slope_of_score, theta_var = {}, np.zeros((2, 3)), np.zeros((2, 3))
    for li, t in np.ndindex(2, 3):
        theta, theta_var[li, t] = hand_ability(
            num[CHOSEN, li, t], den[CHOSEN, li, t], items.slope[CHOSEN, li, t],
            items.intercept[CHOSEN, li, t], items.centre[li, t],
            predictor.prior_mean[li, t], predictor.prior_sd[li, t],
        )  # fmt: skip
        drawn = sum(pd[c, li, t] / INCLUSION[c] for c in CHOSEN)
        level = sum(den[c, li, t] / INCLUSION[c] for c in CHOSEN) / drawn if drawn > 0 else 1.0
        n_hat = d_hat = 0.0
        for c in range(N_CONCEPTS):
            m = pd[c, li, t] * level
            p = sigmoid(
                items.slope[c, li, t] * (theta - items.centre[li, t]) + items.intercept[c, li, t]
            )
            predicted[c, li, t] = (p * m, m)
            n_hat += p * m
            d_hat += m
            slope_of_score[li, t] += items.slope[c, li, t] * p * (1 - p) * m
            if c in CHOSEN:
                n_hat += (num[c, li, t] - p * m) / INCLUSION[c]
                d_hat += (den[c, li, t] - m) / INCLUSION[c]
        den_hat[li, t] = max(d_hat, 0.0)
        num_hat[li, t] = min(max(n_hat, 0.0), den_hat[li, t])
    total = hand_totals(num_hat, den_hat)
    variance, weights, avail = hand_interval(
        num, den, num_hat, den_hat, None if flags is None else given.tolist(), predicted
    )
    for s, li, t in np.ndindex(3, 2, 3):
        if avail[li][t] and den[CHOSEN, li, t].sum() == 0:
            variance[s] += (
                weights[s, li, t] / den_hat[li, t] * slope_of_score[li, t]
            ) ** 2 * theta_var[li, t]
    se = np.sqrt(variance)
    assert se[1] > 0 and den[CHOSEN, 1, 0].sum() == 0 and den_hat[1, 0] > 0
    assert got.scopes == ("en", "zh", "bilingual") and got.n_concepts == 8
    assert got.total == pytest.approx(total, rel=1e-7)
    assert got.std_error == pytest.approx(se, rel=1e-6)
    assert got.ci_lo == pytest.approx(got.total - Z95 * se, rel=1e-6)
    assert got.ci_hi == pytest.approx(got.total + Z95 * se, rel=1e-6)


def test_estimate_dispatches_by_name():
    """Guards `estimate`: "greg" is `greg_estimate` and "ht" `subset_estimate`, each handed the
    plan, the predictor and `available`; another name is refused, naming the estimators."""
    num, den = new_generator()
    stats, predictor = small_stats(num[:, None], den[:, None]), small_predictor()
    given = np.array([[True, True, False], [True, True, True]])
    greg = estimate("greg", num, den, PLAN, stats, predictor, given)
    ht = estimate("ht", num, den, PLAN, stats, None, given)
    assert (
        greg.std_error.tolist()
        == greg_estimate(num, den, PLAN, stats, predictor, given).std_error.tolist()
    )
    assert ht.std_error.tolist() == subset_estimate(num, den, PLAN, stats, given).std_error.tolist()
    assert greg.total.tolist() != ht.total.tolist()
    with pytest.raises(
        ValueError, match=r"unknown estimator 'hajek'; expected one of \('greg', 'ht'\)"
    ):
        estimate("hajek", num, den, PLAN, stats, predictor)


def test_predictor_from_planner_by_hand():
    """Guards `Predictor.from_planner`: the prior of a new generator's ability per cell is the
    references' mean logit score and their sd floored at 0.5 (a reference without evidence in a
    cell takes the others' mean; a cell no reference has stands at 0 with sd 0.5), the
    predicted valid count the references' mean per concept, the item model the one handed in
    (or the planner's own fit). References 0 and 2 of three generators; generator 1 is left out."""
    num, den = small_world()
    num[:, 2, 1, 1] = den[:, 2, 1, 1] = 0.0
    stats = small_stats(num, den)
    planner = Planner(stats, (0, 2))
    items = small_items()
    got = Predictor.from_planner(planner, items)
    assert got.items is items
    for li, t in np.ndindex(2, 3):
        logits = []
        for k in (0, 2):
            total = den[:, k, li, t].sum()
            if total > 0:
                s = min(max(num[:, k, li, t].sum() / total, 1e-3), 1 - 1e-3)
                logits.append(math.log(s / (1 - s)))
        if not logits:
            logits = [0.0, 0.0]
        elif len(logits) == 1:
            logits = logits * 2
        mean = sum(logits) / 2
        sd = math.sqrt(sum((x - mean) ** 2 for x in logits) / 2)
        assert got.prior_mean[li, t] == pytest.approx(mean, abs=1e-12)
        assert got.prior_sd[li, t] == pytest.approx(max(sd, 0.5), abs=1e-12)
        for c in range(4):
            assert got.denominator[c, li, t] == (den[c, 0, li, t] + den[c, 2, li, t]) / 2
    assert (got.prior_sd > 0.5).any() and (got.prior_sd == 0.5).any()
    fitted = Predictor.from_planner(planner)
    ref_num, ref_den = num[:, [0, 2]], den[:, [0, 2]]
    own = fit_items(ref_num, ref_den, reference_abilities(ref_num, ref_den))
    assert fitted.items.slope.tolist() == own.slope.tolist()


def test_rank_against_counts_strictly_better_references_and_skips_missing_ones():
    """Guards `rank_against`: the competition rank is 1 + the references strictly above (a tie
    shares the better rank), at the total and at both interval ends (hi gives the better rank);
    a reference without a total (None from a nullable column, or NaN) is skipped; a NaN total
    has no rank."""
    refs = [0.9, None, 0.5, float("nan"), 0.3]
    assert rank_against(0.5, 0.2, 0.95, refs) == (2, 1, 4)
    assert rank_against(float("nan"), 0.0, 1.0, refs) == (None, None, None)
