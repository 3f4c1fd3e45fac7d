with

source as (
    select * from {{ source('raw', 'generators') }}
),

renamed as (
    select
        cast(model_id as varchar) as model_id,
        cast(display_name as varchar) as display_name,
        cast(cost_gpu_s_per_mp as double) as cost_gpu_s_per_mp,
        -- CONTRACTS "Additions" (absent means unknown)
        cast(hub_id as varchar) as hub_id,
        cast(revision as varchar) as revision,
        cast(pipeline_class as varchar) as pipeline_class,
        cast(cost_source as varchar) as cost_source,
        cast(cost_gpu_model as varchar) as cost_gpu_model,
        cast(cost_measured_at as varchar) as cost_measured_at,
        cast(cost_versions as varchar) as cost_versions
    from source
)

select * from renamed
