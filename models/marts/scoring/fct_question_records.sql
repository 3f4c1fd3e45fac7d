-- One record per model x prompt x question (the paper's Eq. 1 record r = (p, q, m, l, g, t, y, v)).
-- Incremental by generator (macro `changed_generators`; docs/warehouse.md, "Incremental builds").
{{ incremental_config(by='generator') }}
with

prompts as (
    select * from {{ ref('stg_prompts') }}
),

capabilities as (
    select * from {{ ref('capabilities') }}
),

graph as (
    select * from {{ ref('int_question_graph') }}
),

validity as (
    select * from {{ ref('int_question_validity') }}
    where {{ changed_generators() }}
),

final as (
    select
        validity.model_id,
        validity.prompt_id,
        validity.question_id,
        prompts.concept_id,
        prompts.language,
        prompts.source,
        graph.question_order,
        graph.capability,
        capabilities.group_key as capability_group,
        graph.is_root,
        graph.depth,
        graph.component_id,
        graph.entity,
        graph.text_target,
        graph.capability_source,
        graph.compliant_answer,
        graph.rule_capability,
        validity.outcome,
        validity.is_valid,
        validity.outcome_masked
    from validity
    inner join graph
        on
            validity.prompt_id = graph.prompt_id
            and validity.question_id = graph.question_id
    inner join prompts on validity.prompt_id = prompts.prompt_id
    inner join capabilities on graph.capability = capabilities.capability
)

select * from final
