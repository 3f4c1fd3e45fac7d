-- The generators routing leaves out (METHOD 12), one row each, with the reason: a router ranks
-- generators by cost, so one whose cost is unknown (images drawn elsewhere without latency or GPU
-- count, and no other figure: int_generators) cannot be routed, nor put on the cost axis. Its
-- quality marts are complete; only the routing marts go without it.
with

generators as (
    select * from {{ ref('int_generators') }}
),

final as (
    select
        model_id,
        display_name,
        cost_source,
        n_images,
        n_images_without_cost,
        router_exclusion as reason
    from generators
    where router_exclusion is not null
)

select * from final
