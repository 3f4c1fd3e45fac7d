with

source as (
    select * from {{ source('raw', 'ratings') }}
),

renamed as (
    select
        cast(prompt_id as varchar) as prompt_id,
        cast(model_id as varchar) as model_id,
        cast(rater_id as varchar) as rater_id,
        cast(rating as double) as rating,
        cast(scale as varchar) as rating_scale
    from source
)

select * from renamed
