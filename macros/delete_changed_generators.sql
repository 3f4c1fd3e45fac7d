{#-
    The pre-hook of a per-generator incremental model: drop the stored rows of the generators
    this build rebuilds (`changed_generators`), inside the model's transaction, so a generator
    whose evidence was replaced or removed keeps none of its old rows. Nothing outside an
    incremental build.
-#}
{% macro delete_changed_generators() -%}
    {%- if is_incremental() -%}
        delete from {{ this }}
        where {{ pending_generator() }}
    {%- endif -%}
{%- endmacro %}
