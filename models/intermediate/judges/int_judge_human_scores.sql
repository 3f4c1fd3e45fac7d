-- Judge and human scores of the same images (METHOD 15), one row per judge x image (model,
-- prompt) that the judge answered about and humans rated. Human score: the mean rating. Judge
-- score: the DSG zero-out convention, the share of the prompt's questions answered yes with
-- every ancestor answered yes (a question under a failed parent, or with a missing answer,
-- counts 0): exactly the valid "yes" records of the masking rule (int_judge_question_validity).
-- Only rated images are scored, so a warehouse without ratings computes nothing here.
with

ratings as (
    select * from {{ ref('stg_ratings') }}
),

judgments as (
    select * from {{ ref('stg_judgments') }}
),

validity as (
    select * from {{ ref('int_judge_question_validity') }}
),

prompts as (
    select * from {{ ref('stg_prompts') }}
),

human_scores as (
    select
        model_id,
        prompt_id,
        avg(rating) as human_score,
        count(*) as n_ratings,
        min(rating_scale) as rating_scale
    from ratings
    group by model_id, prompt_id
),

-- An image a judge never answered about has no score from it (not a score of 0): neither an
-- absent image nor one whose every answer is null (METHOD 1: the same missing evidence).
judged_images as (
    select distinct
        judgments.judge_id,
        judgments.model_id,
        judgments.prompt_id
    from judgments
    semi join human_scores
        on
            judgments.model_id = human_scores.model_id
            and judgments.prompt_id = human_scores.prompt_id
    where judgments.outcome is not null
),

judge_scores as (
    select
        validity.judge_id,
        validity.model_id,
        validity.prompt_id,
        count(*) as n_questions,
        count(*) filter (where validity.is_valid and validity.outcome = 1) as n_passed
    from validity
    semi join judged_images
        on
            validity.judge_id = judged_images.judge_id
            and validity.model_id = judged_images.model_id
            and validity.prompt_id = judged_images.prompt_id
    group by validity.judge_id, validity.model_id, validity.prompt_id
),

final as (
    select
        judge_scores.judge_id,
        judge_scores.model_id,
        judge_scores.prompt_id,
        prompts.concept_id,
        judge_scores.n_questions,
        judge_scores.n_passed,
        judge_scores.n_passed / judge_scores.n_questions as judge_score,
        human_scores.n_ratings,
        human_scores.human_score,
        human_scores.rating_scale
    from judge_scores
    inner join human_scores
        on
            judge_scores.model_id = human_scores.model_id
            and judge_scores.prompt_id = human_scores.prompt_id
    inner join prompts on judge_scores.prompt_id = prompts.prompt_id
)

select * from final
