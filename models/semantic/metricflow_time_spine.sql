-- The day-grain time spine that dbt's semantic layer requires of every project with metrics
-- (MetricFlow joins it for time-based queries). One row per calendar day; the range covers any
-- plausible publication date of a warehouse (the semantic models' `built_at`).
select cast(spine.day as date) as date_day
from range(timestamp '2024-01-01', timestamp '2051-01-01', interval 1 day) as spine (day)
