-- Transitive closure of the DSG: every (question, ancestor) pair of a prompt with the longest
-- path between them. The bundle validator refuses cycles, so the recursion terminates.
with recursive

edges as (
    select * from {{ ref('int_question_edges') }}
),

ancestry (prompt_id, question_id, ancestor_question_id, distance) as (
    select
        prompt_id,
        child_question_id,
        parent_question_id,
        1
    from edges

    union

    select
        ancestry.prompt_id,
        ancestry.question_id,
        edges.parent_question_id,
        ancestry.distance + 1
    from ancestry
    inner join edges
        on
            ancestry.prompt_id = edges.prompt_id
            and ancestry.ancestor_question_id = edges.child_question_id
),

final as (
    select
        prompt_id,
        question_id,
        ancestor_question_id,
        max(distance) as longest_path_length
    from ancestry
    group by prompt_id, question_id, ancestor_question_id
)

select * from final
