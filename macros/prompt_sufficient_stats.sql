{#-
    Sufficient statistics per judged slice x prompt x capability (the one home of the join that
    int_prompt_sufficient_stats, for the official judge, and int_judge_prompt_stats, for every
    other judge, share): the judged counts of the slice's validity records (Eq. 2), full outer
    joined with the transcription sums (Eq. 3), so a capability with only one kind of evidence
    keeps its row; then the prompt's concept and language and the `score_num_den` encoding.

    Arguments:
      validity: a relation with the `keys` columns, `prompt_id`, `question_id`, `outcome`,
        `is_valid` (macro `question_validity`'s records).
      questions: a relation with `prompt_id`, `question_id`, `capability` (stg_questions).
      text_sums: a relation with the `keys` columns, `prompt_id`, `capability`, `n_text_images`,
        `text_distance_utf16`, `text_length_utf16` (D and L summed over the transcribed images).
      prompts: a relation with `prompt_id`, `concept_id`, `language` (stg_prompts).
      score_sources: a relation with `capability`, `score_source`
        (int_capability_score_sources).
      keys: the columns of one judged slice: `['model_id']` (the official judge) or
        `['judge_id', 'model_id']` (every other judge).

    Returns a select of the `keys`, `prompt_id`, `concept_id`, `language`, `capability`, the
    counts `n_questions` (every question), `n_answered` (a judgment with an answer: the unmasked
    denominator of METHOD 6, where a missing judgment is out of both totals), `n_missing`
    (`n_questions - n_answered`: null answers and absent judgment rows alike), `n_yes`,
    `n_valid`, `n_valid_yes`, `n_text_images`, `text_distance_utf16`, `text_length_utf16` (0
    where that evidence is absent), `score_num`, `score_den`.
-#}
{% macro prompt_sufficient_stats(validity, questions, text_sums, prompts, score_sources, keys) -%}
    with

    judgment_counts as (
        select
            {% for key in keys %}validity.{{ key }},{% endfor %}
            validity.prompt_id,
            questions.capability,
            count(*) as n_questions,
            count(validity.outcome) as n_answered,
            count(*) filter (where validity.outcome = 1) as n_yes,
            count(*) filter (where validity.is_valid) as n_valid,
            count(*) filter (where validity.is_valid and validity.outcome = 1) as n_valid_yes
        from {{ validity }} as validity
        inner join {{ questions }} as questions
            on
                validity.prompt_id = questions.prompt_id
                and validity.question_id = questions.question_id
        group by
            {% for key in keys %}validity.{{ key }}, {% endfor %}
            validity.prompt_id, questions.capability
    ),

    combined as (
        select
            {% for key in keys %}
                coalesce(judgment_counts.{{ key }}, text_sums.{{ key }}) as {{ key }},
            {% endfor %}
            coalesce(judgment_counts.prompt_id, text_sums.prompt_id) as prompt_id,
            coalesce(judgment_counts.capability, text_sums.capability) as capability,
            coalesce(judgment_counts.n_questions, 0) as n_questions,
            coalesce(judgment_counts.n_answered, 0) as n_answered,
            coalesce(judgment_counts.n_yes, 0) as n_yes,
            coalesce(judgment_counts.n_valid, 0) as n_valid,
            coalesce(judgment_counts.n_valid_yes, 0) as n_valid_yes,
            coalesce(text_sums.n_text_images, 0) as n_text_images,
            coalesce(text_sums.text_distance_utf16, 0) as text_distance_utf16,
            coalesce(text_sums.text_length_utf16, 0) as text_length_utf16
        from judgment_counts
        full outer join {{ text_sums }} as text_sums
            on
                {% for key in keys %}
                    judgment_counts.{{ key }} = text_sums.{{ key }} and
                {% endfor %}
                judgment_counts.prompt_id = text_sums.prompt_id
                and judgment_counts.capability = text_sums.capability
    )

    select
        {% for key in keys %}combined.{{ key }},{% endfor %}
        combined.prompt_id,
        prompts.concept_id,
        prompts.language,
        combined.capability,
        combined.n_questions,
        combined.n_answered,
        combined.n_questions - combined.n_answered as n_missing,
        combined.n_yes,
        combined.n_valid,
        combined.n_valid_yes,
        combined.n_text_images,
        combined.text_distance_utf16,
        combined.text_length_utf16,
        {{ score_num_den(
            'score_sources.score_source', 'combined.n_valid_yes', 'combined.n_valid',
            'combined.text_length_utf16 - combined.text_distance_utf16',
            'combined.text_length_utf16'
        ) }}
    from combined
    inner join {{ prompts }} as prompts on combined.prompt_id = prompts.prompt_id
    left join {{ score_sources }} as score_sources on combined.capability = score_sources.capability
{%- endmacro %}
