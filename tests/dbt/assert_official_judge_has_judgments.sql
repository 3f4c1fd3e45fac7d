-- The official judge (var `official_judge`) has judgments whenever the warehouse holds any: a
-- misspelt judge would otherwise build marts without evidence that look like "nothing judged".
-- On failure the rows name the judges the warehouse does hold.
select
    judge_id,
    count(*) as n_judgments
from {{ source('raw', 'judgments') }}
where not exists (select 1 from {{ ref('int_official_judgments') }})
group by judge_id
