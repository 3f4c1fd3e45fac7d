-- Cross-prompt root controls (Eq. 6, METHOD 8, Figure 2 right) per model x language, in points:
-- the prompt bootstrap runs in int_root_controls (`method.structure.root_controls`).
with

root_controls as (
    select * from {{ ref('int_root_controls') }}
),

final as (
    select
        model_id,
        language,
        n_contexts,
        n_prompts,
        local_survival,
        baseline_survival,
        diff,
        ci_lo,
        ci_hi,
        n_draws
    from root_controls
)

select * from final
