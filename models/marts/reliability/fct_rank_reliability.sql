-- Rank reliability per model x scope (METHOD 11): the concept-bootstrap summaries run in
-- int_rank_reliability (`method.bootstrap.rank_reliability`).
with

rank_reliability as (
    select * from {{ ref('int_rank_reliability') }}
),

final as (
    select
        model_id,
        language_scope,
        hcq_total,
        hcq_total_frac,
        rank,
        top1_prob,
        rank_lo,
        rank_hi,
        n_draws
    from rank_reliability
)

select * from final
