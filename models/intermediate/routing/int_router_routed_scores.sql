-- Routed quality (METHOD 12): each router's decisions define a virtual generator whose records for
-- request r are the chosen generator's records for r; it is scored like any generator, with the
-- `hcq` macro (Eq. 4) per language. One row per router x grid epsilon x draw x language; `draw`
-- is set for the uniform random router only, `grid_eps` for the frontier's Q-Profile-C points.
with

decisions as (
    select
        router,
        grid_eps,
        null::bigint as draw,
        prompt_id,
        model_id
    from {{ ref('int_router_decisions') }}
    union all
    select
        'uniform_random' as router,
        null::double as grid_eps,
        draw,
        prompt_id,
        model_id
    from {{ ref('int_router_uniform_draws') }}
),

evidence as (
    select * from {{ ref('int_router_request_evidence') }}
),

generators as (
    select * from {{ ref('int_generators') }}
),

routed_sums as (
    select
        decisions.router,
        decisions.grid_eps,
        decisions.draw,
        evidence.language,
        evidence.capability,
        any_value(evidence.group_key) as group_key,
        sum(evidence.score_num) as score_num,
        sum(evidence.score_den) as score_den
    from decisions
    inner join evidence
        on
            decisions.prompt_id = evidence.prompt_id
            and decisions.model_id = evidence.model_id
    group by
        decisions.router, decisions.grid_eps, decisions.draw, evidence.language, evidence.capability
),

routed_scores as (
    select
        router,
        grid_eps,
        draw,
        language,
        group_key,
        capability,
        -- Eq. 2 / Eq. 3 from the sums; Eq. 3 as (L - D) / L, the router's rounding
        {{ capability_score('score_num', 'score_den') }} as score_frac
    from routed_sums
),

group_views as (
    {{ hcq('routed_scores', ['router', 'grid_eps', 'draw', 'language']) }}
),

totals as (
    select distinct
        router,
        grid_eps,
        draw,
        language,
        hcq_total_frac,
        n_groups,
        n_capabilities_total
    from group_views
),

requests_per_generator as (
    select
        router,
        grid_eps,
        draw,
        model_id,
        count(*) as n_requests
    from decisions
    group by router, grid_eps, draw, model_id
),

-- the mean cost over the requests whose generator has one, as each generator's cost times its
-- share of those requests, added in generator order: a float sum's last bits depend on the
-- order of its terms, which a join's output does not fix (docs/importing.md, "Deterministic
-- builds")
costs as (
    select
        requests_per_generator.router,
        requests_per_generator.grid_eps,
        requests_per_generator.draw,
        sum(
            requests_per_generator.n_requests * generators.cost_gpu_s_per_mp
            order by requests_per_generator.model_id
        ) / sum(requests_per_generator.n_requests) filter (
            where generators.cost_gpu_s_per_mp is not null
        ) as gpu_s_per_mp,
        sum(requests_per_generator.n_requests)::bigint as n_requests
    from requests_per_generator
    inner join generators on requests_per_generator.model_id = generators.model_id
    group by
        requests_per_generator.router, requests_per_generator.grid_eps, requests_per_generator.draw
),

final as (
    select
        totals.router,
        totals.grid_eps,
        totals.draw,
        totals.language,
        totals.hcq_total_frac,
        totals.n_groups,
        totals.n_capabilities_total,
        costs.gpu_s_per_mp,
        costs.n_requests
    from totals
    inner join costs
        on
            totals.router = costs.router
            and totals.grid_eps is not distinct from costs.grid_eps
            and totals.draw is not distinct from costs.draw
)

select * from final
