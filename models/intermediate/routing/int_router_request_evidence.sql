-- Request-level sufficient statistics: per model x request x capability the numerator and
-- denominator of the capability score, so that any set of requests (reference folds, a routed
-- virtual generator, a bootstrap draw) scores by summing rows. Eq. 2: valid yes / valid
-- questions. Eq. 3 (the transcription capability, when the bundle has transcriptions):
-- (L - D) / L of the request's image, 0 / 0 where its transcription is unavailable or absent.
-- One row for every capability the request carries (its active capabilities). The counts
-- themselves come from `int_prompt_sufficient_stats`, their one home.
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
        case
            when capabilities.score_source = 'transcription'
                then prompt_stats.text_length_utf16 - prompt_stats.text_distance_utf16
            else prompt_stats.n_valid_yes
        end::double as score_num,
        case
            when capabilities.score_source = 'transcription' then prompt_stats.text_length_utf16
            else prompt_stats.n_valid
        end::double as score_den
    from prompt_stats
    inner join requests on prompt_stats.prompt_id = requests.prompt_id
    inner join capabilities on prompt_stats.capability = capabilities.capability
)

select * from final
