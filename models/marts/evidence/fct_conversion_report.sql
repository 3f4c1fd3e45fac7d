-- What a converter (`qct2i import-dsg`) repaired or dropped on the way into the evidence: one row
-- per dirty thing of the source release, with its file and line (issue 15). Empty for a bundle
-- that came from no converter.
select
    source_file,
    source_line,
    dirty_class,
    action,
    reason
from {{ ref('stg_conversion_report') }}
order by source_file, source_line, dirty_class, reason
