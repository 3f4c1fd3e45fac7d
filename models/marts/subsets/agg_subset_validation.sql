-- Leave-one-generator-out validation of subset plans per strategy x budget (METHOD 16): the
-- plans and estimates run in int_subset_validation (`method.subsets.subset_validation`).
with

validation as (
    select * from {{ ref('int_subset_validation') }}
),

final as (
    select
        strategy,
        budget_frac,
        mae_points,
        coverage_frac,
        spearman,
        kendall,
        n_cases,
        estimator,
        language_scope
    from validation
)

select * from final
