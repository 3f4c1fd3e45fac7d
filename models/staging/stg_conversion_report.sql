with

source as (
    select * from {{ source('raw', 'conversion_report') }}
),

renamed as (
    select
        cast(source_file as varchar) as source_file,
        cast(line as bigint) as source_line,
        cast(dirty_class as varchar) as dirty_class,
        cast(action as varchar) as action,
        cast(reason as varchar) as reason
    from source
)

select * from renamed
