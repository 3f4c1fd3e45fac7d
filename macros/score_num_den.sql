{#-
    The one encoding of a capability's sufficient statistics (`score_num`, `score_den`), which
    `capability_score` turns into a score: valid yes / valid questions (Eq. 2), or for the
    capability scored from transcriptions L - D / L (Eq. 3). Used by macro
    `prompt_sufficient_stats`, which builds int_prompt_sufficient_stats (the official judge) and
    int_judge_prompt_stats (every other judge).

    Arguments:
      score_source: the capability's `score_source` (int_capability_score_sources).
      valid_yes, valid: the judged counts (valid yes, valid questions).
      text_num, text_den: L - D and L summed over the transcribed images (UTF-16 units).

    Returns the two columns `score_num`, `score_den` (bigint), for a select list.
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
