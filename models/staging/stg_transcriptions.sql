with

source as (
    select * from {{ source('raw', 'transcriptions') }}
),

renamed as (
    select
        cast(prompt_id as varchar) as prompt_id,
        cast(model_id as varchar) as model_id,
        cast(status as varchar) as transcription_status,
        cast(blocks as varchar[]) as text_blocks
    from source
)

select * from renamed
