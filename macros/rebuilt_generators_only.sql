{#-
    Data tests whose failing rows always belong to one generator (a uniqueness key with model_id
    in it, a check within one generator's rows) take the config `where: rebuilt_generators_only`:
    in `qct2i build`'s incremental builds (var `incremental_build`) they read only the rows of the
    generators the build rebuilt (`build_state.pending`), since every other generator's rows are
    those of the last published build, which passed them; in every other build they read the
    whole table. Reading thirteen generators' rows to test one was a tenth of an incremental
    build at paper scale (bench/RESULTS.md, the append case).

    A test's `where` is rendered when dbt parses, where project macros cannot be called, so the
    config names the rule and `get_where_subquery` (dbt's own, overridden here as dbt's
    documentation shows) turns the name into the predicate at run time.
-#}
{% macro rebuilt_generators_only(column='model_id') -%}
    {%- if var('incremental_build') -%}
        {{ pending_generator(column) }}
    {%- endif -%}
{%- endmacro %}

{% macro get_where_subquery(relation) -%}
    {%- set where = config.get('where') -%}
    {%- if where == 'rebuilt_generators_only' -%}
        {%- set where = rebuilt_generators_only() -%}
    {%- endif -%}
    {%- if where -%}
        {%- set filtered -%}
            (select * from {{ relation }} where {{ where }}) dbt_subquery
        {%- endset -%}
        {%- do return(filtered) -%}
    {%- else -%}
        {%- do return(relation) -%}
    {%- endif -%}
{%- endmacro %}
