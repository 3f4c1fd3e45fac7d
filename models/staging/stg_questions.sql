with

source as (
    select * from {{ source('raw', 'questions') }}
),

renamed as (
    select
        cast(prompt_id as varchar) as prompt_id,
        cast(question_id as varchar) as question_id,
        cast(question_order as integer) as question_order,
        cast(text as varchar) as question_text,
        cast(capability as varchar) as capability,
        cast(parents as varchar[]) as parent_question_ids,
        cast(entity as varchar) as entity,
        cast(text_target as varchar) as text_target,
        cast(capability_source as varchar) as capability_source,
        coalesce(cast(compliant_answer as varchar), 'yes') as compliant_answer,
        cast(rule_capability as varchar) as rule_capability
    from source
)

select * from renamed
