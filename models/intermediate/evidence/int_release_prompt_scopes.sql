-- The scopes of a release's own score that each release-sourced prompt counts in (issue 32), one
-- row per prompt x scope. A prompt's release and its category or dimension come from its
-- `source` (`oneig/<category>`, `tiif-testmini/<dimension>`, as the converters write it); its
-- form is what the release reports apart: OneIG-Bench its language (EN and ZH leaderboards),
-- TIIF-Bench its description (`<concept>-short`, `<concept>-long`). OneIG's alignment score
-- covers only the categories with question graphs (`oneig_category_map.questions` a Q_D stem):
-- its Text_Rendering prompts are scored by OCR there, not by alignment, and are left out here.
with

prompts as (
    select * from {{ ref('stg_prompts') }}
),

oneig_categories as (
    select * from {{ ref('oneig_category_map') }}
),

tiif_groups as (
    select * from {{ ref('tiif_score_groups') }}
),

release_prompts as (
    select
        prompt_id,
        split_part(source, '/', 1) as release,
        substr(source, strpos(source, '/') + 1) as release_category,
        case
            when source like 'oneig/%' then language
            -- the part of the prompt id after its concept's: short or long
            else substr(prompt_id, length(concept_id) + 2)
        end as prompt_form
    from prompts
    where source like 'oneig/%' or source like 'tiif-testmini/%'
),

oneig_prompts as (
    select release_prompts.*
    from release_prompts
    inner join oneig_categories
        on release_prompts.release_category = oneig_categories.category
    where
        release_prompts.release = 'oneig'
        and oneig_categories.questions is not null
        and oneig_categories.questions != 'text_content'
),

tiif_prompts as (
    select
        release_prompts.*,
        tiif_groups.part,
        tiif_groups.group_name
    from release_prompts
    left join tiif_groups on release_prompts.release_category = tiif_groups.dimension
    where release_prompts.release = 'tiif-testmini'
),

scopes as (
    select
        prompt_id,
        release,
        prompt_form,
        'category' as scope_level,
        release_category as scope
    from oneig_prompts
    union all
    select
        prompt_id,
        release,
        prompt_form,
        'overall' as scope_level,
        '__all__' as scope
    from oneig_prompts
    union all
    select
        prompt_id,
        release,
        prompt_form,
        'dimension' as scope_level,
        release_category as scope
    from tiif_prompts
    union all
    select
        prompt_id,
        release,
        prompt_form,
        'group' as scope_level,
        part || '/' || group_name as scope
    from tiif_prompts
    where group_name is not null
    union all
    select
        prompt_id,
        release,
        prompt_form,
        'part' as scope_level,
        part as scope
    from tiif_prompts
    where part is not null
    union all
    select
        prompt_id,
        release,
        prompt_form,
        'overall' as scope_level,
        '__all__' as scope
    from tiif_prompts
    where group_name is not null
),

final as (
    select * from scopes
)

select * from final
