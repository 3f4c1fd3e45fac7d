"""Prompt-bootstrap intervals for the structural diagnostics (METHOD 8-9), vectorised with numpy.

- `roots`: cross-prompt root controls (Eq. 6, METHOD 8) and `prompt_bootstrap`, the ratio-of-sums
  bootstrap behind their intervals (baselines held fixed, so the interval errs wide);
- `coupling`: marginal-controlled coupling (Eq. 7-8, METHOD 9), the per-prompt terms on native
  outcomes and the arrays (`coupling_inputs`) every coupling estimator reads;
- `coupling_draws`: the coupling bootstrap, whose every draw carries the noise of the
  leave-one-prompt-out marginals (recomputed exactly, or to first order).

Every public name is re-exported here, so `from method.structure import X` is the import path.
"""

from method.structure.coupling import (
    CONTEXTS,
    CONTRASTED_CONTEXTS,
    CONTRASTS,
    DISC,
    PAIR_COLUMNS,
    RECORD_COLUMNS,
    CouplingInputs,
    as_inputs,
    coupling_effects,
    coupling_inputs,
    coupling_prompt_effects,
    dense_codes,
)
from method.structure.coupling_draws import (
    COUPLING_INTERVALS_SCHEMA,
    COUPLING_METHODS,
    DEFAULT_EXACT_BUDGET,
    EFFECTS,
    MODEL_DRAWS_SCHEMA,
    CouplingCells,
    coupling_bootstrap,
    coupling_cells,
    coupling_draw_sums,
    coupling_influence,
    coupling_intervals,
    coupling_intervals_from_draws,
    coupling_model_draws,
    reusable_model_draws,
)
from method.structure.roots import (
    MACRO_MODEL,
    ROOT_CONTROLS_SCHEMA,
    finite_or_none,
    macro_mean,
    prompt_bootstrap,
    ratio_draws,
    root_controls,
)

__all__ = [
    "CONTEXTS",
    "CONTRASTED_CONTEXTS",
    "CONTRASTS",
    "COUPLING_INTERVALS_SCHEMA",
    "COUPLING_METHODS",
    "DEFAULT_EXACT_BUDGET",
    "DISC",
    "EFFECTS",
    "MACRO_MODEL",
    "MODEL_DRAWS_SCHEMA",
    "PAIR_COLUMNS",
    "RECORD_COLUMNS",
    "ROOT_CONTROLS_SCHEMA",
    "CouplingCells",
    "CouplingInputs",
    "as_inputs",
    "coupling_bootstrap",
    "coupling_cells",
    "coupling_draw_sums",
    "coupling_effects",
    "coupling_influence",
    "coupling_inputs",
    "coupling_intervals",
    "coupling_intervals_from_draws",
    "coupling_model_draws",
    "coupling_prompt_effects",
    "dense_codes",
    "finite_or_none",
    "macro_mean",
    "prompt_bootstrap",
    "ratio_draws",
    "reusable_model_draws",
    "root_controls",
]
