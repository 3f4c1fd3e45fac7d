"""Subset plans (METHOD 16): probability samples of concepts with known inclusion probabilities.

Unit of a plan: the concept (both languages of a concept are drawn together, as METHOD 11
resamples them), so a plan's evidence is a subset of `ConceptStats` rows. Every plan's inclusion
probabilities `pi_c > 0` never depend on the new generator's outcomes, which is what keeps the
estimators (`method.subsets.estimator`) design-based. Strategies decide the probabilities:

- `random`: simple random sampling of concepts (pi = n / C);
- `stratified`: strata = dominant reporting group (by HCQ-weighted expected valid questions)
  x difficulty tercile (the reference generators' mean success), proportional allocation,
  simple random sampling within strata;
- `irt`: probability proportional to size, size = the concept's expected contribution to the
  variance of the HCQ total under a fitted item-response model (`fit_items`, `irt_sizes`),
  so informative concepts (many valid questions of heavily weighted, uncertain capabilities)
  are drawn more often and down-weighted by 1 / pi. Drawn by sequential Poisson sampling
  (Ohlsson 1998): keys U_c / size_c, the n smallest; nested in n, so `adaptive` extends it.

The estimator names live here too: an `irt` plan's sizes are chosen for the estimator that will
read it.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from method.bootstrap import ConceptStats
from method.subsets.evidence import design_weights
from method.subsets.items import ItemModel, fit_items, irt_sizes, reference_abilities

STRATEGIES = ("random", "stratified", "irt")
# Estimators (`greg` is the default; `ht` the design-only baseline it is validated against).
ESTIMATORS = ("greg", "ht")
DEFAULT_ESTIMATOR = "greg"
DIFFICULTY_STRATA = 3


@dataclass(frozen=True)
class Plan:
    """Chosen concept indices, every concept's inclusion probability, and its design stratum."""

    strategy: str
    chosen: np.ndarray  # [n] int, concept indices
    inclusion: np.ndarray  # [C] pi_c
    stratum: np.ndarray  # [C] int (one stratum for unstratified designs)


def budget_size(n_concepts: int, budget_frac: float) -> int:
    if not 0.0 < budget_frac <= 1.0:
        raise ValueError(f"budget must be a fraction in (0, 1], not {budget_frac}")
    return max(2, min(n_concepts, round(budget_frac * n_concepts)))


def pps_probabilities(sizes: np.ndarray, n: int) -> np.ndarray:
    """pi_c = n size_c / sum(size), capped at 1 (capped concepts are taken with certainty and
    the rest re-scaled to the remaining sample size)."""
    sizes = np.asarray(sizes, float)
    certain = np.zeros(len(sizes), bool)
    while True:
        remaining = n - certain.sum()
        free = sizes * ~certain
        pi = np.where(certain, 1.0, remaining * free / free.sum())
        if not (pi[~certain] > 1.0).any():
            return np.minimum(pi, 1.0)
        certain |= pi > 1.0


def sequential_poisson(sizes: np.ndarray, n: int, rng: np.random.Generator) -> Plan:
    """Sequential Poisson sampling: the n concepts with the smallest U_c / size_c. Approximately
    pi-ps with pi = `pps_probabilities(sizes, n)` (exactly simple random sampling for equal
    sizes); the order does not depend on n, so a larger budget extends a smaller one."""
    sizes = np.asarray(sizes, float)
    floor = 1e-6 * sizes[sizes > 0].mean() if (sizes > 0).any() else 1.0
    sizes = np.maximum(sizes, floor)  # every concept can be drawn
    keys = rng.random(len(sizes)) / sizes
    chosen = np.sort(np.argsort(keys, kind="stable")[:n])
    return Plan("", chosen, pps_probabilities(sizes, n), np.zeros(len(sizes), int))


