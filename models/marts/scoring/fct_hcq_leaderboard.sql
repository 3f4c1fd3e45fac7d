-- The HCQ leaderboard (Eq. 4): per model and language scope the total and one column per
-- reporting group of the taxonomy seed, in points. `bilingual` is the fixed 50/50 mean of the
-- two languages named by the `bilingual_languages` var (METHOD 4). The group columns come from
-- the seed at compile time; the contract in _scoring.yml lists the default taxonomy's, so a build
-- with another taxonomy sets `--vars '{enforce_generated_column_contracts: false}'`.
{{ config(contract={'enforced': var('enforce_generated_column_contracts', true)}) }}
{% set group_keys = capability_group_keys(ref('capabilities')) %}
{% set bilingual = var('bilingual_languages') %}

with

group_views as (
    select * from {{ ref('int_hcq_group_views') }}
),

capability_scores as (
    select * from {{ ref('int_capability_scores') }}
),

generators as (
    select * from {{ ref('int_generators') }}
),

generator_coverage as (
    select * from {{ ref('int_generator_coverage') }}
),

model_scopes as (
    select
        model_id,
        language_scope,
        -- Which evidence scored the transcription capability (OCR, or the judgment fallback).
        bool_or(score_source = 'transcription') as text_from_ocr
    from capability_scores
    group by model_id, language_scope
),

scope_rows as (
    select
        model_scopes.model_id,
        model_scopes.language_scope,
        model_scopes.text_from_ocr,
        {% for group_key in group_keys %}
            max(
                case
                    when group_views.group_key = '{{ group_key }}'
                        then group_views.group_score_frac
                end
            ) as {{ group_key }}_frac,
        {% endfor %}
        any_value(group_views.hcq_total_frac) as hcq_total_frac,
        coalesce(any_value(group_views.n_groups), 0) as n_groups,
        coalesce(any_value(group_views.n_capabilities_total), 0) as n_capabilities
    from model_scopes
    left join group_views
        on
            model_scopes.model_id = group_views.model_id
            and model_scopes.language_scope = group_views.language_scope
    group by model_scopes.model_id, model_scopes.language_scope, model_scopes.text_from_ocr
),

-- Defined only where both languages have a figure: a fixed 50/50 mean, never a re-weighting.
bilingual_rows as (
    select
        first_language.model_id,
        'bilingual' as language_scope,
        first_language.text_from_ocr and second_language.text_from_ocr as text_from_ocr,
        {% for group_key in group_keys %}
            {{ bilingual_mean(
                'first_language.' ~ group_key ~ '_frac', 'second_language.' ~ group_key ~ '_frac'
            ) }} as {{ group_key }}_frac,
        {% endfor %}
        {{ bilingual_mean('first_language.hcq_total_frac', 'second_language.hcq_total_frac') }}
            as hcq_total_frac,
        least(first_language.n_capabilities, second_language.n_capabilities) as n_capabilities
    from scope_rows as first_language
    inner join scope_rows as second_language
        on
            first_language.model_id = second_language.model_id
            and first_language.language_scope = '{{ bilingual[0] }}'
            and second_language.language_scope = '{{ bilingual[1] }}'
),

bilingual_with_groups as (
    select
        *,
        0
        {% for group_key in group_keys %}
            + ({{ group_key }}_frac is not null)::integer
        {% endfor %} as n_groups
    from bilingual_rows
),

all_scopes as (
    select * from scope_rows
    union all by name
    select * from bilingual_with_groups
),

final as (
    select
        all_scopes.model_id,
        generators.display_name,
        all_scopes.language_scope,
        100 * all_scopes.hcq_total_frac as hcq_total,
        {% for group_key in group_keys %}
            100 * all_scopes.{{ group_key }}_frac as {{ group_key }},
        {% endfor %}
        case
            when all_scopes.hcq_total_frac is not null
                then rank() over (
                    partition by all_scopes.language_scope
                    order by all_scopes.hcq_total_frac desc nulls last
                )
        end as rank,
        all_scopes.n_groups,
        all_scopes.n_capabilities,
        all_scopes.hcq_total_frac,
        case
            when all_scopes.text_from_ocr then 'transcription' else 'judgment'
        end as text_evidence,
        -- A generator evaluated on part of the scope's prompts keeps its plain subset HCQ (and
        -- rank) here; fct_subset_estimates holds its corrected estimate (METHOD 16).
        coalesce(generator_coverage.evaluation, 'subset') as evaluation,
        coalesce(generator_coverage.prompt_coverage_frac, 0.0) as prompt_coverage_frac
    from all_scopes
    left join generators on all_scopes.model_id = generators.model_id
    left join generator_coverage
        on
            all_scopes.model_id = generator_coverage.model_id
            and all_scopes.language_scope = generator_coverage.language_scope
)

select * from final
