"""Reading the published warehouse for people: the text leaderboard, the self-contained HTML
report (inline SVG charts drawn here), and the facts that the report and Dagster's asset metadata
share. Reads only, never writes the warehouse; no Dagster, no dbt."""
