-- Dependency masking (METHOD 2) for every judge: one row per judge x model x prompt x question.
-- The official judge's rows are int_question_validity's; every other judge's come from the same
-- rule (macro `question_validity`) over its own judgments, so a warehouse with one judge adds
-- nothing to compute. Feeds the zero-out image scores (METHOD 15) and the per-judge leaderboard.
-- A view: the official rows are not copied (the demo's million records would cost a second).
{{ config(materialized='view') }}

with

other_judgments as (
    select * from {{ ref('stg_judgments') }}
    where judge_id is distinct from '{{ var("official_judge") }}'
),

official as (
    select
        '{{ var("official_judge") }}' as judge_id,
        model_id,
        prompt_id,
        question_id,
        outcome,
        is_valid,
        outcome_masked
    from {{ ref('int_question_validity') }}
),

others as (
    {{ question_validity(
        ref('stg_questions'), 'other_judgments', ref('int_question_ancestors'),
        ['judge_id', 'model_id']
    ) }}
),

final as (
    select * from official
    union all by name
    select * from others
)

select * from final
