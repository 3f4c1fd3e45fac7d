-- Out-of-fold routing decisions, one row per router x request (METHOD 12): which generator each
-- router sends the request to, its predicted quality and its cost. The uniform random router's
-- draws are in int_router_uniform_draws (one request has a hundred decisions there).
with

decisions as (
    select * from {{ ref('int_router_decisions') }}
),

requests as (
    select * from {{ ref('int_router_requests') }}
),

generators as (
    select * from {{ ref('int_generators') }}
),

final as (
    select
        decisions.router,
        decisions.prompt_id,
        requests.concept_id,
        requests.language,
        requests.fold,
        decisions.model_id,
        100 * decisions.predicted_quality_frac as predicted_quality,
        decisions.predicted_quality_frac,
        decisions.eps,
        generators.cost_gpu_s_per_mp
    from decisions
    inner join requests on decisions.prompt_id = requests.prompt_id
    inner join generators on decisions.model_id = generators.model_id
    where decisions.grid_eps is null
)

select * from final
