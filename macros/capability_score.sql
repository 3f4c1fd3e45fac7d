{#-
    A capability score from summed sufficient statistics (Eq. 2, Eq. 3): the one home of the
    formula; `method.scores.capability_score` is its numpy twin.

    Arguments:
      num, den: sums of `score_num` and `score_den` (`int_prompt_sufficient_stats`: valid yes /
        valid questions, or for the transcription capability L - D / L in UTF-16 units).
      one_minus_distance: a boolean expression; where true, Eq. 3 is evaluated as METHOD 3 writes
        it, 1 - D / L with D = den - num (the leaderboard's rounding), else as (L - D) / L. The two
        differ in the last bit only.

    Returns max(0, num / den), NULL where den is 0 (DuckDB's greatest() skips NULLs, hence the
    explicit guard).
-#}
{% macro capability_score(num, den, one_minus_distance='false') -%}
    case
        when {{ den }} > 0
            then greatest(
                0.0,
                case
                    when {{ one_minus_distance }} then 1.0 - ({{ den }} - {{ num }}) / {{ den }}
                    else {{ num }} / {{ den }}
                end
            )
    end
{%- endmacro %}
