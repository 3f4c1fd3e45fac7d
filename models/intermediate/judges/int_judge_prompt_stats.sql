-- Sufficient statistics per judge x model x prompt x capability for the per-judge leaderboard,
-- for every judge but the official one (whose leaderboard is fct_hcq_leaderboard itself): the
-- encoding of int_prompt_sufficient_stats, `score_num` / `score_den` = valid yes / valid
-- questions of the judge's own masking (Eq. 2), or L - D / L for the capability scored from
-- transcriptions (Eq. 3; OCR evidence does not depend on the judge, so every judge shares it).
-- The join is macro `prompt_sufficient_stats`, which int_prompt_sufficient_stats shares. Empty
-- in a warehouse with one judge.
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

judges as (
    select distinct judge_id from validity
),

-- The transcription sums are the official statistics' own (per model x prompt, judge-free).
text_sums as (
    select
        judges.judge_id,
        official_stats.model_id,
        official_stats.prompt_id,
        official_stats.capability,
        official_stats.n_text_images,
        official_stats.text_distance_utf16,
        official_stats.text_length_utf16
    from official_stats
    cross join judges
    where official_stats.n_text_images > 0
),

stats as (
    {{ prompt_sufficient_stats(
        'validity', 'questions', 'text_sums', 'prompts', 'score_sources',
        ['judge_id', 'model_id']
    ) }}
),

final as (
    select
        judge_id,
        model_id,
        prompt_id,
        language,
        capability,
        score_num,
        score_den
    from stats
)

select * from final
