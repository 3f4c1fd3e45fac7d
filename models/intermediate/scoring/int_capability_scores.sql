-- Capability scores per model x language scope (Eq. 2, and Eq. 3 for Text Content). Every
-- capability of the taxonomy gets a row; its score is NULL where there is no evidence.
with

capabilities as (
    select * from {{ ref('int_capability_score_sources') }}
),

prompts as (
    select * from {{ ref('stg_prompts') }}
),

evidence as (
    select * from {{ ref('int_capability_evidence') }}
),

language_scopes as (
    select distinct
        language,
        language as language_scope
    from prompts
    union all
    select distinct
        language,
        'pooled' as language_scope
    from prompts
),

scope_sums as (
    select
        evidence.model_id,
        language_scopes.language_scope,
        evidence.capability,
        sum(evidence.n_questions)::bigint as n_questions,
        sum(evidence.n_valid)::bigint as n_valid,
        sum(evidence.n_text_images)::bigint as n_text_images,
        sum(evidence.score_num)::bigint as score_num,
        sum(evidence.score_den)::bigint as score_den
    from evidence
    inner join language_scopes on evidence.language = language_scopes.language
    group by evidence.model_id, language_scopes.language_scope, evidence.capability
),

grid as (
    select
        models.model_id,
        scopes.language_scope,
        capabilities.capability,
        capabilities.group_key as capability_group,
        capabilities.group_order,
        capabilities.capability_order,
        capabilities.score_source
    from (select distinct model_id from evidence) as models
    cross join (select distinct language_scope from language_scopes) as scopes
    cross join capabilities
),

final as (
    select
        grid.model_id,
        grid.language_scope,
        grid.capability,
        grid.capability_group,
        grid.group_order,
        grid.capability_order,
        grid.score_source,
        coalesce(scope_sums.n_questions, 0) as n_questions,
        coalesce(scope_sums.n_valid, 0) as n_valid,
        coalesce(scope_sums.n_text_images, 0) as n_text_images,
        coalesce(scope_sums.score_num, 0) as score_num,
        coalesce(scope_sums.score_den, 0) as score_den,
        -- Eq. 2 (mean outcome over the valid questions) or Eq. 3 (micro-averaged over every
        -- target character of the ok images), evaluated as 1 - D / L like METHOD 3 writes it.
        {{ capability_score(
            'scope_sums.score_num', 'scope_sums.score_den',
            one_minus_distance="grid.score_source = 'transcription'"
        ) }} as score_frac
    from grid
    left join scope_sums
        on
            grid.model_id = scope_sums.model_id
            and grid.language_scope = scope_sums.language_scope
            and grid.capability = scope_sums.capability
)

select
    *,
    100 * score_frac as score
from final
