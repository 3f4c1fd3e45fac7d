{#-
    HCQ, Eq. 4 of the paper: the one implementation of the formula.

    Arguments:
      capability_scores: a relation with the `partition_by` columns, `group_key`, `capability`
        and `score_frac` (one row per capability; NULL score = no evidence for that capability).
      partition_by: the columns that identify one total (e.g. model and language scope).

    Returns a select with one row per partition x reporting group that has evidence:
    `group_score_frac` (mean of the group's available capability scores), `n_capabilities`
    (how many it used), and on every row the partition's `hcq_total_frac` (mean of the available
    group views), `n_groups` and `n_capabilities_total`. Group weights therefore follow the
    taxonomy seed (1 / (G * T_g)); a NULL capability drops out of its group, an empty group out of
    the total.

    Both means add their terms in a named order (capability, then group): a float sum's last bits
    depend on the order of its terms, and a hash aggregate's or a table's row order can vary from
    build to build (docs/importing.md, "Deterministic builds").
-#}
{% macro hcq(capability_scores, partition_by) -%}
    {%- set partition = partition_by | join(', ') -%}
    select
        {{ partition }},
        group_key,
        avg(score_frac order by capability) as group_score_frac,
        count(*) as n_capabilities,
        avg(avg(score_frac order by capability)) over (
            partition by {{ partition }} order by group_key
            rows between unbounded preceding and unbounded following
        ) as hcq_total_frac,
        count(*) over (partition by {{ partition }}) as n_groups,
        sum(count(*)) over (partition by {{ partition }})::bigint as n_capabilities_total
    from {{ capability_scores }}
    where score_frac is not null
    group by {{ partition }}, group_key
{%- endmacro %}
