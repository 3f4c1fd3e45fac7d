-- The DSG atlas (METHOD 7) per language: prompts, components, components with 2+ tags and the
-- prompts (and concepts) that have at least one. Model-independent: it describes the benchmark.
with

components as (
    select * from {{ ref('int_component_tags') }}
),

prompts as (
    select * from {{ ref('stg_prompts') }}
),

per_prompt as (
    select
        prompt_id,
        count(*) as n_components,
        count(*) filter (where n_tags >= 2) as n_multi_tag_components,
        sum(n_questions) as n_questions
    from components
    group by prompt_id
),

final as (
    select
        prompts.language,
        count(*) as n_prompts,
        count(distinct prompts.concept_id) as n_concepts,
        coalesce(sum(per_prompt.n_questions), 0) as n_questions,
        coalesce(sum(per_prompt.n_components), 0) as n_components,
        coalesce(sum(per_prompt.n_multi_tag_components), 0) as n_multi_tag_components,
        count(*) filter (where per_prompt.n_multi_tag_components > 0)
            as n_prompts_with_multi_tag_component,
        count(distinct prompts.concept_id) filter (where per_prompt.n_multi_tag_components > 0)
            as n_concepts_with_multi_tag_component,
        avg(coalesce(per_prompt.n_components, 0)) as mean_components_per_prompt
    from prompts
    left join per_prompt on prompts.prompt_id = per_prompt.prompt_id
    group by prompts.language
)

select * from final
