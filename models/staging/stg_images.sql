with

source as (
    select * from {{ source('raw', 'images') }}
),

renamed as (
    select
        cast(image_id as varchar) as image_id,
        cast(prompt_id as varchar) as prompt_id,
        cast(model_id as varchar) as model_id,
        cast(width as integer) as width_px,
        cast(height as integer) as height_px,
        cast(latency_s as double) as latency_s,
        cast(gpus as integer) as gpus,
        cast(path as varchar) as image_path
    from source
)

select * from renamed
