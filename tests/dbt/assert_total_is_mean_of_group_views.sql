-- METHOD 4: each HCQ total equals the mean of its available group views (and `n_groups` counts
-- them); the bilingual total is the 50/50 mean of the per-language totals.
{% set group_keys = capability_group_keys(ref('capabilities')) %}
{% set bilingual = var('bilingual_languages') %}

with

leaderboard as (
    select * from {{ ref('fct_hcq_leaderboard') }}
),

group_means as (
    select
        model_id,
        language_scope,
        hcq_total,
        n_groups,
        (
            0
            {% for group_key in group_keys %}
                + coalesce({{ group_key }}, 0)
            {% endfor %}
        ) / nullif(n_groups, 0) as mean_of_views,
        0
        {% for group_key in group_keys %}
            + ({{ group_key }} is not null)::integer
        {% endfor %} as n_views
    from leaderboard
),

language_totals as (
    select
        model_id,
        avg(hcq_total) as mean_of_language_totals
    from leaderboard
    where language_scope in ('{{ bilingual | join("', '") }}')
    group by model_id
    having count(hcq_total) = 2
)

select
    group_means.model_id,
    group_means.language_scope
from group_means
left join language_totals on group_means.model_id = language_totals.model_id
where
    (
        group_means.language_scope != 'bilingual'
        and (
            group_means.n_views != group_means.n_groups
            or abs(group_means.hcq_total - group_means.mean_of_views) > 1e-9
        )
    )
    or (
        group_means.language_scope = 'bilingual'
        and abs(group_means.hcq_total - language_totals.mean_of_language_totals) > 1e-9
    )
