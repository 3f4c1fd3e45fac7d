-- HCQ (Eq. 4) in long form: one row per model x language scope x reporting group with evidence,
-- carrying the scope's total. Pivoted for people in `fct_hcq_leaderboard`.
with

capability_scores as (
    select
        model_id,
        language_scope,
        capability_group as group_key,
        capability,
        score_frac
    from {{ ref('int_capability_scores') }}
),

group_views as (
    {{ hcq('capability_scores', ['model_id', 'language_scope']) }}
)

select * from group_views
