with

source as (
    select * from {{ source('raw', 'generators') }}
),

renamed as (
    select
        cast(model_id as varchar) as model_id,
        cast(display_name as varchar) as display_name,
        cast(cost_gpu_s_per_mp as double) as cost_gpu_s_per_mp
    from source
)

select * from renamed
