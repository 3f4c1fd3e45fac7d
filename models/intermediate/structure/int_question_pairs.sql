-- The question pairs of METHOD 9 within each prompt, in three contexts, with their stratum:
-- `edge` (a direct DSG edge, parent first), `nonanc` (same component, neither an ancestor of the
-- other, question order) and `disc` (different components, question order). A pair whose
-- endpoints are related by a longer ancestor path belongs to no context.
-- Incremental by prompt (macro `benchmark_rows`; docs/warehouse.md, "Incremental builds").
{{ incremental_config(by='prompt') }}
with

graph as (
    select * from {{ ref('int_question_graph') }}
),

edges as (
    select * from {{ ref('int_question_edges') }}
),

ancestors as (
    select * from {{ ref('int_question_ancestors') }}
),

prompts as (
    select * from {{ ref('stg_prompts') }}
),

-- Ancestry in both directions, so that an unordered pair is looked up once.
related as (
    select
        prompt_id,
        question_id as question_id_a,
        ancestor_question_id as question_id_b
    from ancestors
    union all
    select
        prompt_id,
        ancestor_question_id,
        question_id
    from ancestors
),

ordered_pairs as (
    select
        first_q.prompt_id,
        first_q.question_id as question_id_1,
        second_q.question_id as question_id_2,
        first_q.component_id = second_q.component_id as is_same_component
    from graph as first_q
    inner join graph as second_q
        on
            first_q.prompt_id = second_q.prompt_id
            and first_q.question_order < second_q.question_order
),

unrelated_pairs as (
    select
        ordered_pairs.prompt_id,
        ordered_pairs.question_id_1,
        ordered_pairs.question_id_2,
        case when ordered_pairs.is_same_component then 'nonanc' else 'disc' end as context
    from ordered_pairs
    left join related
        on
            ordered_pairs.prompt_id = related.prompt_id
            and ordered_pairs.question_id_1 = related.question_id_a
            and ordered_pairs.question_id_2 = related.question_id_b
    where related.prompt_id is null
),

all_pairs as (
    select
        prompt_id,
        parent_question_id as question_id_1,
        child_question_id as question_id_2,
        'edge' as context
    from edges
    union all
    select
        prompt_id,
        question_id_1,
        question_id_2,
        context
    from unrelated_pairs
),

final as (
    select
        all_pairs.prompt_id,
        prompts.language,
        all_pairs.context,
        all_pairs.question_id_1,
        all_pairs.question_id_2,
        endpoint_1.capability as capability_1,
        endpoint_2.capability as capability_2,
        case when endpoint_1.is_root then 'root' else 'descendant' end as role_1,
        case when endpoint_2.is_root then 'root' else 'descendant' end as role_2,
        endpoint_1.depth as depth_1,
        endpoint_2.depth as depth_2,
        concat_ws(
            '|',
            endpoint_1.capability,
            endpoint_2.capability,
            case when endpoint_1.is_root then 'root' else 'descendant' end,
            case when endpoint_2.is_root then 'root' else 'descendant' end,
            endpoint_1.depth,
            endpoint_2.depth
        ) as stratum_key
    from all_pairs
    inner join prompts on all_pairs.prompt_id = prompts.prompt_id
    inner join graph as endpoint_1
        on
            all_pairs.prompt_id = endpoint_1.prompt_id
            and all_pairs.question_id_1 = endpoint_1.question_id
    inner join graph as endpoint_2
        on
            all_pairs.prompt_id = endpoint_2.prompt_id
            and all_pairs.question_id_2 = endpoint_2.question_id
)

select * from final
where {{ benchmark_rows() }}
