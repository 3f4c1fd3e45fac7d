-- Where each generator fails (issue 24), per generator x language scope x capability with a
-- score: the score, the field's mean (the other generators'), the deficit (score - field mean,
-- points) with its paired concept-bootstrap interval from int_capability_deficits
-- (`method.deficits`), and the capability's place among the generator's deficits in the scope
-- (1 = furthest below the field).
with

deficits as (
    select * from {{ ref('int_capability_deficits') }}
),

capability_scores as (
    select * from {{ ref('int_capability_scores') }}
),

final as (
    select
        deficits.model_id,
        deficits.language_scope,
        deficits.capability,
        capability_scores.capability_group,
        capability_scores.score_source,
        capability_scores.n_valid,
        deficits.score,
        deficits.field_mean,
        deficits.n_field_models,
        deficits.deficit,
        deficits.deficit_ci_lo,
        deficits.deficit_ci_hi,
        coalesce(deficits.deficit_ci_hi < 0, false) as is_below_field,
        case
            when deficits.deficit is not null
                then
                    row_number() over (
                        partition by deficits.model_id, deficits.language_scope
                        order by
                            deficits.deficit asc nulls last,
                            capability_scores.group_order asc,
                            capability_scores.capability_order asc
                    )
        end as deficit_rank,
        deficits.n_draws
    from deficits
    inner join capability_scores
        on
            deficits.model_id = capability_scores.model_id
            and deficits.language_scope = capability_scores.language_scope
            and deficits.capability = capability_scores.capability
)

select * from final
