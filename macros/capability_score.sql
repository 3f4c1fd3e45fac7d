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

{#-
    The one encoding of a capability's sufficient statistics (`score_num`, `score_den`), which
    `capability_score` turns into a score: valid yes / valid questions (Eq. 2), or for the
    capability scored from transcriptions L - D / L (Eq. 3). Used by int_prompt_sufficient_stats
    (the official judge) and int_judge_prompt_stats (every other judge).

    Arguments: score_source (the capability's `score_source`), valid_yes, valid (the judged
    counts), text_num, text_den (L - D and L summed over the transcribed images).
-#}
{% macro score_num_den(score_source, valid_yes, valid, text_num, text_den) -%}
    case
        when {{ score_source }} = 'transcription' then {{ text_num }}
        else {{ valid_yes }}
    end::bigint as score_num,
    case
        when {{ score_source }} = 'transcription' then {{ text_den }}
        else {{ valid }}
    end::bigint as score_den
{%- endmacro %}
