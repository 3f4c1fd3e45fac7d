-- Sufficient statistics per model x prompt x capability, the unit the reliability analyses
-- resample and re-weight: valid counts (Eq. 2), unmasked counts (METHOD 6: every question
-- counted, a missing judgment as 0) and the transcription sums of Eq. 3. Summed over a
-- language's prompts they give `int_capability_evidence`; summed per concept they feed the
-- paired bootstrap (METHOD 11); per prompt they give the n_pt of Eq. 9. `score_num` /
-- `score_den` are the one encoding of a capability score's evidence (macro `capability_score`):
-- valid yes / valid (Eq. 2), or L - D / L for the capability scored from transcriptions (Eq. 3).
with

score_sources as (
    select * from {{ ref('int_capability_score_sources') }}
),

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
        records.prompt_id,
        questions.capability,
        count(*) as n_questions,
        count(*) filter (where records.outcome = 1) as n_yes,
        count(*) filter (where records.is_valid) as n_valid,
        count(*) filter (where records.is_valid and records.outcome = 1) as n_valid_yes
    from records
    inner join questions
        on
            records.prompt_id = questions.prompt_id
            and records.question_id = questions.question_id
    group by records.model_id, records.prompt_id, questions.capability
),

-- Transcriptions score the image; their sums belong to the taxonomy's transcription capability.
text_sums as (
    select
        text_images.model_id,
        text_images.prompt_id,
        capabilities.capability,
        count(*) as n_text_images,
        sum(text_images.edit_distance_utf16)::bigint as text_distance_utf16,
        sum(text_images.target_length_utf16)::bigint as text_length_utf16
    from text_images
    cross join capabilities
    where
        text_images.transcription_status = 'ok'
        and capabilities.evidence = 'transcription'
    group by text_images.model_id, text_images.prompt_id, capabilities.capability
),

combined as (
    select
        coalesce(judgment_counts.model_id, text_sums.model_id) as model_id,
        coalesce(judgment_counts.prompt_id, text_sums.prompt_id) as prompt_id,
        coalesce(judgment_counts.capability, text_sums.capability) as capability,
        coalesce(judgment_counts.n_questions, 0) as n_questions,
        coalesce(judgment_counts.n_yes, 0) as n_yes,
        coalesce(judgment_counts.n_valid, 0) as n_valid,
        coalesce(judgment_counts.n_valid_yes, 0) as n_valid_yes,
        coalesce(text_sums.n_text_images, 0) as n_text_images,
        coalesce(text_sums.text_distance_utf16, 0) as text_distance_utf16,
        coalesce(text_sums.text_length_utf16, 0) as text_length_utf16
    from judgment_counts
    full outer join text_sums
        on
            judgment_counts.model_id = text_sums.model_id
            and judgment_counts.prompt_id = text_sums.prompt_id
            and judgment_counts.capability = text_sums.capability
),

final as (
    select
        combined.model_id,
        combined.prompt_id,
        prompts.concept_id,
        prompts.language,
        combined.capability,
        combined.n_questions,
        combined.n_yes,
        combined.n_valid,
        combined.n_valid_yes,
        combined.n_text_images,
        combined.text_distance_utf16,
        combined.text_length_utf16,
        {{ score_num_den(
            'score_sources.score_source', 'combined.n_valid_yes', 'combined.n_valid',
            'combined.text_length_utf16 - combined.text_distance_utf16',
            'combined.text_length_utf16'
        ) }}
    from combined
    inner join prompts on combined.prompt_id = prompts.prompt_id
    left join score_sources on combined.capability = score_sources.capability
)

select * from final
