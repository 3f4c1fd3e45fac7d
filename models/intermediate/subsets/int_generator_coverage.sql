-- How much of the benchmark each generator was evaluated on, per model x language scope
-- (METHOD 16). The benchmark is every prompt (one per concept x language, stg_prompts) any
-- generator was evaluated on, as in `method.subsets.fully_evaluated`; a scope's prompts are its
-- languages' (`pooled`: all of them, `bilingual`: the two of the `bilingual_languages` var).
-- `full` = evaluated on every prompt of the scope.
{% set bilingual = var('bilingual_languages') %}

with

coverage as (
    select * from {{ ref('int_prompt_coverage') }}
),

benchmark as (
    select distinct
        prompt_id,
        language
    from coverage
),

language_scopes as (
    select distinct
        language,
        language as language_scope
    from benchmark
    union all
    select distinct
        language,
        'pooled' as language_scope
    from benchmark
    union all
    select distinct
        language,
        'bilingual' as language_scope
    from benchmark
    where language in ('{{ bilingual[0] }}', '{{ bilingual[1] }}')
),

scope_sizes as (
    select
        language_scopes.language_scope,
        count(*) as n_benchmark_prompts
    from benchmark
    inner join language_scopes on benchmark.language = language_scopes.language
    group by language_scopes.language_scope
),

generator_counts as (
    select
        coverage.model_id,
        language_scopes.language_scope,
        count(*) as n_prompts
    from coverage
    inner join language_scopes on coverage.language = language_scopes.language
    group by coverage.model_id, language_scopes.language_scope
),

generators as (
    select distinct model_id from coverage
),

final as (
    select
        generators.model_id,
        scope_sizes.language_scope,
        coalesce(generator_counts.n_prompts, 0) as n_prompts,
        scope_sizes.n_benchmark_prompts,
        coalesce(generator_counts.n_prompts, 0)::double / scope_sizes.n_benchmark_prompts
            as prompt_coverage_frac,
        case
            when generator_counts.n_prompts = scope_sizes.n_benchmark_prompts then 'full'
            else 'subset'
        end as evaluation
    from generators
    cross join scope_sizes
    left join generator_counts
        on
            generators.model_id = generator_counts.model_id
            and scope_sizes.language_scope = generator_counts.language_scope
)

select * from final
