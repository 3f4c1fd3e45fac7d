-- Composition fingerprints (METHOD 10, Figure 4): for each tag-set cardinality 2..5 the 3 most
-- frequent full component tag sets of the language; per model the prompt-macro conditional
-- descendant completion (points) over components with that tag set whose roots survive, and its
-- deviation (points) from the same model's mean over the shown tag sets of that cardinality.
with

frequencies as (
    select * from {{ ref('agg_tag_set_frequencies') }}
),

exactness as (
    select * from {{ ref('fct_component_exactness') }}
),

top_tag_sets as (
    select
        language,
        tag_set,
        n_tags,
        n_components as frequency,
        frequency_rank
    from frequencies
    where n_tags between 2 and 5 and frequency_rank <= 3
),

per_prompt as (
    select
        exactness.model_id,
        exactness.language,
        exactness.tag_set,
        exactness.prompt_id,
        -- ordered: a float mean that does not depend on the order fct_component_exactness stores
        -- its rows in (an incremental build stores a rebuilt generator's rows last)
        avg(exactness.descendant_completion order by exactness.component_id) as completion_mean,
        count(exactness.descendant_completion) as n_components
    from exactness
    inner join top_tag_sets
        on
            exactness.language = top_tag_sets.language
            and exactness.tag_set = top_tag_sets.tag_set
    where exactness.descendant_completion is not null
    group by exactness.model_id, exactness.language, exactness.tag_set, exactness.prompt_id
),

cells as (
    select
        model_id,
        language,
        tag_set,
        100 * avg(completion_mean order by prompt_id) as descendant_completion,
        sum(n_components) as n_components,
        count(*) as n_prompts
    from per_prompt
    group by model_id, language, tag_set
),

shown as (
    select
        cells.model_id,
        cells.language,
        top_tag_sets.n_tags,
        top_tag_sets.tag_set,
        top_tag_sets.frequency,
        top_tag_sets.frequency_rank,
        cells.descendant_completion,
        cells.n_components,
        cells.n_prompts
    from cells
    inner join top_tag_sets
        on
            cells.language = top_tag_sets.language
            and cells.tag_set = top_tag_sets.tag_set
),

-- the model's mean over the shown tag sets of a cardinality, added in tag-set order
cardinality_means as (
    select
        model_id,
        language,
        n_tags,
        avg(descendant_completion order by tag_set) as mean_completion
    from shown
    group by model_id, language, n_tags
),

final as (
    select
        shown.model_id,
        shown.language,
        shown.n_tags,
        shown.tag_set,
        shown.frequency,
        shown.frequency_rank,
        shown.descendant_completion,
        shown.descendant_completion - cardinality_means.mean_completion as deviation,
        shown.n_components,
        shown.n_prompts
    from shown
    inner join cardinality_means
        on
            shown.model_id = cardinality_means.model_id
            and shown.language = cardinality_means.language
            and shown.n_tags = cardinality_means.n_tags
)

select * from final
