-- Agreement of each judge with the human ratings (METHOD 15): the correlations and the concept
-- bootstrap run in int_human_agreement (`method.agreement`).
with

human_agreement as (
    select * from {{ ref('int_human_agreement') }}
),

final as (
    select
        judge_id,
        n_images,
        spearman,
        spearman_ci_lo,
        spearman_ci_hi,
        kendall,
        kendall_ci_lo,
        kendall_ci_hi,
        ranking_spearman,
        ranking_matches,
        n_models,
        n_concepts,
        n_draws,
        reason
    from human_agreement
)

select * from final
