-- The judgments the marts score: the official judge's (var `official_judge`; `default` is the
-- judge of a bundle that names none). Several judges' answers to one question of one image would
-- otherwise count as several question records, and one judge's "no" would contradict another's
-- "yes" inside one outcome. Staging keeps every judge, for comparing judges.
-- Incremental by generator (macro `changed_generators`; docs/warehouse.md, "Incremental builds").
{{ incremental_config(by='generator') }}
with

judgments as (
    select * from {{ ref('stg_judgments') }}
),

official as (
    select * from judgments
    where judge_id = '{{ var("official_judge") }}' and {{ changed_generators() }}
)

select * from official
