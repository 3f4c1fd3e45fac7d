-- Full-benchmark HCQ estimates of generators evaluated on a subset of prompts (METHOD 16), per
-- generator x scope: the plan-weighted estimator runs in int_subset_estimates
-- (`method.subsets.subset_estimates`).
with

estimates as (
    select * from {{ ref('int_subset_estimates') }}
),

final as (
    select
        model_id,
        language_scope,
        n_prompts,
        hcq_total,
        ci_lo,
        ci_hi,
        rank,
        rank_lo,
        rank_hi,
        strategy,
        estimator
    from estimates
)

select * from final
