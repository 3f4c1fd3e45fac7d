-- Sufficient statistics per model x prompt x capability, the unit the reliability analyses
-- resample and re-weight: valid counts (Eq. 2), unmasked counts (METHOD 6: every answered
-- question counted; a missing judgment is out of both counts, never a 0, and counted in
-- `n_missing`) and the transcription sums of Eq. 3. Summed over a language's prompts they give
-- `int_capability_evidence`; summed per concept they feed the paired bootstrap (METHOD 11);
-- per prompt they give the n_pt of Eq. 9. `score_num` /
-- `score_den` are the one encoding of a capability score's evidence (macro `capability_score`):
-- valid yes / valid (Eq. 2), or L - D / L for the capability scored from transcriptions (Eq. 3).
-- The join is macro `prompt_sufficient_stats`, which int_judge_prompt_stats shares.
-- Incremental by generator (macro `changed_generators`; docs/warehouse.md, "Incremental builds").
{{ incremental_config(by='generator') }}
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
    where {{ changed_generators() }}
),

text_images as (
    select * from {{ ref('int_text_match') }}
    where {{ changed_generators() }}
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

final as (
    {{ prompt_sufficient_stats(
        'records', 'questions', 'text_sums', 'prompts', 'score_sources', ['model_id']
    ) }}
)

select * from final
