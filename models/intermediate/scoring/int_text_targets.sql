-- The text targets of every (model, prompt) image that has any, beside what the OCR read.
-- An image without a transcription row gets status `missing` and, like `unavailable`, is left
-- out of the text score (METHOD 3).
-- Incremental by generator (macro `changed_generators`; docs/warehouse.md, "Incremental builds").
{{ incremental_config(by='generator') }}
with

questions as (
    select * from {{ ref('stg_questions') }}
),

judgments as (
    select * from {{ ref('int_official_judgments') }}
    where {{ changed_generators() }}
),

transcriptions as (
    select * from {{ ref('stg_transcriptions') }}
),

prompt_targets as (
    select
        prompt_id,
        list(text_target order by question_order) as text_targets
    from questions
    where text_target is not null
    group by prompt_id
),

judged_models as (
    select distinct model_id from judgments
),

final as (
    select
        judged_models.model_id,
        prompt_targets.prompt_id,
        prompt_targets.text_targets,
        coalesce(transcriptions.transcription_status, 'missing') as transcription_status,
        transcriptions.text_blocks
    from prompt_targets
    cross join judged_models
    left join transcriptions
        on
            prompt_targets.prompt_id = transcriptions.prompt_id
            and judged_models.model_id = transcriptions.model_id
)

select * from final
