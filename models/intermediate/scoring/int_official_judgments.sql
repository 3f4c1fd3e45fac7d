-- The judgments the marts score: the official judge's (var `official_judge`; `default` is the
-- judge of a bundle that names none). Several judges' answers to one question of one image would
-- otherwise count as several question records, and one judge's "no" would contradict another's
-- "yes" inside one outcome. Staging keeps every judge, for comparing judges.
with

judgments as (
    select * from {{ ref('stg_judgments') }}
),

official as (
    select * from judgments
    where judge_id = '{{ var("official_judge") }}'
)

select * from official
