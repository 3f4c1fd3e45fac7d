-- One row per question with its place in the prompt's DSG: root flag, depth (longest path from a
-- root) and weakly connected component. Recursive SQL suffices at DSG sizes (tens of questions).
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

undirected_edges as (
    select
        prompt_id,
        parent_question_id as from_question_id,
        child_question_id as to_question_id
    from edges
    union all
    select
        prompt_id,
        child_question_id,
        parent_question_id
    from edges
),

-- Every question reaches itself; components are the classes of this reachability relation.
reachable (prompt_id, question_id, reached_question_id) as (
    select
        prompt_id,
        question_id,
        question_id as reached_question_id
    from questions

    union

    select
        reachable.prompt_id,
        reachable.question_id,
        undirected_edges.to_question_id
    from reachable
    inner join undirected_edges
        on
            reachable.prompt_id = undirected_edges.prompt_id
            and reachable.reached_question_id = undirected_edges.from_question_id
),

component_anchor as (
    select
        reachable.prompt_id,
        reachable.question_id,
        min(questions.question_order) as anchor_order
    from reachable
    inner join questions
        on
            reachable.prompt_id = questions.prompt_id
            and reachable.reached_question_id = questions.question_id
    group by reachable.prompt_id, reachable.question_id
),

component_index as (
    select
        prompt_id,
        question_id,
        dense_rank() over (partition by prompt_id order by anchor_order) as component_index
    from component_anchor
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
