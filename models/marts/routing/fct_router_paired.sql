-- Paired quality differences of every router against each reference generator (METHOD 12), in
-- points, with the concept-bootstrap 95% interval; computed by int_router_paired.
with

paired as (
    select * from {{ ref('int_router_paired') }}
),

final as (
    select
        router,
        reference_model_id,
        diff,
        ci_lo,
        ci_hi,
        cost_saving_frac,
        non_inferior,
        margin_points,
        n_draws
    from paired
)

select * from final
