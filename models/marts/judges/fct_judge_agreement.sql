-- Judge agreement per judge pair x capability (METHOD 14; `__all__` = every capability): the
-- estimators and the concept bootstrap run in int_judge_agreement (`method.agreement`).
with

agreement as (
    select * from {{ ref('int_judge_agreement') }}
),

final as (
    select
        judge_a,
        judge_b,
        capability,
        n_shared,
        agreement_frac,
        kappa,
        kappa_ci_lo,
        kappa_ci_hi,
        agreement_ci_lo,
        agreement_ci_hi,
        yes_rate_a,
        yes_rate_b,
        n_concepts,
        n_draws,
        reason
    from agreement
)

select * from final
