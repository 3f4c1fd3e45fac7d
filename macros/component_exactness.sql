{#
    The exactness rule of Eq. 5 (METHOD 7) as an aggregate over the questions of one component:
    0 when any valid question failed, 1 when every question is valid and succeeded, NULL
    otherwise (including when no question passes `where`). Arguments: `is_valid` and `outcome`
    (native y) column expressions, and `where`, a filter on the questions the rule runs over
    (e.g. `is_root` for root survival).
#}
{% macro component_exactness(is_valid, outcome, where='true') -%}
    case
        when bool_or({{ is_valid }} and {{ outcome }} = 0) filter (where {{ where }}) then 0
        when bool_and({{ is_valid }} and {{ outcome }} = 1) filter (where {{ where }}) then 1
    end
{%- endmacro %}
