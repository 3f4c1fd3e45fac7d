-- A few failed questions per generator x capability (issues 24, 32): valid questions (every
-- prerequisite answered yes, METHOD 2) whose official judgment does not comply, with the prompt,
-- the question as written, every judge's own word and whether it complies, and the image path
-- when the warehouse has images. One example per concept (the short and long prompt of one
-- concept are one example), the most informative first: more judges failing the question, then
-- fewer judges passing it, then a hash of the ids (a fixed order that is not the alphabet, which
-- would show every generator the same first prompts); at most `failure_examples_per_capability`.
-- Incremental by generator (macro `changed_generators`; docs/warehouse.md, "Incremental builds").
{{ incremental_config(by='generator') }}
with

validity as (
    select * from {{ ref('int_question_validity') }}
    where {{ changed_generators() }}
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
        questions.question_text,
        questions.compliant_answer
    from validity
    inner join questions
        on
            validity.prompt_id = questions.prompt_id
            and validity.question_id = questions.question_id
    where validity.is_valid and validity.outcome = 0
),

-- Each judge's own word. Answers are stored target-yes (a stored yes complies), so on a question
-- whose compliant answer is "no" the judge said the opposite of what is stored; a missing answer
-- stays null, never a word.
judge_words as (
    select
        judgments.model_id,
        judgments.prompt_id,
        judgments.question_id,
        judgments.judge_id,
        judgments.answer,
        judgments.outcome,
        judgments.outcome = 1 as complies,
        case judgments.outcome
            when 1 then failed.compliant_answer
            when 0 then case failed.compliant_answer when 'yes' then 'no' else 'yes' end
        end as raw_answer
    from judgments
    -- the failed questions only: they are a small share of the records
    inner join failed
        on
            judgments.model_id = failed.model_id
            and judgments.prompt_id = failed.prompt_id
            and judgments.question_id = failed.question_id
),

answers as (
    select
        model_id,
        prompt_id,
        question_id,
        count(outcome)::bigint as n_judges_answered,
        count(*) filter (where outcome = 0)::bigint as n_judges_failing,
        count(*) filter (where outcome = 1)::bigint as n_judges_complying,
        string_agg(
            judge_id || ': ' || coalesce(answer, 'missing'), '; ' order by judge_id
        ) as judge_answers,
        string_agg(
            judge_id || ': ' || coalesce(raw_answer, 'missing'), '; ' order by judge_id
        ) as judge_raw_answers,
        list(
            struct_pack(judge_id := judge_id, raw_answer := raw_answer, complies := complies)
            order by judge_id
        ) as judges
    from judge_words
    group by model_id, prompt_id, question_id
),

candidates as (
    select
        failed.model_id,
        failed.capability,
        prompts.concept_id,
        failed.prompt_id,
        prompts.language,
        prompts.prompt_text,
        failed.question_id,
        failed.question_text,
        failed.compliant_answer,
        answers.judge_answers,
        answers.judge_raw_answers,
        answers.judges,
        answers.n_judges_failing,
        answers.n_judges_complying,
        answers.n_judges_answered,
        md5(failed.model_id || '/' || failed.prompt_id || '/' || failed.question_id) as tie_break
    from failed
    inner join prompts on failed.prompt_id = prompts.prompt_id
    inner join answers
        on
            failed.model_id = answers.model_id
            and failed.prompt_id = answers.prompt_id
            and failed.question_id = answers.question_id
),

-- the concept's most informative failure stands for it
one_per_concept as (
    select *
    from candidates
    qualify
        row_number() over (
            partition by model_id, capability, concept_id
            order by n_judges_failing desc, n_judges_complying asc, tie_break asc
        ) = 1
),

ranked as (
    select
        one_per_concept.*,
        images.image_path,
        row_number() over (
            partition by one_per_concept.model_id, one_per_concept.capability
            order by
                one_per_concept.n_judges_failing desc,
                one_per_concept.n_judges_complying asc,
                one_per_concept.tie_break asc
        ) as example_rank
    from one_per_concept
    left join images
        on
            one_per_concept.model_id = images.model_id
            and one_per_concept.prompt_id = images.prompt_id
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
        n_judges_failing as n_judges_no,
        n_judges_answered,
        image_path,
        concept_id,
        compliant_answer,
        judge_raw_answers,
        judges,
        n_judges_failing,
        n_judges_complying
    from ranked
    where example_rank <= {{ var('failure_examples_per_capability') }}
)

select * from final
