-- Transcription sums are attributed to one capability, so the taxonomy may name at most one.
select count(*) as n_transcription_capabilities
from {{ ref('capabilities') }}
where evidence = 'transcription'
having count(*) > 1
