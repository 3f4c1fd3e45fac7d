{#-
    Dependency masking (METHOD 2): the one implementation of the validity rule.

    v = 1 when every parent is valid and answered yes; roots are valid; a missing judgment is
    invalid. Unrolled over the DSG: a question is valid exactly when its own answer is present and
    every ancestor answered yes, which is what this computes from the ancestor closure. Every
    judged (keys) slice gets a record for every question, so a judgment row absent from the bundle
    is a missing judgment, not a "no".

    Arguments:
      questions: a relation with `prompt_id`, `question_id` (stg_questions).
      judgments: a relation with the `keys` columns, `prompt_id`, `question_id`, `outcome`.
      ancestors: the closure (`int_question_ancestors`).
      keys: the columns of one judged slice: `['model_id']` (the official judge) or
        `['judge_id', 'model_id']` (every judge).

    Returns a select of the `keys`, `prompt_id`, `question_id`, `outcome`, `is_valid`,
    `outcome_masked` (the outcome where valid, else NULL).
-#}
{% macro question_validity(questions, judgments, ancestors, keys) -%}
    {%- set slice = keys | join(', ') -%}
    with

    judged_slices as (
        select distinct {{ slice }} from {{ judgments }}
    ),

    records as (
        select
            {% for key in keys %}judged_slices.{{ key }},{% endfor %}
            questions.prompt_id,
            questions.question_id,
            judgments.outcome
        from {{ questions }} as questions
        cross join judged_slices
        left join {{ judgments }} as judgments
            on
                questions.prompt_id = judgments.prompt_id
                and questions.question_id = judgments.question_id
                {% for key in keys %}
                    and judged_slices.{{ key }} = judgments.{{ key }}
                {% endfor %}
    ),

    ancestor_outcomes as (
        select
            {% for key in keys %}records.{{ key }},{% endfor %}
            ancestors.prompt_id,
            ancestors.question_id,
            bool_and(coalesce(records.outcome = 1, false)) as all_ancestors_yes
        from {{ ancestors }} as ancestors
        inner join records
            on
                ancestors.prompt_id = records.prompt_id
                and ancestors.ancestor_question_id = records.question_id
        group by
            {% for key in keys %}records.{{ key }}, {% endfor %}
            ancestors.prompt_id, ancestors.question_id
    ),

    validity as (
        select
            {% for key in keys %}records.{{ key }},{% endfor %}
            records.prompt_id,
            records.question_id,
            records.outcome,
            records.outcome is not null
            and coalesce(ancestor_outcomes.all_ancestors_yes, true) as is_valid
        from records
        left join ancestor_outcomes
            on
                records.prompt_id = ancestor_outcomes.prompt_id
                and records.question_id = ancestor_outcomes.question_id
                {% for key in keys %}
                    and records.{{ key }} = ancestor_outcomes.{{ key }}
                {% endfor %}
    )

    select
        {{ slice }},
        prompt_id,
        question_id,
        outcome,
        is_valid,
        case when is_valid then outcome end as outcome_masked
    from validity
{%- endmacro %}
