-- The 2x2 tables of judge agreement (METHOD 14): per unordered judge pair (judge_a < judge_b) x
-- concept x capability, the counts of items (model, prompt, question) both judges answered, by
-- answer. Per concept, because the interval resamples concepts; int_judge_agreement sums them.
-- A warehouse with one judge has no pair: the self-join is skipped, not run and filtered.
with

all_judgments as (
    select * from {{ ref('stg_judgments') }}
),

judge_count as (
    select count(distinct judge_id) as n_judges from all_judgments
),

judgments as (
    select all_judgments.*
    from all_judgments
    cross join judge_count
    where all_judgments.outcome is not null and judge_count.n_judges > 1
),

questions as (
    select * from {{ ref('stg_questions') }}
),

prompts as (
    select * from {{ ref('stg_prompts') }}
),

shared_items as (
    select
        judge_a.judge_id as judge_a,
        judge_b.judge_id as judge_b,
        judge_a.prompt_id,
        judge_a.question_id,
        judge_a.outcome as outcome_a,
        judge_b.outcome as outcome_b
    from judgments as judge_a
    inner join judgments as judge_b
        on
            judge_a.model_id = judge_b.model_id
            and judge_a.prompt_id = judge_b.prompt_id
            and judge_a.question_id = judge_b.question_id
            and judge_a.judge_id < judge_b.judge_id
),

final as (
    select
        shared.judge_a,
        shared.judge_b,
        prompts.concept_id,
        questions.capability,
        count(*) filter (where shared.outcome_a = 1 and shared.outcome_b = 1) as both_yes,
        count(*) filter (where shared.outcome_a = 1 and shared.outcome_b = 0) as a_only,
        count(*) filter (where shared.outcome_a = 0 and shared.outcome_b = 1) as b_only,
        count(*) filter (where shared.outcome_a = 0 and shared.outcome_b = 0) as both_no
    from shared_items as shared
    inner join questions
        on
            shared.prompt_id = questions.prompt_id
            and shared.question_id = questions.question_id
    inner join prompts on shared.prompt_id = prompts.prompt_id
    group by shared.judge_a, shared.judge_b, prompts.concept_id, questions.capability
)

select * from final
