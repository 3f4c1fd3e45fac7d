-- The DSG edges `parent -> child` of every prompt, one row per edge.
with

questions as (
    select * from {{ ref('stg_questions') }}
),

edges as (
    select
        prompt_id,
        unnest(parent_question_ids) as parent_question_id,
        question_id as child_question_id
    from questions
)

select * from edges
