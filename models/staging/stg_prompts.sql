with

source as (
    select * from {{ source('raw', 'prompts') }}
),

renamed as (
    select
        cast(prompt_id as varchar) as prompt_id,
        cast(concept_id as varchar) as concept_id,
        cast(language as varchar) as language,
        cast(source as varchar) as source,
        cast(text as varchar) as prompt_text
    from source
)

select * from renamed
