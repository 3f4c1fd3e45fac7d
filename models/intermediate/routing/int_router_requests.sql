-- Routing requests (METHOD 12): one prompt in one language, with its concept's fold.
with

prompts as (
    select * from {{ ref('stg_prompts') }}
),

folds as (
    select * from {{ ref('int_router_folds') }}
),

final as (
    select
        prompts.prompt_id,
        prompts.concept_id,
        prompts.language,
        prompts.source,
        folds.fold
    from prompts
    inner join folds on prompts.concept_id = folds.concept_id
)

select * from final
