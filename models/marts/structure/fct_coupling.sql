with

intervals as (
    select * from {{ ref('int_coupling_intervals') }}
    where effect_kind = 'context'
),

final as (
    select
        language,
        model_id,
        effect as context,
        estimate * 100.0 as delta,
        ci_lo * 100.0 as ci_lo,
        ci_hi * 100.0 as ci_hi,
        n_prompts,
        n_draws,
        bootstrap_method
    from intervals
)

select * from final
