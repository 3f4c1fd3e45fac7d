-- A release's own score beside HCQ (issue 32), one row per judge x model x release x prompt form
-- x scope, so that the warehouse can be checked against the release's published leaderboard.
-- Each release's rule, as its own scripts compute it (docs/releases.md, "The release's own
-- score"):
-- - OneIG-Bench's alignment score (`scripts/alignment/alignment_score.py`): per image the mean
--   over the prompt's questions of the zero-out outcome (int_release_question_outcomes), then the
--   mean over the scope's prompts (its EN or ZH score pools the categories' prompts);
-- - TIIF-Bench's (`eval/summary_results.py`, `summary_dimension_results.py`): per dimension the
--   share of its questions answered as a compliant image would, pooled over its prompts; a group
--   or part the mean of its dimensions' shares; the overall the mean of the nine groups'.
-- A question with no answer (a missing judgment, or an image the release lacks) is left out of
-- both the numerator and the denominator and counted in `n_missing`, never a "no".
-- A mean of means adds its terms in a named order (prompt, dimension, group): a float sum's last
-- bits depend on the order of its terms (docs/importing.md, "Deterministic builds").
with

scopes as (
    select * from {{ ref('int_release_prompt_scopes') }}
),

outcomes as (
    select * from {{ ref('int_release_question_outcomes') }}
),

scope_hcq as (
    select * from {{ ref('int_release_scope_hcq') }}
),

tiif_groups as (
    select * from {{ ref('tiif_score_groups') }}
),

oneig_images as (
    select
        judge_id,
        model_id,
        prompt_id,
        avg(zero_out_outcome) as image_score_frac,
        count(zero_out_outcome) as n_questions,
        count(*) - count(zero_out_outcome) as n_missing
    from outcomes
    where release = 'oneig'
    group by judge_id, model_id, prompt_id
),

oneig_scores as (
    select
        oneig_images.judge_id,
        oneig_images.model_id,
        scopes.release,
        scopes.prompt_form,
        scopes.scope_level,
        scopes.scope,
        avg(oneig_images.image_score_frac order by oneig_images.prompt_id) as release_score_frac,
        count(oneig_images.image_score_frac) as n_prompts,
        sum(oneig_images.n_questions) as n_questions,
        sum(oneig_images.n_missing) as n_missing
    from oneig_images
    inner join scopes on oneig_images.prompt_id = scopes.prompt_id
    group by all
),

tiif_dimensions as (
    select
        outcomes.judge_id,
        outcomes.model_id,
        scopes.release,
        scopes.prompt_form,
        scopes.scope as dimension,
        avg(outcomes.outcome) as release_score_frac,
        count(distinct outcomes.prompt_id) filter (
            where outcomes.outcome is not null
        ) as n_prompts,
        count(outcomes.outcome) as n_questions,
        count(*) - count(outcomes.outcome) as n_missing
    from outcomes
    inner join scopes
        on
            outcomes.prompt_id = scopes.prompt_id
            and scopes.scope_level = 'dimension'
    where outcomes.release = 'tiif-testmini'
    group by all
),

-- A dimension with no answered question has no share (NULL) and drops out of the means, as
-- TIIF's pandas means skip it.
tiif_with_groups as (
    select
        tiif_dimensions.*,
        tiif_groups.part,
        tiif_groups.part || '/' || tiif_groups.group_name as group_scope
    from tiif_dimensions
    inner join tiif_groups on tiif_dimensions.dimension = tiif_groups.dimension
),

tiif_groups_scores as (
    select
        judge_id,
        model_id,
        release,
        prompt_form,
        'group' as scope_level,
        group_scope as scope,
        avg(release_score_frac order by dimension) as release_score_frac,
        sum(n_prompts) as n_prompts,
        sum(n_questions) as n_questions,
        sum(n_missing) as n_missing
    from tiif_with_groups
    group by all
),

tiif_parts as (
    select
        judge_id,
        model_id,
        release,
        prompt_form,
        'part' as scope_level,
        part as scope,
        avg(release_score_frac order by dimension) as release_score_frac,
        sum(n_prompts) as n_prompts,
        sum(n_questions) as n_questions,
        sum(n_missing) as n_missing
    from tiif_with_groups
    group by all
),

tiif_overall as (
    select
        judge_id,
        model_id,
        release,
        prompt_form,
        'overall' as scope_level,
        '__all__' as scope,
        -- in group order: `scope` inside the aggregate is each input row's group, not '__all__'
        avg(release_score_frac order by scope) as release_score_frac,
        sum(n_prompts) as n_prompts,
        sum(n_questions) as n_questions,
        sum(n_missing) as n_missing
    from tiif_groups_scores
    group by all
),

release_scores as (
    select * from oneig_scores
    union all by name
    select
        judge_id,
        model_id,
        release,
        prompt_form,
        'dimension' as scope_level,
        dimension as scope,
        release_score_frac,
        n_prompts,
        n_questions,
        n_missing
    from tiif_dimensions
    union all by name
    select * from tiif_groups_scores
    union all by name
    select * from tiif_parts
    union all by name
    select * from tiif_overall
),

final as (
    select
        release_scores.judge_id,
        release_scores.judge_id = '{{ var("official_judge") }}' as is_official_judge,
        release_scores.model_id,
        release_scores.release,
        release_scores.prompt_form,
        release_scores.scope_level,
        release_scores.scope,
        100 * release_scores.release_score_frac as release_score,
        release_scores.n_prompts::bigint as n_prompts,
        release_scores.n_questions::bigint as n_questions,
        release_scores.n_missing::bigint as n_missing,
        100 * scope_hcq.hcq_total_frac as hcq_total,
        scope_hcq.n_capabilities_total::bigint as hcq_n_capabilities,
        100 * (release_scores.release_score_frac - scope_hcq.hcq_total_frac)
            as release_score_minus_hcq
    from release_scores
    left join scope_hcq
        on
            release_scores.judge_id = scope_hcq.judge_id
            and release_scores.model_id = scope_hcq.model_id
            and release_scores.release = scope_hcq.release
            and release_scores.prompt_form = scope_hcq.prompt_form
            and release_scores.scope_level = scope_hcq.scope_level
            and release_scores.scope = scope_hcq.scope
)

select * from final
