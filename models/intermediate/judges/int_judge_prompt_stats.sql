-- Sufficient statistics per judge x model x prompt x capability for the per-judge leaderboard,
-- for every judge but the official one (whose leaderboard is fct_hcq_leaderboard itself): the
-- encoding of int_prompt_sufficient_stats, `score_num` / `score_den` = valid yes / valid
-- questions of the judge's own masking (Eq. 2), or L - D / L for the capability scored from
-- transcriptions (Eq. 3; OCR evidence does not depend on the judge, so every judge shares it).
-- Empty in a warehouse with one judge.
with

validity as (
    select * from {{ ref('int_judge_question_validity') }}
    where judge_id is distinct from '{{ var("official_judge") }}'
),

questions as (
    select * from {{ ref('stg_questions') }}
),

prompts as (
    select * from {{ ref('stg_prompts') }}
),

score_sources as (
    select * from {{ ref('int_capability_score_sources') }}
),

official_stats as (
    select * from {{ ref('int_prompt_sufficient_stats') }}
),

judgment_counts as (
    select
        validity.judge_id,
        validity.model_id,
        validity.prompt_id,
        questions.capability,
        count(*) filter (where validity.is_valid) as n_valid,
        count(*) filter (where validity.is_valid and validity.outcome = 1) as n_valid_yes
    from validity
    inner join questions
        on
            validity.prompt_id = questions.prompt_id
            and validity.question_id = questions.question_id
    group by validity.judge_id, validity.model_id, validity.prompt_id, questions.capability
),

judges as (
    select distinct judge_id from judgment_counts
),

-- The transcription sums are the official statistics' own (per model x prompt, judge-free).
text_sums as (
    select
        judges.judge_id,
        official_stats.model_id,
        official_stats.prompt_id,
        official_stats.capability,
        official_stats.text_length_utf16 - official_stats.text_distance_utf16 as text_num,
        official_stats.text_length_utf16 as text_den
    from official_stats
    cross join judges
    where official_stats.n_text_images > 0
),

combined as (
    select
        coalesce(judgment_counts.judge_id, text_sums.judge_id) as judge_id,
        coalesce(judgment_counts.model_id, text_sums.model_id) as model_id,
        coalesce(judgment_counts.prompt_id, text_sums.prompt_id) as prompt_id,
        coalesce(judgment_counts.capability, text_sums.capability) as capability,
        coalesce(judgment_counts.n_valid, 0) as n_valid,
        coalesce(judgment_counts.n_valid_yes, 0) as n_valid_yes,
        coalesce(text_sums.text_num, 0) as text_num,
        coalesce(text_sums.text_den, 0) as text_den
    from judgment_counts
    full outer join text_sums
        on
            judgment_counts.judge_id = text_sums.judge_id
            and judgment_counts.model_id = text_sums.model_id
            and judgment_counts.prompt_id = text_sums.prompt_id
            and judgment_counts.capability = text_sums.capability
),

final as (
    select
        combined.judge_id,
        combined.model_id,
        combined.prompt_id,
        prompts.language,
        combined.capability,
        {{ score_num_den(
            'score_sources.score_source', 'combined.n_valid_yes', 'combined.n_valid',
            'combined.text_num', 'combined.text_den'
        ) }}
    from combined
    inner join prompts on combined.prompt_id = prompts.prompt_id
    left join score_sources on combined.capability = score_sources.capability
)

select * from final
