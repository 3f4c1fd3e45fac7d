"""Cost-aware routing (METHOD 12, the paper's Table 4): the Q-Profile predictor and its evaluation.

A request is one prompt in one language with its questions. Q-Profile predicts generator m's
quality on request r as HCQ (Eq. 4) over m's reference-fold capability scores in r's language,
restricted to the capabilities r's questions carry: mean over the active capabilities within each
reporting group, then over the groups present; a capability without a reference score drops out.
No learned parameters. Q-Profile-Q takes the best prediction, Q-Profile-C the cheapest generator
within `eps` of it; ties go to the cheaper generator, then to the model id that sorts first.

The dbt Python models of `models/intermediate/routing` call one table function each on
request-level sufficient statistics (`Evidence`); `qct2i route` calls `route_requests`, which
reads only the small `marts.fct_router_profiles` (and the live epsilon from
`marts.agg_router_frontier`), so it never imports dbt or Dagster. The modules:

- `predict`: the restricted HCQ (`hcq_frac`, calling `method.hcq`, the numpy form of
  `macros/hcq.sql`), Q-Profile's prediction and the choice rule;
- `evidence`: `Evidence`, the out-of-fold predictions and the nested epsilon search;
- `decisions`: int_router_epsilon, int_router_decisions and int_router_uniform_draws;
- `paired`: fct_router_paired, the paired concept bootstrap against reference generators;
- `frontier`: agg_router_frontier, the cost-quality frontier and AIQ;
- `live`: `route_requests`, ranking new requests (`qct2i route`).

The SQL marts score the routed virtual generators with the HCQ macro itself. Every public name
is re-exported here, so `from method.routing import X` is the import path.
"""

from method.routing.decisions import (
    EPSILON_SCHEMA,
    decisions_table,
    epsilon_table,
    selected_eps,
    uniform_draws_table,
)
from method.routing.evidence import (
    EPS_GRID,
    EVIDENCE_COLUMNS,
    N_FOLDS,
    UNIFORM_DRAWS,
    EpsilonSearch,
    Evidence,
    language_mean,
    out_of_fold_predictions,
    select_epsilon,
    selection_quality,
    uniform_draws,
)
from method.routing.frontier import (
    FRONTIER_SCHEMA,
    area_under_frontier,
    frontier_table,
    frontier_value,
    upper_frontier,
)
from method.routing.live import Ranked, RouteResult, route_requests
from method.routing.paired import (
    PAIRED_SCHEMA,
    PAIRED_TAILS,
    bilingual_from_sums,
    bootstrap_bilingual,
    choices_by_group,
    cost_saving,
    default_references,
    multinomial_concept_weights,
    paired_differences,
    paired_table,
    routed_concept_sums,
)
from method.routing.predict import TIE_TOLERANCE, choose, cost_ranks, hcq_frac, predict_quality

__all__ = [
    "EPSILON_SCHEMA",
    "EPS_GRID",
    "EVIDENCE_COLUMNS",
    "FRONTIER_SCHEMA",
    "N_FOLDS",
    "PAIRED_SCHEMA",
    "PAIRED_TAILS",
    "TIE_TOLERANCE",
    "UNIFORM_DRAWS",
    "EpsilonSearch",
    "Evidence",
    "Ranked",
    "RouteResult",
    "area_under_frontier",
    "bilingual_from_sums",
    "bootstrap_bilingual",
    "choices_by_group",
    "choose",
    "cost_ranks",
    "cost_saving",
    "decisions_table",
    "default_references",
    "epsilon_table",
    "frontier_table",
    "frontier_value",
    "hcq_frac",
    "language_mean",
    "multinomial_concept_weights",
    "out_of_fold_predictions",
    "paired_differences",
    "paired_table",
    "predict_quality",
    "route_requests",
    "routed_concept_sums",
    "select_epsilon",
    "selected_eps",
    "selection_quality",
    "uniform_draws",
    "uniform_draws_table",
    "upper_frontier",
]
