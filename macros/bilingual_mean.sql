{#-
    The `bilingual` scope (METHOD 4): the fixed 50/50 mean of two languages' figures, NULL unless
    both are defined; never re-weighted by how much evidence each language has. The one home of
    the formula; `method.scores.bilingual_mean` is its numpy twin.

    Arguments:
      first, second: the two languages' figures (column expressions).
-#}
{% macro bilingual_mean(first, second) -%}
    ({{ first }} + {{ second }}) / 2
{%- endmacro %}
