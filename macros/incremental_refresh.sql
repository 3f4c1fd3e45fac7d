{#-
    The `full_refresh` config of an incremental model (docs/warehouse.md, "Incremental builds"):
    none (dbt's own `--full-refresh` flag decides) when `qct2i build` runs an incremental build
    (var `incremental_build`), else true, so every other `dbt build` (Dagster's, the tests', one
    by hand) rebuilds the model whole, as it would a table.
-#}
{% macro incremental_refresh() -%}
    {{ return(none if var('incremental_build') else true) }}
{%- endmacro %}

{#-
    The one config of the models `qct2i build` builds incrementally (docs/warehouse.md,
    "Incremental builds"), called first in each such model: appended rows, a schema change an
    error, whole outside incremental builds (`incremental_refresh`). `by='generator'`: the model's
    rows belong to one generator, and the pre-hook drops the stored rows of the generators this
    build rebuilds (`delete_changed_generators`, paired with `changed_generators` on its input);
    `by='prompt'`: its rows belong to one prompt and stand in an incremental build
    (`benchmark_rows`).
-#}
{% macro incremental_config(by) -%}
    {%- if by not in ('generator', 'prompt') -%}
        {{ exceptions.raise_compiler_error("incremental_config: by must be 'generator' or 'prompt', not '" ~ by ~ "'") }}
    {%- endif -%}
    {{ config(
        materialized='incremental',
        incremental_strategy='append',
        on_schema_change='fail',
        full_refresh=incremental_refresh(),
        pre_hook=("{{ delete_changed_generators() }}" if by == 'generator' else [])
    ) }}
{%- endmacro %}
