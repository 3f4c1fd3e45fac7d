-- One row per question with its place in the prompt's DSG: root flag, depth (longest path from a
-- root) and weakly connected component. Recursive SQL suffices at DSG sizes (tens of questions).
-- Incremental by prompt (macro `benchmark_rows`; docs/warehouse.md, "Incremental builds").
{{ incremental_config(by='prompt') }}
with recursive

questions as (
    select * from {{ ref('stg_questions') }}
),

edges as (
    select * from {{ ref('int_question_edges') }}
),

ancestors as (
    select * from {{ ref('int_question_ancestors') }}
),

-- Integer keys for the reachability recursion: its working set (one row per question pair of a
-- component) held string keys at 3.7 GB at 10x paper scale; integers take a fraction of that.
question_keys as (
    select
        prompt_id,
        question_id,
        question_order,
        dense_rank() over (order by prompt_id) as prompt_key
    from questions
),

directed_edges as (
    select
        parents.prompt_key,
        parents.question_order as from_order,
        children.question_order as to_order
    from edges
    inner join question_keys as parents
        on
            edges.prompt_id = parents.prompt_id
            and edges.parent_question_id = parents.question_id
    inner join question_keys as children
        on
            edges.prompt_id = children.prompt_id
            and edges.child_question_id = children.question_id
),

undirected_edges as (
    select
        prompt_key,
        from_order,
        to_order
    from directed_edges
    union all
    select
        prompt_key,
        to_order,
        from_order
    from directed_edges
),

-- Every question reaches itself; components are the classes of this reachability relation.
reachable (prompt_key, question_order, reached_order) as (
    select
        prompt_key,
        question_order,
        question_order as reached_order
    from question_keys

    union

    select
        reachable.prompt_key,
        reachable.question_order,
        undirected_edges.to_order
    from reachable
    inner join undirected_edges
        on
            reachable.prompt_key = undirected_edges.prompt_key
            and reachable.reached_order = undirected_edges.from_order
),

-- A component is numbered by its first question in prompt order.
component_anchor as (
    select
        prompt_key,
        question_order,
        min(reached_order) as anchor_order
    from reachable
    group by prompt_key, question_order
),

component_index as (
    select
        question_keys.prompt_id,
        question_keys.question_id,
        dense_rank() over (
            partition by component_anchor.prompt_key order by component_anchor.anchor_order
        ) as component_index
    from component_anchor
    inner join question_keys
        on
            component_anchor.prompt_key = question_keys.prompt_key
            and component_anchor.question_order = question_keys.question_order
),

depth as (
    select
        prompt_id,
        question_id,
        max(longest_path_length) as depth
    from ancestors
    group by prompt_id, question_id
),

final as (
    select
        questions.prompt_id,
        questions.question_id,
        questions.question_order,
        questions.capability,
        questions.entity,
        questions.text_target,
        questions.capability_source,
        questions.compliant_answer,
        questions.rule_capability,
        questions.parent_question_ids,
        len(questions.parent_question_ids) = 0 as is_root,
        coalesce(depth.depth, 0) as depth,
        component_index.component_index,
        questions.prompt_id || '#' || component_index.component_index as component_id
    from questions
    left join depth
        on
            questions.prompt_id = depth.prompt_id
            and questions.question_id = depth.question_id
    inner join component_index
        on
            questions.prompt_id = component_index.prompt_id
            and questions.question_id = component_index.question_id
)

select * from final
where {{ benchmark_rows() }}
