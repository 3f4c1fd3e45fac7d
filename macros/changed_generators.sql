{#-
    A predicate on a per-generator model's input: in an incremental build, its rows of the
    generators `qct2i build` rebuilds (`build_state.pending`, written before dbt runs and cleared
    by the publish, ingestion/store/build_inputs.py); otherwise every row. Pair it with the
    pre-hook `delete_changed_generators`, which drops the same generators' stored rows.
-#}
{% macro changed_generators(column='model_id') -%}
    {%- if is_incremental() -%}
        {{ pending_generator(column) }}
    {%- else -%}
        true
    {%- endif -%}
{%- endmacro %}

{#-
    The one predicate "this row's generator is being rebuilt" (`build_state.pending`), which
    `changed_generators`, `delete_changed_generators` and `rebuilt_generators_only` each apply
    under their own condition.
-#}
{% macro pending_generator(column='model_id') -%}
    {{ column }} in (select pending.model_id from build_state.pending as pending)
{%- endmacro %}
