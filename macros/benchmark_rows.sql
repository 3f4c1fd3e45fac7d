{#-
    A predicate on a per-prompt model's rows (the question graph, its pairs): true, or false in an
    incremental build, which runs only when the prompts and questions are those of the last build
    (ingestion/store/build_inputs.py), so the stored rows stand and none is added.
-#}
{% macro benchmark_rows() -%}
    {%- if is_incremental() -%}false{%- else -%}true{%- endif -%}
{%- endmacro %}
