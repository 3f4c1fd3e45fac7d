"""The subset plans (METHOD 16, `method.subsets.plans`) against hand computations: the budget's
bounds, pi-ps probabilities with certainty units, sequential Poisson sampling's size floor,
proportional allocation by largest remainder, the difficulty strata by loops, and how
`make_plan` and `Planner.sizes` hand a precomputed design and the estimator on. Written for
mutants every test survived (mutation testing, issue 36)."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from method.bootstrap import ConceptStats
from method.subsets.items import irt_sizes
from method.subsets.plans import (
    Planner,
    budget_size,
    difficulty_strata,
    make_plan,
    pps_probabilities,
    sequential_poisson,
    stratified_sample,
)
from tests.method.test_subset_items_by_hand import small_stats, small_world


def test_budget_size_bounds():
    """Guards `budget_size`: a fraction in (0, 1] (0 and 1.5 refused, naming the range; 1 is
    every concept), rounded, at least 2 concepts (10% of 10 is 2, 10% of 30 is 3)."""
    assert budget_size(7, 1.0) == 7
    assert (budget_size(10, 0.1), budget_size(30, 0.1), budget_size(30, 0.25)) == (2, 3, 8)
    for bad in (0.0, 1.5):
        with pytest.raises(ValueError, match=rf"budget must be a fraction in \(0, 1\], not {bad}"):
            budget_size(10, bad)


def test_pps_probabilities_by_hand():
    """Guards `pps_probabilities`' capping: a unit at pi exactly 1 is not capped again (sizes
    4, 2, 1, 1 at n = 2: 1, 1/2, 1/4, 1/4), a unit at pi in (1, 2] is capped (4, 1, 1, 1 at n = 2:
    1, then one draw over three: 1/3 each), and a unit capped in one round stays capped in the
    next (100, 10, 1 x 6 at n = 3: 100 first, then 10 at 2 x 10 / 16 > 1, then one draw over
    six)."""
    assert pps_probabilities(np.array([4.0, 2, 1, 1]), 2) == pytest.approx([1, 0.5, 0.25, 0.25])
    assert pps_probabilities(np.array([4.0, 1, 1, 1]), 2) == pytest.approx([1, 1 / 3, 1 / 3, 1 / 3])
    got = pps_probabilities(np.array([100.0, 10, 1, 1, 1, 1, 1, 1]), 3)
    assert got == pytest.approx([1, 1, *[1 / 6] * 6])


def test_sequential_poisson_by_hand():
    """Guards `sequential_poisson`: the n concepts with the smallest U_c / size_c (U drawn here
    from the same seed), pi-ps probabilities of the sizes after a floor of 1e-6 x the mean
    positive size for sizes of 0 (sizes 0, 0.2, 0.4, 0.6 at n = 2: the floor 4e-7, not 1, so
    sizes under 1 keep their ratios), equal sizes (simple random sampling) where no size is
    positive; an unnamed plan in one stratum of integer labels."""
    sizes = np.array([0.0, 0.2, 0.4, 0.6])
    got = sequential_poisson(sizes, 2, np.random.default_rng(5))
    floor = 1e-6 * 0.4
    floored = np.array([floor, 0.2, 0.4, 0.6])
    keys = np.random.default_rng(5).random(4) / floored
    assert got.chosen.tolist() == sorted(np.argsort(keys)[:2].tolist())
    assert got.inclusion == pytest.approx(2 * floored / floored.sum(), rel=1e-12)
    assert got.strategy == "" and got.stratum.dtype.kind == "i" and (got.stratum == 0).all()
    zero = sequential_poisson(np.zeros(5), 2, np.random.default_rng(5))
    assert zero.inclusion == pytest.approx(np.full(5, 0.4))
    assert zero.chosen.tolist() == sorted(
        np.argsort(np.random.default_rng(5).random(5))[:2].tolist()
    )


def hand_allocation(counts: list[int], n: int) -> list[int]:
    """Largest-remainder allocation of n over strata of `counts`, exact (fractions), ties to the
    lower stratum label."""
    total = sum(counts)
    quota = [Fraction(n * c, total) for c in counts]
    take = [int(q) for q in quota]
    order = sorted(range(len(counts)), key=lambda i: (-(quota[i] - take[i]), i))
    for i in order[: n - sum(take)]:
        take[i] += 1
    return take


def test_stratified_sample_allocates_by_largest_remainder():
    """Guards `stratified_sample`: proportional allocation by largest remainder (ties to the
    lower label: 24 strata, many with equal remainders, so an unstable sort would hand the
    spare draws elsewhere), simple random sampling without replacement inside each stratum
    (a stratum taken whole holds each member once), inclusion k / size; an unnamed plan."""
    counts = [3, 5, 2, 7, 3, 5, 2, 7, 3, 5, 2, 7, 3, 5, 2, 7, 3, 5, 2, 7, 3, 5, 2, 6]
    strata = np.repeat(np.arange(len(counts)) * 2 + 1, counts)  # labels 1, 3, 5, ...
    n = 37
    take = hand_allocation(counts, n)
    got = stratified_sample(strata, n, np.random.default_rng(2))
    assert got.strategy == "" and got.stratum.tolist() == strata.tolist()
    assert len(got.chosen) == n == len(set(got.chosen.tolist()))
    for i, label in enumerate(np.arange(len(counts)) * 2 + 1):
        members = np.flatnonzero(strata == label)
        assert np.isin(got.chosen, members).sum() == take[i], label
        assert got.inclusion[members] == pytest.approx(take[i] / counts[i])
    whole = stratified_sample(np.array([0] * 6 + [1] * 2), 8, np.random.default_rng(0))
    assert whole.chosen.tolist() == list(range(8))


STRATA_CAPS = ("b", "a1", "a2")
STRATA_GROUPS = ("B", "A", "A")  # group B is the first (0), A the second (1)


def strata_world():
    """References' evidence [C=12, K=2, L=2, T=3] for the difficulty strata: zh a1 nowhere (zh a2
    then weighs as much as zh b), en a2 one question of one reference on concept 0 only (a total
    of exactly 1), concept 1 with more zh a2 than zh b (group A only while zh a1 is out),
    concept 11 without evidence (success 0.5), concept 2 of total 1; the successes tie at
    the tercile edges."""
    den = np.zeros((12, 2, 2, 3))
    num = np.zeros_like(den)
    den[0, 0, 0, 2], num[0, 0, 0, 2] = 1, 1
    den[1, :, 1, 2], num[1, :, 1, 2] = 2, 1
    den[1, :, 1, 0], num[1, :, 1, 0] = 1.5, 0.5
    den[2, 0, 0, 0], num[2, 0, 0, 0] = 1, 0
    rates = [0.2, 0.2, 0.4, 0.4, 0.4, 0.6, 0.6, 0.6]
    cells = [(0, 0), (0, 1), (1, 0), (1, 2)] * 2  # never zh a1 or en a2
    for c, rate, (li, t) in zip(range(3, 11), rates, cells, strict=True):
        den[c, :, li, t], num[c, :, li, t] = 5, 5 * rate
    return num, den


def hand_strata(num, den) -> list[int]:
    """Dominant group (largest sum over its capabilities and languages of the references' mean
    valid count x the bilingual Eq. 4 weight; first on ties) x 3 + tercile of the pooled success
    (numpy's linear quantiles at 1/3 and 2/3; a success on an edge goes above it)."""
    n_c, n_k = den.shape[:2]
    available = [[den[:, :, li, t].sum() > 0 for t in range(3)] for li in range(2)]
    weights = {}
    for li in range(2):
        sizes = {g: sum(available[li][t] for t in range(3) if STRATA_GROUPS[t] == g) for g in "AB"}
        n_groups = sum(1 for s in sizes.values() if s)
        for t in range(3):
            size = sizes[STRATA_GROUPS[t]]
            weights[li, t] = 0.5 / (n_groups * size) if available[li][t] else 0.0
    success = []
    for c in range(n_c):
        total = den[c].sum()
        success.append(num[c].sum() / total if total > 0 else 0.5)
    ranked = sorted(success)
    edges = []
    for q in (1 / 3, 2 / 3):
        pos = q * (n_c - 1)
        lo = int(pos)
        edges.append(ranked[lo] + (pos - lo) * (ranked[lo + 1] - ranked[lo]))
    strata = []
    for c in range(n_c):
        per_group = []
        for g in "BA":
            per_group.append(
                sum(
                    sum(den[c, k, li, t] for k in range(n_k)) / n_k * weights[li, t]
                    for li in range(2)
                    for t in range(3)
                    if STRATA_GROUPS[t] == g
                )
            )
        dominant = per_group.index(max(per_group))
        strata.append(dominant * 3 + sum(1 for e in edges if e <= success[c]))
    return strata


@pytest.mark.filterwarnings("error")
def test_difficulty_strata_by_hand():
    """Guards `difficulty_strata`: dominant reporting group by HCQ-weighted mean valid count
    over available capabilities only (concept 0 is group A by en a2's single question; concept 1
    is group A only because zh a1 is unavailable), pooled success per concept (0.5 without
    evidence, no RuntimeWarning for it), terciles at numpy's quantiles with ties at the edges
    going up, and stratum = group x 3 + tercile."""
    num, den = strata_world()
    stats = ConceptStats(
        concept_ids=tuple(f"c{i}" for i in range(12)),
        model_ids=("r0", "r1"),
        languages=("en", "zh"),
        capabilities=STRATA_CAPS,
        capability_groups=STRATA_GROUPS,
        is_transcription=np.zeros(3, bool),
        numerator=num,
        denominator=den,
    )
    want = hand_strata(num, den)
    assert want[0] // 3 == 1 and want[1] // 3 == 1 and len(set(want)) >= 4
    assert difficulty_strata(num, den, stats).tolist() == want


def test_planner_sizes_hand_the_estimator_on():
    """Guards `Planner.sizes`: `irt` sizes are `irt_sizes` of the references' evidence for the
    estimator asked (the default is `greg`, whose sizes differ from `ht`'s here), `random` equal
    sizes, any other strategy refused with its name."""
    num, den = small_world()
    stats = small_stats(num, den)
    planner = Planner(stats, (0, 2))
    items = planner.items()
    ref_num, ref_den = num[:, [0, 2]], den[:, [0, 2]]
    greg = irt_sizes(ref_num, ref_den, stats, items, "greg")
    ht = irt_sizes(ref_num, ref_den, stats, items, "ht")
    assert greg.tolist() != ht.tolist()
    assert planner.sizes("irt").tolist() == greg.tolist()
    assert planner.sizes("irt", "ht").tolist() == ht.tolist()
    assert planner.sizes("random").tolist() == [1.0] * 4
    with pytest.raises(ValueError, match="strategy 'stratified' has no size measure"):
        planner.sizes("stratified")


def test_make_plan_uses_the_design_handed_in():
    """Guards `make_plan`: a precomputed design is used as given (strata for `stratified`,
    sizes for the pps strategies; not recomputed from the planner), the planner's own without
    one, the draw is reproducible from the seed and strategy, the plan carries the strategy's
    name, and an unknown strategy is refused naming the strategies."""
    num, den = small_world()
    planner = Planner(small_stats(num, den), (0, 1, 2))
    strata = np.array([7, 7, 9, 9])
    plan = make_plan("stratified", 0.5, 3, planner, strata)
    assert plan.strategy == "stratified" and plan.stratum.tolist() == [7, 7, 9, 9]
    assert plan.inclusion.tolist() == [0.5] * 4
    own = make_plan("stratified", 0.5, 3, planner)
    assert own.stratum.tolist() == planner.strata().tolist() != strata.tolist()
    sizes = np.array([1.0, 2.0, 3.0, 4.0])
    plan = make_plan("irt", 0.5, 3, planner, sizes)
    assert plan.strategy == "irt"
    assert plan.inclusion == pytest.approx(2 * sizes / sizes.sum())
    again = make_plan("irt", 0.5, 3, planner, sizes)
    assert again.chosen.tolist() == plan.chosen.tolist()
    keys = np.random.default_rng([3, 2]).random(4) / sizes
    assert plan.chosen.tolist() == sorted(np.argsort(keys)[:2].tolist())
    with pytest.raises(ValueError, match=r"unknown strategy 'all'; expected one of \('random'"):
        make_plan("all", 0.5, 3, planner)
