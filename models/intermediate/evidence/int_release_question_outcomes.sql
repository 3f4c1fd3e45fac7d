-- Every judge's outcomes on the release-sourced questions (issue 32), one row per judge x model
-- x prompt x question of each release the judge answered about for that model: the outcome as
-- stored (target-yes, 1 = complies; NULL = no usable answer or no judgment at all: missing,
-- never a "no") and OneIG-Bench's zero-out outcome (`scripts/alignment/alignment_score.py`): 0
-- where a direct parent's own answer is "no", else the outcome. Unlike METHOD 2 it does not
-- recurse (a grandchild under a zeroed child whose own answer was yes keeps its yes) and a
-- zeroed question stays a question; a parent with no answer is not a "no" and zeroes nothing.
with

scopes as (
    select * from {{ ref('int_release_prompt_scopes') }}
),

questions as (
    select * from {{ ref('stg_questions') }}
),

judgments as (
    select * from {{ ref('stg_judgments') }}
),

edges as (
    select * from {{ ref('int_question_edges') }}
),

release_prompts as (
    select distinct
        prompt_id,
        release
    from scopes
),

-- A (judge, model) pair answered about a release when it has any judgment on its prompts; each
-- question of that release it has no answer to is then a missing record, not an absent one.
judged_slices as (
    select distinct
        judgments.judge_id,
        judgments.model_id,
        release_prompts.release
    from judgments
    inner join release_prompts on judgments.prompt_id = release_prompts.prompt_id
),

records as (
    select
        judged_slices.judge_id,
        judged_slices.model_id,
        judged_slices.release,
        questions.prompt_id,
        questions.question_id,
        judgments.outcome
    from judged_slices
    inner join release_prompts on judged_slices.release = release_prompts.release
    inner join questions on release_prompts.prompt_id = questions.prompt_id
    left join judgments
        on
            judged_slices.judge_id = judgments.judge_id
            and judged_slices.model_id = judgments.model_id
            and questions.prompt_id = judgments.prompt_id
            and questions.question_id = judgments.question_id
),

children_of_a_no as (
    select distinct
        records.judge_id,
        records.model_id,
        edges.prompt_id,
        edges.child_question_id as question_id
    from edges
    inner join records
        on
            edges.prompt_id = records.prompt_id
            and edges.parent_question_id = records.question_id
    where records.outcome = 0
),

final as (
    select
        records.judge_id,
        records.model_id,
        records.release,
        records.prompt_id,
        records.question_id,
        records.outcome,
        case
            when records.outcome is null then null
            when children_of_a_no.question_id is not null then 0
            else records.outcome
        end as zero_out_outcome
    from records
    left join children_of_a_no
        on
            records.judge_id = children_of_a_no.judge_id
            and records.model_id = children_of_a_no.model_id
            and records.prompt_id = children_of_a_no.prompt_id
            and records.question_id = children_of_a_no.question_id
)

select * from final
