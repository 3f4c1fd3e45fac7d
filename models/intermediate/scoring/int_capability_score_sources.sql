-- The taxonomy with the evidence that scores each capability in this warehouse: the
-- transcription capability is scored from OCR (Eq. 3) unless the bundle has no transcription at
-- all (an evaluator without OCR), when it falls back to its binary judgments (METHOD 3).
with

capabilities as (
    select * from {{ ref('capabilities') }}
),

transcriptions as (
    select * from {{ ref('stg_transcriptions') }}
),

bundle_has_transcriptions as (
    select count(*) > 0 as has_transcriptions from transcriptions
),

final as (
    select
        capabilities.*,
        case
            when
                capabilities.evidence = 'transcription'
                and bundle_has_transcriptions.has_transcriptions
                then 'transcription'
            else 'judgment'
        end as score_source
    from capabilities
    cross join bundle_has_transcriptions
)

select * from final
