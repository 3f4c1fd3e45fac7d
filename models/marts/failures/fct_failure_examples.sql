-- A few failed questions per generator x capability (issue 24): valid questions (every
-- prerequisite answered yes, METHOD 2) that the official judge answered "no", with the prompt,
-- the question, every judge's answer and the image path when the warehouse has images. The
-- questions most judges answered "no" come first (the failures the judges agree on), then by
-- prompt and question id; at most `failure_examples_per_capability` per pair.
with

validity as (
    select * from {{ ref('int_question_validity') }}
),

questions as (
    select * from {{ ref('stg_questions') }}
),

prompts as (
    select * from {{ ref('stg_prompts') }}
),

judgments as (
    select * from {{ ref('stg_judgments') }}
),

images as (
    select * from {{ ref('stg_images') }}
),

failed as (
    select
        validity.model_id,
        validity.prompt_id,
        validity.question_id,
        questions.capability,
        questions.question_text
    from validity
    inner join questions
        on
            validity.prompt_id = questions.prompt_id
            and validity.question_id = questions.question_id
    where validity.is_valid and validity.outcome = 0
),

-- every judge's answers to the failed questions only (the failures are a small share of the
-- records, and the aggregation would otherwise run over every judgment)
answers as (
    select
        judgments.model_id,
        judgments.prompt_id,
        judgments.question_id,
        count(judgments.outcome)::bigint as n_judges_answered,
        count(*) filter (where judgments.outcome = 0)::bigint as n_judges_no,
        string_agg(
            judgments.judge_id || ': ' || coalesce(judgments.answer, 'missing'),
            '; ' order by judgments.judge_id
        ) as judge_answers
    from judgments
    inner join failed
        on
            judgments.model_id = failed.model_id
            and judgments.prompt_id = failed.prompt_id
            and judgments.question_id = failed.question_id
    group by judgments.model_id, judgments.prompt_id, judgments.question_id
),

ranked as (
    select
        failed.model_id,
        failed.capability,
        failed.prompt_id,
        prompts.language,
        prompts.prompt_text,
        failed.question_id,
        failed.question_text,
        answers.judge_answers,
        answers.n_judges_no,
        answers.n_judges_answered,
        images.image_path,
        row_number() over (
            partition by failed.model_id, failed.capability
            order by answers.n_judges_no desc, failed.prompt_id asc, failed.question_id asc
        ) as example_rank
    from failed
    inner join prompts on failed.prompt_id = prompts.prompt_id
    inner join answers
        on
            failed.model_id = answers.model_id
            and failed.prompt_id = answers.prompt_id
            and failed.question_id = answers.question_id
    left join images
        on
            failed.model_id = images.model_id
            and failed.prompt_id = images.prompt_id
),

final as (
    select
        model_id,
        capability,
        example_rank,
        prompt_id,
        language,
        prompt_text,
        question_id,
        question_text,
        '{{ var("official_judge") }}' as official_judge,
        judge_answers,
        n_judges_no,
        n_judges_answered,
        image_path
    from ranked
    where example_rank <= {{ var('failure_examples_per_capability') }}
)

select * from final
