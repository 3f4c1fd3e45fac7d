-- Which prompts each generator was evaluated on, that is, drew (METHOD 16): a (model, prompt) with
-- an image, or, for a generator whose evidence has no images (a release's judgments alone), with
-- a judgment row of the official judge, answered or not. Coverage is about what was drawn: a
-- drawn prompt whose judgments are all missing stays covered, its missing judgments out of every
-- total (METHOD 1, 6), so a generator with a few unjudgeable images is not a subset; an image the
-- evidence lacks is no row in either table, so its prompt is not covered, whether or not the judge
-- left a null row for it. A generator without every prompt is estimated from its subset
-- (int_subset_estimates).
with

judgments as (
    select * from {{ ref('int_official_judgments') }}
),

images as (
    select * from {{ ref('stg_images') }}
),

prompts as (
    select * from {{ ref('stg_prompts') }}
),

models_with_images as (
    select distinct model_id
    from images
),

drawn as (
    select
        model_id,
        prompt_id
    from images
    union
    select
        judgments.model_id,
        judgments.prompt_id
    from judgments
    where judgments.model_id not in (select models_with_images.model_id from models_with_images)
),

final as (
    select distinct
        drawn.model_id,
        drawn.prompt_id,
        prompts.concept_id,
        prompts.language
    from drawn
    inner join prompts on drawn.prompt_id = prompts.prompt_id
)

select * from final
