{#-
    A predicate on a per-generator model's input: in an incremental build, its rows of the
    generators `qct2i build` rebuilds (`build_state.pending`, written before dbt runs and cleared
    by the publish, ingestion/store/build_inputs.py); otherwise every row. Pair it with the
    pre-hook `delete_changed_generators`, which drops the same generators' stored rows.
-#}
{% macro changed_generators(column='model_id') -%}
    {%- if is_incremental() -%}
        {{ column }} in (select pending.model_id from build_state.pending as pending)
    {%- else -%}
        true
    {%- endif -%}
{%- endmacro %}
