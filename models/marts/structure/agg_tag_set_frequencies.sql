-- How often each full component tag set occurs, per language (the atlas behind Figure 4): number
-- of components and of prompts with it, and its frequency rank among the tag sets of the same
-- cardinality (ties broken by the tag set's name, so the rank is stable).
with

components as (
    select * from {{ ref('int_component_tags') }}
),

counted as (
    select
        language,
        tag_set,
        n_tags,
        count(*) as n_components,
        count(distinct prompt_id) as n_prompts
    from components
    group by language, tag_set, n_tags
),

final as (
    select
        *,
        row_number() over (
            partition by language, n_tags order by n_components desc, tag_set asc
        ) as frequency_rank
    from counted
)

select * from final
