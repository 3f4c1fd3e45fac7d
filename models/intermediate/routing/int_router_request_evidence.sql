-- Request-level sufficient statistics: per model x request x capability the numerator and
-- denominator of the capability score (macro `capability_score`), so that any set of requests
-- (reference folds, a routed virtual generator, a bootstrap draw) scores by summing rows. Eq. 2:
-- valid yes / valid questions. Eq. 3 (the transcription capability, when the bundle has
-- transcriptions): (L - D) / L of the request's image, 0 / 0 where its transcription is
-- unavailable or absent. One row for every capability the request carries (its active
-- capabilities). The encoding has one home, `int_prompt_sufficient_stats`.
with

capabilities as (
    select * from {{ ref('int_capability_score_sources') }}
),

prompt_stats as (
    select * from {{ ref('int_prompt_sufficient_stats') }}
),

requests as (
    select * from {{ ref('int_router_requests') }}
),

-- a generator of unknown cost is not routed (int_generators.router_exclusion says why)
excluded as (
    select model_id from {{ ref('int_generators') }}
    where router_exclusion is not null
),

final as (
    select
        prompt_stats.model_id,
        prompt_stats.prompt_id,
        requests.concept_id,
        requests.language,
        requests.fold,
        prompt_stats.capability,
        capabilities.group_key,
        capabilities.score_source,
        prompt_stats.score_num::double as score_num,
        prompt_stats.score_den::double as score_den
    from prompt_stats
    inner join requests on prompt_stats.prompt_id = requests.prompt_id
    inner join capabilities on prompt_stats.capability = capabilities.capability
    where prompt_stats.model_id not in (select excluded.model_id from excluded)
)

-- Stored in key order: int_router_routed_scores adds floats in the order it reads these rows, and
-- int_prompt_sufficient_stats, incremental, stores a rebuilt generator's rows last, so this order
-- keeps an incremental build's routed scores bit-identical to a full build's.
select * from final
order by model_id, prompt_id, capability
