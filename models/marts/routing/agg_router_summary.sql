-- Routed quality and cost per router (METHOD 12, Table 4): HCQ per language of the router's
-- virtual generator, the fixed 50/50 bilingual mean, and the mean GPU-s/MP over requests, in
-- points. Routers: q_profile_q, q_profile_c, uniform_random (expectation over its draws),
-- oracle (upper bound) and fixed:<model_id> for every generator.
{% set bilingual = var('bilingual_languages') %}
-- The language columns follow the var; the contract lists the default ones (_routing.yml).
{{ config(contract={'enforced': var('enforce_generated_column_contracts', true)}) }}

with

points as (
    select * from {{ ref('int_router_points') }}
),

final as (
    select
        router,
        {% for language in bilingual %}
            100 * {{ language }}_frac as {{ language }},
        {% endfor %}
        100 * bilingual_frac as bilingual,
        gpu_s_per_mp,
        case
            when router like 'fixed:%' then 'fixed'
            when router = 'oracle' then 'bound'
            else 'router'
        end as router_kind,
        n_requests,
        n_draws,
        bilingual_frac
    from points
    where grid_eps is null
)

select * from final
