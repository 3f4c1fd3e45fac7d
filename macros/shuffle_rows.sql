{#
    The order-independence check's post-hook (docs/importing.md, "Deterministic builds"): with
    the var `shuffle_seed` set, every table a model writes is rewritten in a pseudo-random row
    order of that seed, so a build shows whether any consumer's numbers depend on the order its
    inputs' rows were written in (a float sum over a hash aggregate's output, say). Unset (every
    real build), it renders nothing.
#}
{% macro shuffle_rows() -%}
    {%- set seed = var('shuffle_seed', none) -%}
    {%- if seed is not none and config.get('materialized') in ('table', 'incremental') -%}
        create or replace table {{ this }} as
        select * from {{ this }} order by hash(rowid, {{ seed | int }})
    {%- endif -%}
{%- endmacro %}
