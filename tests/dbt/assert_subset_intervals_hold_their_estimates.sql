-- METHOD 16: every subset estimate lies inside its 95% interval and its rank inside its rank
-- interval; validation shares are fractions. Returns the offending rows.
select
    model_id as what,
    language_scope as scope
from {{ ref('fct_subset_estimates') }}
where
    not (ci_lo <= hcq_total and hcq_total <= ci_hi)
    or not (rank_lo <= rank and rank <= rank_hi)
union all
select
    strategy as what,
    budget_frac::varchar as scope
from {{ ref('agg_subset_validation') }}
where
    coverage_frac not between 0 and 1
    or mae_points < 0
    or budget_frac not between 0 and 1
