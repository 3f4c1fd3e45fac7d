-- Sufficient statistics per model x language x capability: the valid-question counts behind
-- Eq. 2 and the text edit-distance sums behind Eq. 3. Scores for any language scope are ratios of
-- sums of these rows, so the bootstrap can reuse them per concept.
with

capabilities as (
    select * from {{ ref('capabilities') }}
),

prompts as (
    select * from {{ ref('stg_prompts') }}
),

questions as (
    select * from {{ ref('stg_questions') }}
),

records as (
    select * from {{ ref('int_question_validity') }}
),

text_images as (
    select * from {{ ref('int_text_match') }}
),

judgment_counts as (
    select
        records.model_id,
        prompts.language,
        questions.capability,
        count(*) as n_questions,
        count(records.outcome) as n_judged,
        count(*) filter (where records.is_valid) as n_valid,
        count(*) filter (where records.is_valid and records.outcome = 1) as n_valid_yes
    from records
    inner join questions
        on
            records.prompt_id = questions.prompt_id
            and records.question_id = questions.question_id
    inner join prompts on records.prompt_id = prompts.prompt_id
    group by records.model_id, prompts.language, questions.capability
),

-- Transcriptions score the image, so their sums belong to the taxonomy's transcription
-- capability (a seed test keeps that to one capability).
text_sums as (
    select
        text_images.model_id,
        prompts.language,
        capabilities.capability,
        count(*) as n_text_images,
        sum(text_images.edit_distance_utf16)::bigint as text_distance_utf16,
        sum(text_images.target_length_utf16)::bigint as text_length_utf16
    from text_images
    inner join prompts on text_images.prompt_id = prompts.prompt_id
    cross join capabilities
    where
        text_images.transcription_status = 'ok'
        and capabilities.evidence = 'transcription'
    group by text_images.model_id, prompts.language, capabilities.capability
),

final as (
    select
        judgment_counts.model_id,
        judgment_counts.language,
        judgment_counts.capability,
        judgment_counts.n_questions,
        judgment_counts.n_judged,
        judgment_counts.n_valid,
        judgment_counts.n_valid_yes,
        coalesce(text_sums.n_text_images, 0) as n_text_images,
        coalesce(text_sums.text_distance_utf16, 0) as text_distance_utf16,
        coalesce(text_sums.text_length_utf16, 0) as text_length_utf16
    from judgment_counts
    left join text_sums
        on
            judgment_counts.model_id = text_sums.model_id
            and judgment_counts.language = text_sums.language
            and judgment_counts.capability = text_sums.capability
)

select * from final
