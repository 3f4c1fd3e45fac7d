-- METHOD 2: a valid non-root question has every parent valid and answered yes.
with

-- a child and its parents are one generator's rows: an incremental build tests the rebuilt ones
records as (
    select * from {{ ref('fct_question_records') }}
    {% if rebuilt_generators_only() %}where {{ rebuilt_generators_only() }}{% endif %}
),

edges as (
    select * from {{ ref('int_question_edges') }}
)

select
    child.model_id,
    child.prompt_id,
    child.question_id,
    parent.question_id as parent_question_id
from records as child
inner join edges
    on
        child.prompt_id = edges.prompt_id
        and child.question_id = edges.child_question_id
inner join records as parent
    on
        child.model_id = parent.model_id
        and child.prompt_id = parent.prompt_id
        and edges.parent_question_id = parent.question_id
where
    child.is_valid
    and not child.is_root
    and not (parent.is_valid and parent.outcome = 1)
