-- The effect of dependency masking (METHOD 6) per model x scope, in points: both totals and
-- ranks come from int_masking_effect (`method.bootstrap.masking_effect`), beside the missing
-- judgments that neither total counts (missing evidence, not a masking effect).
with

masking_effect as (
    select * from {{ ref('int_masking_effect') }}
),

final as (
    select
        model_id,
        language_scope,
        hcq_masked,
        hcq_unmasked,
        rank_masked,
        rank_unmasked,
        rank_shift,
        has_moved,
        spearman_rho,
        n_missing_judgments
    from masking_effect
)

select * from final
