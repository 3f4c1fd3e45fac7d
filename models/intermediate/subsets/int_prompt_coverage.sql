-- Which prompts each generator was evaluated on: a (model, prompt) with at least one answered
-- judgment of the official judge. The question records cover every model x question (a missing
-- judgment is an invalid record), so evaluation coverage is read from the judgments themselves;
-- a judgment row without an answer is missing evidence exactly as an absent row is (METHOD 1),
-- so a prompt whose every answer is null was not evaluated either. A generator without every
-- prompt is estimated from its subset (METHOD 16, int_subset_estimates).
with

judgments as (
    select * from {{ ref('int_official_judgments') }}
),

prompts as (
    select * from {{ ref('stg_prompts') }}
),

final as (
    select distinct
        judgments.model_id,
        judgments.prompt_id,
        prompts.concept_id,
        prompts.language
    from judgments
    inner join prompts on judgments.prompt_id = prompts.prompt_id
    where judgments.outcome is not null
)

select * from final
