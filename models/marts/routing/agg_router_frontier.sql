-- The cost-quality frontier of routing (METHOD 12, RouterBench-style), in points and GPU-s/MP;
-- computed by int_router_frontier.
with

frontier as (
    select * from {{ ref('int_router_frontier') }}
),

final as (
    select
        point_kind,
        router,
        eps,
        model_id,
        en,
        zh,
        bilingual,
        gpu_s_per_mp,
        on_frontier,
        frontier_quality,
        is_live_eps,
        aiq,
        aiq_fixed_only
    from frontier
)

select * from final
