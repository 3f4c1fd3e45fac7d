-- Cross-prompt root contexts (METHOD 8, Eq. 6) per model x language x prompt x entity key. Local
-- R = 1 when every root carrying the entity answered yes, 0 when all are judged and one said no,
-- undefined (NULL) when any has no judgment. The baseline is the mean R over the OTHER prompts of
-- the same model and language with a defined R (totals minus the prompt's own R), so a prompt
-- never enters its own baseline; eligible = a root with the entity has a child, R is defined and
-- at least 3 other prompts define R.
-- Incremental by generator (macro `changed_generators`; docs/warehouse.md, "Incremental builds").
{{ incremental_config(by='generator') }}
with

graph as (
    select * from {{ ref('int_question_graph') }}
),

edges as (
    select * from {{ ref('int_question_edges') }}
),

validity as (
    select * from {{ ref('int_question_validity') }}
    where {{ changed_generators() }}
),

prompts as (
    select * from {{ ref('stg_prompts') }}
),

parents as (
    select distinct
        prompt_id,
        parent_question_id as question_id
    from edges
),

entity_roots as (
    select
        graph.prompt_id,
        prompts.language,
        graph.entity,
        graph.question_id,
        parents.question_id is not null as has_descendant
    from graph
    inner join prompts on graph.prompt_id = prompts.prompt_id
    left join parents
        on
            graph.prompt_id = parents.prompt_id
            and graph.question_id = parents.question_id
    where graph.is_root and graph.entity is not null
),

contexts as (
    select
        validity.model_id,
        entity_roots.language,
        entity_roots.prompt_id,
        entity_roots.entity,
        count(*) as n_roots,
        bool_or(entity_roots.has_descendant) as has_descendant,
        case
            when count(validity.outcome) < count(*) then null
            when bool_and(validity.outcome = 1) then 1
            else 0
        end as local_survival
    from entity_roots
    inner join validity
        on
            entity_roots.prompt_id = validity.prompt_id
            and entity_roots.question_id = validity.question_id
    group by validity.model_id, entity_roots.language, entity_roots.prompt_id, entity_roots.entity
),

totals as (
    select
        model_id,
        language,
        entity,
        count(local_survival) as n_defined,
        sum(local_survival) as n_survived
    from contexts
    group by model_id, language, entity
),

leave_one_out as (
    select
        contexts.*,
        totals.n_defined - (contexts.local_survival is not null)::integer as n_other_prompts,
        case
            when contexts.local_survival is not null and totals.n_defined > 1
                then
                    (totals.n_survived - contexts.local_survival)::double
                    / (totals.n_defined - 1)
        end as baseline_survival
    from contexts
    inner join totals
        on
            contexts.model_id = totals.model_id
            and contexts.language = totals.language
            and contexts.entity = totals.entity
),

final as (
    select
        *,
        has_descendant
        and local_survival is not null
        and n_other_prompts >= 3 as is_eligible
    from leave_one_out
)

select * from final
