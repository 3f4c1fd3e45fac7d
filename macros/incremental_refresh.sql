{#-
    The `full_refresh` config of an incremental model (docs/warehouse.md, "Incremental builds"):
    none (dbt's own `--full-refresh` flag decides) when `qct2i build` runs an incremental build
    (var `incremental_build`), else true, so every other `dbt build` (Dagster's, the tests', one
    by hand) rebuilds the model whole, as it would a table.
-#}
{% macro incremental_refresh() -%}
    {{ return(none if var('incremental_build') else true) }}
{%- endmacro %}
