-- Dependency masking (METHOD 2): v = 1 when every parent is valid and answered yes; roots are
-- valid; a missing judgment is invalid. Unrolled over the DSG this says: a question is valid
-- exactly when its own answer is present and every ancestor answered yes, which is what we
-- compute from the ancestor closure. Every model that has judgments gets a record for every
-- question, so a judgment row absent from the bundle is a missing judgment, not a "no".
with

questions as (
    select * from {{ ref('stg_questions') }}
),

judgments as (
    select * from {{ ref('int_official_judgments') }}
),

ancestors as (
    select * from {{ ref('int_question_ancestors') }}
),

judged_models as (
    select distinct model_id from judgments
),

records as (
    select
        judged_models.model_id,
        questions.prompt_id,
        questions.question_id,
        judgments.outcome
    from questions
    cross join judged_models
    left join judgments
        on
            questions.prompt_id = judgments.prompt_id
            and questions.question_id = judgments.question_id
            and judged_models.model_id = judgments.model_id
),

ancestor_outcomes as (
    select
        records.model_id,
        ancestors.prompt_id,
        ancestors.question_id,
        bool_and(coalesce(records.outcome = 1, false)) as all_ancestors_yes
    from ancestors
    inner join records
        on
            ancestors.prompt_id = records.prompt_id
            and ancestors.ancestor_question_id = records.question_id
    group by records.model_id, ancestors.prompt_id, ancestors.question_id
),

final as (
    select
        records.model_id,
        records.prompt_id,
        records.question_id,
        records.outcome,
        records.outcome is not null
        and coalesce(ancestor_outcomes.all_ancestors_yes, true) as is_valid
    from records
    left join ancestor_outcomes
        on
            records.model_id = ancestor_outcomes.model_id
            and records.prompt_id = ancestor_outcomes.prompt_id
            and records.question_id = ancestor_outcomes.question_id
)

select
    model_id,
    prompt_id,
    question_id,
    outcome,
    is_valid,
    case when is_valid then outcome end as outcome_masked
from final
