-- Rule vs model attribution (issue 32; METHOD 13a, docs/attribution.md "By a language model"):
-- for each attributing model, per capability the rules gave (and `__all__`), how many questions
-- carry both labels, the share where the model named the same capability, and the model's most
-- frequent other label. Only questions a model attributed that kept a rule label count; no such
-- question, no row.
with

questions as (
    select * from {{ ref('stg_questions') }}
),

both_labels as (
    select
        substr(capability_source, length('model:') + 1) as attribution_model,
        rule_capability,
        capability as model_capability
    from questions
    where
        capability_source like 'model:%'
        and rule_capability is not null
),

-- every question twice: under its rule label and under `__all__`
scoped as (
    select
        attribution_model,
        rule_capability as capability,
        rule_capability,
        model_capability
    from both_labels
    union all
    select
        attribution_model,
        '__all__' as capability,
        rule_capability,
        model_capability
    from both_labels
),

counts as (
    select
        attribution_model,
        capability,
        cast(count(*) as bigint) as n_questions,
        cast(count_if(model_capability = rule_capability) as bigint) as n_agree
    from scoped
    group by attribution_model, capability
),

-- the model's labels where it disagreed, most frequent first (ties: the key's alphabetical order)
other_labels as (
    select
        attribution_model,
        capability,
        model_capability as top_other_capability,
        cast(count(*) as bigint) as n_top_other
    from scoped
    where model_capability <> rule_capability
    group by attribution_model, capability, model_capability
    qualify
        row_number() over (
            partition by attribution_model, capability
            order by count(*) desc, model_capability asc
        ) = 1
),

final as (
    select
        counts.attribution_model,
        counts.capability,
        counts.n_questions,
        counts.n_agree,
        counts.n_agree / counts.n_questions as agreement_share,
        other_labels.top_other_capability,
        coalesce(other_labels.n_top_other, 0) as n_top_other
    from counts
    left join other_labels
        on
            counts.attribution_model = other_labels.attribution_model
            and counts.capability = other_labels.capability
)

select * from final
