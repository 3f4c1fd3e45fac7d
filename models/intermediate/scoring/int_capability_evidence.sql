-- Sufficient statistics per model x language x capability: the valid-question counts behind
-- Eq. 2 and the text edit-distance sums behind Eq. 3, rolled up from the per-prompt counts.
-- Scores for any language scope are ratios of sums of these rows.
with

prompt_stats as (
    select * from {{ ref('int_prompt_sufficient_stats') }}
),

final as (
    select
        model_id,
        language,
        capability,
        sum(n_questions)::bigint as n_questions,
        sum(n_valid)::bigint as n_valid,
        sum(n_valid_yes)::bigint as n_valid_yes,
        sum(n_text_images)::bigint as n_text_images,
        sum(text_distance_utf16)::bigint as text_distance_utf16,
        sum(text_length_utf16)::bigint as text_length_utf16,
        sum(score_num)::bigint as score_num,
        sum(score_den)::bigint as score_den
    from prompt_stats
    group by model_id, language, capability
)

select * from final
