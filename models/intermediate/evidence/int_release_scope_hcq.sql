-- HCQ (Eq. 4) per judge x model over the prompts of each release score's scope
-- (int_release_prompt_scopes), so that fct_release_scores can set the warehouse's own figure
-- beside the release's: the capability scores of Eq. 2 / Eq. 3 from the per-prompt sufficient
-- statistics (the official judge's int_prompt_sufficient_stats, every other judge's
-- int_judge_prompt_stats: METHOD 2's masking, a missing judgment invalid, never a "no") summed
-- over the scope's prompts, then macro `hcq`.
with

scopes as (
    select * from {{ ref('int_release_prompt_scopes') }}
),

official_stats as (
    select * from {{ ref('int_prompt_sufficient_stats') }}
),

other_judge_stats as (
    select * from {{ ref('int_judge_prompt_stats') }}
),

score_sources as (
    select * from {{ ref('int_capability_score_sources') }}
),

prompt_stats as (
    select
        '{{ var("official_judge") }}' as judge_id,
        model_id,
        prompt_id,
        capability,
        score_num,
        score_den
    from official_stats
    union all
    select
        judge_id,
        model_id,
        prompt_id,
        capability,
        score_num,
        score_den
    from other_judge_stats
),

scope_sums as (
    select
        prompt_stats.judge_id,
        prompt_stats.model_id,
        scopes.release,
        scopes.prompt_form,
        scopes.scope_level,
        scopes.scope,
        prompt_stats.capability,
        sum(prompt_stats.score_num)::bigint as score_num,
        sum(prompt_stats.score_den)::bigint as score_den
    from prompt_stats
    inner join scopes on prompt_stats.prompt_id = scopes.prompt_id
    group by all
),

capability_scores as (
    select
        scope_sums.judge_id,
        scope_sums.model_id,
        scope_sums.release,
        scope_sums.prompt_form,
        scope_sums.scope_level,
        scope_sums.scope,
        score_sources.group_key,
        scope_sums.capability,
        {{ capability_score(
            'scope_sums.score_num', 'scope_sums.score_den',
            one_minus_distance="score_sources.score_source = 'transcription'"
        ) }} as score_frac
    from scope_sums
    inner join score_sources on scope_sums.capability = score_sources.capability
),

group_views as (
    {{ hcq(
        'capability_scores',
        ['judge_id', 'model_id', 'release', 'prompt_form', 'scope_level', 'scope']
    ) }}
),

final as (
    select distinct
        judge_id,
        model_id,
        release,
        prompt_form,
        scope_level,
        scope,
        hcq_total_frac,
        n_groups,
        n_capabilities_total
    from group_views
)

select * from final
