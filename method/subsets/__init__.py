"""Estimating a generator from a subset of prompts (METHOD 16): plans, the estimator, validation.

Unit of a plan: the concept (both languages of a concept are drawn together, as METHOD 11
resamples them). The evidence is `method.bootstrap.ConceptStats`, numerator / denominator per
concept x model x language x capability, so a plan's evidence is a subset of rows.

The design is written down beside the code because METHOD 16 leaves the choice open; the
modules follow the method's order, each importing only the ones before it:

- `evidence`: Eq. 4's weights per scope, the logit scale, full-benchmark scores;
- `items`: the 2PL item model (`fit_items`) and the `irt` plans' sizes (`irt_sizes`);
- `plans`: the strategies (`random`, `stratified`, `irt`) and their inclusion probabilities;
- `estimator`: the `greg` (default) and `ht` estimators with their 95% intervals;
- `validation`: leave-one-generator-out validation of every strategy x estimator x budget;
- `tables`: fct_subset_estimates and agg_subset_validation from the dbt models' Arrow tables.

Every public name is re-exported here, so `from method.subsets import X` is the import path.
"""

from method.subsets.estimator import (
    ABILITY_PRIOR_MIN_SD,
    Z95,
    Predictor,
    SubsetEstimate,
    estimate,
    greg_estimate,
    hajek_variance,
    rank_against,
    subset_estimate,
)
from method.subsets.evidence import design_weights, full_scores, logit, scope_weights, sigmoid
from method.subsets.items import (
    INTERCEPT_PRIOR_SD,
    SLOPE_PRIOR_SD,
    ItemModel,
    fit_items,
    irt_sizes,
    overdispersion,
    reference_abilities,
)
from method.subsets.plans import (
    DEFAULT_ESTIMATOR,
    DIFFICULTY_STRATA,
    ESTIMATORS,
    STRATEGIES,
    Plan,
    Planner,
    budget_size,
    difficulty_strata,
    make_plan,
    pps_probabilities,
    sequential_poisson,
    stratified_sample,
)
from method.subsets.tables import (
    SUBSET_ESTIMATES_SCHEMA,
    SUBSET_VALIDATION_SCHEMA,
    coverage,
    fully_evaluated,
    planned_inclusion,
    restrict_models,
    subset_estimates,
    subset_validation,
    validation_scope,
)
from method.subsets.validation import (
    VALIDATION_BUDGETS,
    ValidationCase,
    strategy_label,
    summarise_validation,
    validation_cases,
)

__all__ = [
    "ABILITY_PRIOR_MIN_SD",
    "DEFAULT_ESTIMATOR",
    "DIFFICULTY_STRATA",
    "ESTIMATORS",
    "INTERCEPT_PRIOR_SD",
    "SLOPE_PRIOR_SD",
    "STRATEGIES",
    "SUBSET_ESTIMATES_SCHEMA",
    "SUBSET_VALIDATION_SCHEMA",
    "VALIDATION_BUDGETS",
    "Z95",
    "ItemModel",
    "Plan",
    "Planner",
    "Predictor",
    "SubsetEstimate",
    "ValidationCase",
    "budget_size",
    "coverage",
    "design_weights",
    "difficulty_strata",
    "estimate",
    "fit_items",
    "full_scores",
    "fully_evaluated",
    "greg_estimate",
    "hajek_variance",
    "irt_sizes",
    "logit",
    "make_plan",
    "overdispersion",
    "planned_inclusion",
    "pps_probabilities",
    "rank_against",
    "reference_abilities",
    "restrict_models",
    "scope_weights",
    "sequential_poisson",
    "sigmoid",
    "strategy_label",
    "stratified_sample",
    "subset_estimate",
    "subset_estimates",
    "subset_validation",
    "summarise_validation",
    "validation_cases",
    "validation_scope",
]