def difficulty_strata(numerator, denominator, stats: ConceptStats) -> np.ndarray:
    """Stratum [C] = dominant reporting group x difficulty tercile of each concept, from the
    references' evidence [C, K, L, T]: the group with the largest HCQ-weighted expected valid
    count, and the tercile of the references' pooled success rate on the concept."""
    den = np.asarray(denominator, float)
    mean_den = den.mean(axis=1)  # [C, L, T]
    available = den.sum(axis=(0, 1)) > 0
    weight = design_weights(available, stats)
    groups = list(dict.fromkeys(stats.capability_groups))
    group_of = np.array([groups.index(g) for g in stats.capability_groups])
    per_group = np.zeros((len(den), len(groups)))
    weighted = (mean_den * weight[None]).sum(axis=1)  # [C, T]
    for gi in range(len(groups)):
        per_group[:, gi] = weighted[:, group_of == gi].sum(axis=1)
    dominant = per_group.argmax(axis=1)
    num_total, den_total = numerator.sum(axis=(1, 2, 3)), den.sum(axis=(1, 2, 3))
    with np.errstate(invalid="ignore", divide="ignore"):
        success = np.where(den_total > 0, num_total / den_total, 0.5)
    edges = np.quantile(success, np.linspace(0, 1, DIFFICULTY_STRATA + 1)[1:-1])
    tercile = np.searchsorted(edges, success, side="right")
    return dominant * DIFFICULTY_STRATA + tercile


def stratified_sample(strata: np.ndarray, n: int, rng: np.random.Generator) -> Plan:
    """Proportional allocation (largest remainder) and simple random sampling in each stratum."""
    labels, counts = np.unique(strata, return_counts=True)
    quota = n * counts / counts.sum()
    take = np.floor(quota).astype(int)
    order = np.argsort(-(quota - take), kind="stable")
    take[order[: n - take.sum()]] += 1
    inclusion = np.zeros(len(strata))
    chosen = []
    for label, size, k in zip(labels, counts, take, strict=True):
        members = np.flatnonzero(strata == label)
        chosen.append(rng.choice(members, size=k, replace=False))
        inclusion[members] = k / size
    return Plan("", np.sort(np.concatenate(chosen)), inclusion, strata)


@dataclass(frozen=True)
class Planner:
    """What the strategies know: the reference generators' evidence (never the new one's).

    The references' arrays, item model and strata are computed once per planner and kept: the
    leave-one-generator-out validation asks each fold's planner for them once per strategy and
    estimator, and each was a copy of [C, K, L, T] (a quarter of a gigabyte at 10x paper scale)
    or a fit."""

    stats: ConceptStats
    references: tuple[int, ...]  # model indices of the fully evaluated generators

    @cached_property
    def numerator(self) -> np.ndarray:
        return self.stats.numerator[:, list(self.references)]

    @cached_property
    def denominator(self) -> np.ndarray:
        return self.stats.denominator[:, list(self.references)]

    def items(self) -> ItemModel:
        return self._items

    @cached_property
    def _items(self) -> ItemModel:
        num, den = self.numerator, self.denominator
        return fit_items(num, den, reference_abilities(num, den))

    def sizes(self, strategy: str, estimator: str = DEFAULT_ESTIMATOR) -> np.ndarray:
        """Sizes for the pps strategies (`random`: equal; `irt`: `irt_sizes` for `estimator`)."""
        if strategy == "random":
            return np.ones(len(self.stats.concept_ids))
        if strategy == "irt":
            return irt_sizes(self.numerator, self.denominator, self.stats, self.items(), estimator)
        raise ValueError(f"strategy {strategy!r} has no size measure; expected random or irt")

    def strata(self) -> np.ndarray:
        return self._strata

    @cached_property
    def _strata(self) -> np.ndarray:
        return difficulty_strata(self.numerator, self.denominator, self.stats)


def make_plan(
    strategy: str,
    budget_frac: float,
    seed: int,
    planner: Planner,
    design: np.ndarray | None = None,
) -> Plan:
    """The plan of `strategy` at `budget_frac` of the concepts. `design` (sizes for random / irt,
    strata for stratified) may be passed precomputed: it depends only on the references."""
    if strategy not in STRATEGIES:
        raise ValueError(f"unknown strategy {strategy!r}; expected one of {STRATEGIES}")
    n = budget_size(len(planner.stats.concept_ids), budget_frac)
    rng = np.random.default_rng([int(seed), STRATEGIES.index(strategy)])
    if strategy == "stratified":
        plan = stratified_sample(planner.strata() if design is None else design, n, rng)
    else:
        plan = sequential_poisson(planner.sizes(strategy) if design is None else design, n, rng)
    return Plan(strategy, plan.chosen, plan.inclusion, plan.stratum)
