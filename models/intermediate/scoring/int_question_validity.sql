-- Dependency masking (METHOD 2) of the official judge's judgments, one row per model x prompt x
-- question: validity and masked outcome by the rule of macro `question_validity` (its one home;
-- int_judge_question_validity applies it to every other judge).
-- Incremental by generator (macro `changed_generators`; docs/warehouse.md, "Incremental builds").
{{ incremental_config(by='generator') }}
with

changed_judgments as (
    select * from {{ ref('int_official_judgments') }}
    where {{ changed_generators() }}
),

validity as (
    {{ question_validity(
        ref('stg_questions'), 'changed_judgments', ref('int_question_ancestors'), ['model_id']
    ) }}
)

select * from validity
