-- Paired differences per scope x ordered model pair (METHOD 11), in points: the intervals over
-- the concept-bootstrap draws come from int_pairwise_reliability.
with

pairwise_reliability as (
    select * from {{ ref('int_pairwise_reliability') }}
),

final as (
    select
        language_scope,
        model_a,
        model_b,
        diff,
        ci_lo,
        ci_hi,
        excludes_zero,
        n_draws
    from pairwise_reliability
)

select * from final
