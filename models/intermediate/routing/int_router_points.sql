-- One cost-quality point per router (and per grid epsilon of Q-Profile-C): quality per language
-- and the 50/50 bilingual mean (METHOD 4, 12), and the mean GPU-s/MP over requests. The uniform
-- random router's figures are expectations: means over its draws, added in draw order (a float
-- sum's last bits depend on the order of its terms; docs/importing.md, "Deterministic builds").
{% set bilingual = var('bilingual_languages') %}

with

routed_scores as (
    select * from {{ ref('int_router_routed_scores') }}
),

per_draw as (
    select
        router,
        grid_eps,
        draw,
        any_value(gpu_s_per_mp) as gpu_s_per_mp,
        any_value(n_requests) as n_requests,
        {% for language in bilingual %}
            max(case when language = '{{ language }}' then hcq_total_frac end)
                as {{ language }}_frac,
        {% endfor %}
    from routed_scores
    group by router, grid_eps, draw
),

final as (
    select
        router,
        grid_eps,
        count(*) as n_draws,
        max(n_requests) as n_requests,
        {% for language in bilingual %}
            avg({{ language }}_frac order by draw) as {{ language }}_frac,
        {% endfor %}
        -- fixed 50/50 mean, defined only where both languages have a figure
        avg({{ bilingual_mean(bilingual[0] ~ '_frac', bilingual[1] ~ '_frac') }} order by draw)
            as bilingual_frac,
        avg(gpu_s_per_mp order by draw) as gpu_s_per_mp
    from per_draw
    group by router, grid_eps
)

select * from final
