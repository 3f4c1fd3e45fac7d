-- One row per maximal weakly connected DSG component (METHOD 7): its size, roots and full tag
-- set. Components come from int_question_graph (one home for component ids).
with

graph as (
    select * from {{ ref('int_question_graph') }}
),

prompts as (
    select * from {{ ref('stg_prompts') }}
),

components as (
    select
        prompt_id,
        component_id,
        component_index,
        count(*) as n_questions,
        count(*) filter (where is_root) as n_roots,
        count(distinct capability) as n_tags,
        array_to_string(list_sort(list_distinct(list(capability))), '+') as tag_set,
        max(depth) as max_depth
    from graph
    group by prompt_id, component_id, component_index
),

final as (
    select
        components.prompt_id,
        prompts.concept_id,
        prompts.language,
        components.component_id,
        components.component_index,
        components.n_questions,
        components.n_roots,
        components.n_tags,
        -- Figure 2 (left) buckets: 1..6 distinct tags, then 7+.
        case
            when components.n_tags >= 7 then '7+' else cast(components.n_tags as varchar)
        end as n_tags_bucket,
        components.tag_set,
        components.max_depth
    from components
    inner join prompts on components.prompt_id = prompts.prompt_id
)

select * from final
