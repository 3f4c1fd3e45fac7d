-- Complete-component exactness C_m(G) (Eq. 5, METHOD 7) per model x prompt x DSG component, with
-- root survival R_m(G) (the same rule over the roots) and descendant completion (the rule over
-- the non-root questions, reported only where the roots survive).
-- Incremental by generator (macro `changed_generators`; docs/warehouse.md, "Incremental builds").
{{ incremental_config(by='generator') }}
with

components as (
    select * from {{ ref('int_component_tags') }}
),

graph as (
    select * from {{ ref('int_question_graph') }}
),

validity as (
    select * from {{ ref('int_question_validity') }}
    where {{ changed_generators() }}
),

scored as (
    select
        validity.model_id,
        graph.component_id,
        {{ component_exactness('validity.is_valid', 'validity.outcome') }} as exact,
        {{ component_exactness('validity.is_valid', 'validity.outcome', 'graph.is_root') }}
            as root_survival,
        {{ component_exactness('validity.is_valid', 'validity.outcome', 'not graph.is_root') }}
            as descendant_rule
    from validity
    inner join graph
        on
            validity.prompt_id = graph.prompt_id
            and validity.question_id = graph.question_id
    group by validity.model_id, graph.component_id
),

final as (
    select
        scored.model_id,
        components.language,
        components.concept_id,
        components.prompt_id,
        components.component_id,
        components.n_questions,
        components.n_roots,
        components.n_tags,
        components.n_tags_bucket,
        components.tag_set,
        scored.exact,
        scored.root_survival,
        case when scored.root_survival = 1 then scored.descendant_rule end
            as descendant_completion
    from scored
    inner join components on scored.component_id = components.component_id
)

select * from final
