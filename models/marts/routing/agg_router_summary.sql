-- Routed quality and cost per router (METHOD 12, Table 4): HCQ per language of the router's
-- virtual generator, the fixed 50/50 bilingual mean, and the mean GPU-s/MP over requests, in
-- points. Routers: q_profile_q, q_profile_c, uniform_random (expectation over its draws),
-- oracle (upper bound) and fixed:<model_id> for every generator. `cost_gpu_models` names the
-- GPUs the routed generators' measured costs come from (`qct2i calibrate`); `mixed_cost_gpus`
-- says when there is more than one, so GPU-s/MP from an A100 and an H200 never mix unseen.
{% set bilingual = var('bilingual_languages') %}
-- The language columns follow the var; the contract lists the default ones (_routing.yml).
{{ config(contract={'enforced': var('enforce_generated_column_contracts', true)}) }}

with

points as (
    select * from {{ ref('int_router_points') }}
),

generators as (
    select * from {{ ref('int_generators') }}
),

routed_generators as (
    select distinct model_id from {{ ref('int_capability_scores') }}
),

cost_gpus as (
    select
        string_agg(
            distinct generators.cost_gpu_model, ', ' order by generators.cost_gpu_model
        ) as cost_gpu_models,
        count(distinct generators.cost_gpu_model) > 1 as mixed_cost_gpus
    from generators
    inner join routed_generators on generators.model_id = routed_generators.model_id
    where generators.router_exclusion is null
),

final as (
    select
        points.router,
        {% for language in bilingual %}
            100 * points.{{ language }}_frac as {{ language }},
        {% endfor %}
        100 * points.bilingual_frac as bilingual,
        points.gpu_s_per_mp,
        case
            when points.router like 'fixed:%' then 'fixed'
            when points.router = 'oracle' then 'bound'
            else 'router'
        end as router_kind,
        points.n_requests,
        points.n_draws,
        points.bilingual_frac,
        cost_gpus.cost_gpu_models,
        cost_gpus.mixed_cost_gpus
    from points
    cross join cost_gpus
    where points.grid_eps is null
)

select * from final
