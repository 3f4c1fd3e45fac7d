-- The live router's whole input (METHOD 12, "for a NEW request"): every judged generator's
-- capability scores on the full data per language scope, with its cost. `qct2i route` reads only
-- this relation (and the live epsilon of agg_router_frontier), so routing a request stays fast.
with

capability_scores as (
    select * from {{ ref('int_capability_scores') }}
),

generators as (
    select * from {{ ref('int_generators') }}
),

final as (
    select
        capability_scores.model_id,
        capability_scores.language_scope,
        capability_scores.capability,
        capability_scores.capability_group,
        capability_scores.group_order,
        capability_scores.capability_order,
        capability_scores.score_source,
        capability_scores.n_valid,
        capability_scores.score,
        capability_scores.score_frac,
        generators.cost_gpu_s_per_mp,
        generators.cost_source,
        generators.cost_gpu_model
    from capability_scores
    inner join generators on capability_scores.model_id = generators.model_id
    -- a generator of unknown cost cannot be ranked by cost: fct_router_excluded_generators
    where generators.router_exclusion is null
)

select * from final
