{#-
    The reporting groups of the taxonomy seed, in reporting order, read at compile time so that
    marts can give each group its own column without code assuming which groups exist.

    Arguments:
      capabilities: the relation of the taxonomy seed (pass `ref('capabilities')`).
-#}
{% macro capability_group_keys(capabilities) -%}
    {%- if not execute -%}
        {{ return([]) }}
    {%- endif -%}
    {%- set query -%}
        select group_key from {{ capabilities }}
        group by group_key
        order by min(group_order), group_key
    {%- endset -%}
    {{ return(run_query(query).columns[0].values() | list) }}
{%- endmacro %}
