-- Aggregation robustness (METHOD 5, Eq. 9, Table 3) per language x capability x scale: the
-- per-model figures are computed in int_aggregation_robustness (`method.aggregation_robustness`).
with

aggregation_robustness as (
    select * from {{ ref('int_aggregation_robustness') }}
),

final as (
    select
        language,
        capability,
        scale,
        variance_ratio,
        variance_increase_frac,
        n_prompts,
        short_error_question_points,
        short_error_prompt_points,
        short_error_increase_frac,
        n_models,
        n_subsamples
    from aggregation_robustness
)

select * from final
