-- Capability scores (Eq. 2 / Eq. 3) per model x language scope (`en`, `zh`, ..., `pooled`).
with

capability_scores as (
    select * from {{ ref('int_capability_scores') }}
),

final as (
    select
        model_id,
        language_scope,
        capability,
        capability_group,
        score_source,
        n_questions,
        n_valid,
        n_text_images,
        score,
        score_frac
    from capability_scores
)

select * from final
