-- The HCQ leaderboard of every judge (METHOD 4), one row per judge x model x scope with the
-- columns of fct_hcq_leaderboard. The official judge's rows (var `official_judge`) are
-- fct_hcq_leaderboard's, unchanged; every other judge's are scored from its own judgments by the
-- same formulas (int_hcq_leaderboard_by_judge, `method.leaderboard`). Group columns come from the
-- taxonomy seed at compile time, as in fct_hcq_leaderboard.
{{ config(contract={'enforced': var('enforce_generated_column_contracts', true)}) }}
{% set group_keys = capability_group_keys(ref('capabilities')) %}

with

official as (
    select * from {{ ref('fct_hcq_leaderboard') }}
),

other_judges as (
    select * from {{ ref('int_hcq_leaderboard_by_judge') }}
),

generators as (
    select * from {{ ref('int_generators') }}
),

all_judges as (
    select
        '{{ var("official_judge") }}' as judge_id,
        true as is_official,
        model_id,
        display_name,
        language_scope,
        hcq_total,
        {% for group_key in group_keys %}
            {{ group_key }},
        {% endfor %}
        rank,
        n_groups,
        n_capabilities,
        hcq_total_frac,
        text_evidence
    from official

    union all

    select
        other_judges.judge_id,
        false as is_official,
        other_judges.model_id,
        generators.display_name,
        other_judges.language_scope,
        other_judges.hcq_total,
        {% for group_key in group_keys %}
            other_judges.{{ group_key }},
        {% endfor %}
        other_judges.rank,
        other_judges.n_groups,
        other_judges.n_capabilities,
        other_judges.hcq_total_frac,
        other_judges.text_evidence
    from other_judges
    left join generators on other_judges.model_id = generators.model_id
)

select * from all_judges
