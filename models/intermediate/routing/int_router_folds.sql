-- Outer folds of the routing evaluation (METHOD 12): every concept gets one of 5 folds, so both
-- language versions of a concept share a fold. Stratified by source: concepts are dealt round
-- robin in (source, md5(seed / concept)) order, so each source spreads over the folds to within
-- one concept and the folds' sizes differ by at most one. Deterministic given `router_seed`.
-- The nested inner folds of a training set are its four other outer folds.
with

prompts as (
    select * from {{ ref('stg_prompts') }}
),

concepts as (
    select
        concept_id,
        -- the language versions of a concept come from one source; min() names it if not
        min(source) as source
    from prompts
    group by concept_id
),

dealt as (
    select
        concept_id,
        source,
        row_number() over (
            order by source, md5('{{ var("router_seed") }}/' || concept_id), concept_id
        ) as deal_position
    from concepts
),

final as (
    select
        concept_id,
        source,
        ((deal_position - 1) % 5 + 1)::integer as fold
    from dealt
)

select * from final
