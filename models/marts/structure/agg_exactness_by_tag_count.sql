-- Figure 2 (left): prompt-macro exact completion by number of distinct tags per component
-- (buckets 1..6, 7+): mean of C_m(G) within each prompt, then over prompts, in points. Root
-- survival and descendant completion are rolled up the same way, each over the components where
-- it is defined. The means over prompts add in prompt order: a float sum's last bits depend on
-- the order of its terms, and per_prompt's rows come in no fixed order (docs/importing.md,
-- "Deterministic builds"); the means within a prompt are of integers, exact in any order.
with

exactness as (
    select * from {{ ref('fct_component_exactness') }}
),

per_prompt as (
    select
        model_id,
        language,
        n_tags_bucket,
        prompt_id,
        avg(exact) as exact_mean,
        avg(root_survival) as root_survival_mean,
        avg(descendant_completion) as descendant_completion_mean,
        count(exact) as n_components
    from exactness
    group by model_id, language, n_tags_bucket, prompt_id
),

final as (
    select
        model_id,
        language,
        n_tags_bucket,
        if(n_tags_bucket = '7+', 7, cast(n_tags_bucket as integer)) as bucket_order,
        100 * avg(exact_mean order by prompt_id) as exact_completion,
        100 * avg(root_survival_mean order by prompt_id) as root_survival,
        100 * avg(descendant_completion_mean order by prompt_id) as descendant_completion,
        sum(n_components) as n_components,
        count(exact_mean) as n_prompts
    from per_prompt
    group by model_id, language, n_tags_bucket
)

select * from final
