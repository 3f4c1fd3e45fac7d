with

source as (
    select * from {{ source('raw', 'judgments') }}
),

renamed as (
    select
        cast(prompt_id as varchar) as prompt_id,
        cast(model_id as varchar) as model_id,
        cast(question_id as varchar) as question_id,
        cast(answer as varchar) as answer,
        -- The native outcome y of METHOD 1; a missing answer stays null, never "no".
        case answer when 'yes' then 1 when 'no' then 0 end as outcome,
        cast(p_yes as double) as p_yes,
        cast(judge_id as varchar) as judge_id,
        cast(judge_model as varchar) as judge_model,
        cast(judge_revision as varchar) as judge_revision,
        cast(prompt_template_sha as varchar) as prompt_template_sha,
        cast(judge_engine as varchar) as judge_engine,
        cast(judge_engine_version as varchar) as judge_engine_version,
        cast(judge_gpu_model as varchar) as judge_gpu_model
    from source
)

select * from renamed
