"""Missing is never "no", in every mart (issue 32, METHOD 1, 2, 6).

One world (tests/worlds/missing.py): `ABSENT_MODEL` lacks a tenth of its images, and the
simulator's own null answers are scattered over every generator. It is built twice: `absent` (no
row at all for the missing images) and `null` (their judgment rows present, answer null). METHOD 1
says both are the same missing evidence, so every mart must be identical under the two routes
(`test_both_routes_give_identical_marts`); that alone cannot tell a missing judgment left out from
one counted as "no" (both routes would count alike), so each mart also gets its own check in
`MARTS`: either it leaves the missing records out (equal to an independent computation from the
raw rows, in plain Python, that drops them) or it reports them as missing (a count or a NULL),
never as a failure. A mart the build makes that `MARTS` does not name fails the test.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.helpers import build_warehouse, query, warehouse_in
from tests.worlds.missing import ABSENT_MODEL, ROUTES, SECOND_JUDGE, read_rows, write_routes

OFFICIAL = "default"
TEXT = "text_rendering"


@pytest.fixture(scope="module")
def world(tmp_path_factory) -> dict:
    """Both routes built (every model and test) and the raw rows they came from."""
    root = tmp_path_factory.mktemp("missing")
    bundles, absent = write_routes(root)
    built = {r: build_warehouse(bundles[r], warehouse_in(root / f"wh-{r}")) for r in ROUTES}
    return {
        "wh": built["absent"],
        "null_wh": built["null"],
        "absent": absent,
        "rows": read_rows(bundles["absent"]),
    }


# -- the independent route: METHOD 1, 2, 4, 7 in plain Python over the raw rows -------------


def answers(rows: dict, judge: str) -> dict[tuple[str, str, str], int]:
    """(model, prompt, question) -> y for the judge's answered questions only: a missing
    judgment (null answer, or no row) is simply not there."""
    return {
        (j["model_id"], j["prompt_id"], j["question_id"]): int(j["answer"] == "yes")
        for j in rows["judgments"]
        if j["judge_id"] == judge and j["answer"] is not None
    }


def models_of(rows: dict) -> list[str]:
    return sorted({g["model_id"] for g in rows["generators"]})


def validity(rows: dict, judge: str) -> dict[tuple[str, str, str], bool]:
    """METHOD 2 by recursion over the parents: valid = answered, and every parent valid and
    answered yes; every model x question gets a value."""
    y = answers(rows, judge)
    parents = {(q["prompt_id"], q["question_id"]): q["parents"] for q in rows["questions"]}
    memo: dict = {}

    def valid(m: str, p: str, q: str) -> bool:
        if (m, p, q) not in memo:
            memo[m, p, q] = (m, p, q) in y and all(
                valid(m, p, a) and y[m, p, a] == 1 for a in parents[p, q]
            )
        return memo[m, p, q]

    return {(m, p, q): valid(m, p, q) for m in models_of(rows) for (p, q) in parents}


def language_of(rows: dict) -> dict[str, str]:
    return {p["prompt_id"]: p["language"] for p in rows["prompts"]}


def capability_of(rows: dict) -> dict[tuple[str, str], str]:
    return {(q["prompt_id"], q["question_id"]): q["capability"] for q in rows["questions"]}


def scores(rows: dict, judge: str, masked: bool) -> dict[tuple[str, str, str], tuple[int, float]]:
    """(model, language, capability) -> (N, Eq. 2 score) over the valid questions (masked) or
    over every answered one (METHOD 6's unmasked view); text is left to the transcriptions."""
    y, v = answers(rows, judge), validity(rows, judge)
    lang, cap = language_of(rows), capability_of(rows)
    sums: dict = defaultdict(lambda: [0, 0])
    for (m, p, q), is_valid in v.items():
        counted = is_valid if masked else (m, p, q) in y
        if counted and cap[p, q] != TEXT:
            cell = sums[m, lang[p], cap[p, q]]
            cell[0] += 1
            cell[1] += y[m, p, q]
    return {key: (n, yes / n) for key, (n, yes) in sums.items()}


def hcq(capability_scores: dict[str, float], groups: dict[str, str]) -> float:
    by_group = defaultdict(list)
    for capability, score in capability_scores.items():
        by_group[groups[capability]].append(score)
    return sum(sum(s) / len(s) for s in by_group.values()) / len(by_group)


def totals(warehouse: Path, rows: dict, judge: str, masked: bool) -> dict[tuple[str, str], float]:
    """(model, en | zh | bilingual) -> HCQ fraction from `scores`, text from the warehouse's
    transcription score (missing images have no transcription, so it cannot count them)."""
    groups = dict(query(warehouse, "select capability, group_key from seeds.capabilities"))
    per_cell = defaultdict(dict)
    for (m, lang, capability), (_, score) in scores(rows, judge, masked).items():
        per_cell[m, lang][capability] = score
    for m, lang, score in query(
        warehouse,
        "select model_id, language_scope, score_frac from marts.fct_capability_scores "
        f"where capability = '{TEXT}' and score_frac is not null",
    ):
        if (m, lang) in per_cell:
            per_cell[m, lang][TEXT] = score
    out = {key: hcq(s, groups) for key, s in per_cell.items()}
    for m in models_of(rows):
        out[m, "bilingual"] = (out[m, "en"] + out[m, "zh"]) / 2
    return out


def missing_counts(rows: dict, judge: str) -> dict[tuple[str, str], int]:
    """(model, language) -> questions without an answer of the judge."""
    y, lang = answers(rows, judge), language_of(rows)
    out: dict = defaultdict(int)
    for m in models_of(rows):
        for q in rows["questions"]:
            if (m, q["prompt_id"], q["question_id"]) not in y:
                out[m, lang[q["prompt_id"]]] += 1
    return out


def component_rule(cells: list[tuple[bool, int | None]]) -> int | None:
    """METHOD 7 over (valid, y) of some questions: 0 if a valid one failed, 1 if all valid and
    passed, else undefined."""
    if any(valid and y == 0 for valid, y in cells):
        return 0
    if cells and all(valid and y == 1 for valid, y in cells):
        return 1
    return None


def close(a: float | None, b: float | None) -> bool:
    if a is None or b is None:
        return a is None and b is None
    return math.isclose(a, b, rel_tol=0, abs_tol=1e-9)


# -- the checks, mart by mart ------------------------------------------------------------------


def check_question_records(w: dict) -> None:
    """Reports missing: a record with a null outcome, invalid, never a 0; as many as the raw
    rows lack, and every record of a missing image among them."""
    got = dict(
        ((m, lang), n)
        for m, lang, n in query(
            w["wh"],
            "select model_id, language, count(*) from marts.fct_question_records "
            "where outcome is null and not is_valid and outcome_masked is null group by all",
        )
    )
    assert got == dict(missing_counts(w["rows"], OFFICIAL))
    outcomes = query(
        w["wh"],
        "select distinct outcome from marts.fct_question_records "
        f"where model_id = '{ABSENT_MODEL}' and prompt_id in {tuple(w['absent'])}",
    )
    assert outcomes == [(None,)]


def check_capability_scores(w: dict) -> None:
    """Leaves out: N and the score of every non-text capability equal Eq. 2 over the valid
    answered questions; `n_questions` is the benchmark's question count, judgment-free."""
    want = scores(w["rows"], OFFICIAL, masked=True)
    rows = query(
        w["wh"],
        "select model_id, language_scope, capability, n_valid, score_frac, n_questions "
        f"from marts.fct_capability_scores where language_scope in ('en', 'zh') "
        f"and capability <> '{TEXT}'",
    )
    n_benchmark = defaultdict(int)
    lang = language_of(w["rows"])
    for q in w["rows"]["questions"]:
        n_benchmark[lang[q["prompt_id"]], q["capability"]] += 1
    for m, scope, capability, n_valid, score, n_questions in rows:
        n, s = want.get((m, scope, capability), (0, None))
        assert (n_valid, n_questions) == (n, n_benchmark[scope, capability])
        assert close(score, s), (m, scope, capability)


def check_leaderboard(w: dict) -> None:
    """Leaves out, and reports coverage: totals equal HCQ over the answered evidence; the
    generator with missing images is marked `subset` with its share of prompts."""
    want = totals(w["wh"], w["rows"], OFFICIAL, masked=True)
    rows = query(
        w["wh"],
        "select model_id, language_scope, hcq_total_frac, evaluation, prompt_coverage_frac "
        "from marts.fct_hcq_leaderboard where language_scope in ('en', 'zh', 'bilingual')",
    )
    lang = language_of(w["rows"])
    for m, scope, total, evaluation, coverage in rows:
        assert close(total, want[m, scope]), (m, scope)
        languages = ("en", "zh") if scope == "bilingual" else (scope,)
        in_scope = [p for p, lg in lang.items() if lg in languages]
        lacking = len(w["absent"] & set(in_scope)) if m == ABSENT_MODEL else 0
        assert close(coverage, 1 - lacking / len(in_scope)), (m, scope)
        assert evaluation == ("subset" if lacking else "full")


def check_masking_effect(w: dict) -> None:
    """Reports missing (METHOD 6): the unmasked total counts every answered question and no
    missing one; `n_missing_judgments` equals the raw count; the masked total is the
    leaderboard's."""
    masked = totals(w["wh"], w["rows"], OFFICIAL, masked=True)
    unmasked = totals(w["wh"], w["rows"], OFFICIAL, masked=False)
    missing = missing_counts(w["rows"], OFFICIAL)
    rows = query(
        w["wh"],
        "select model_id, language_scope, hcq_masked, hcq_unmasked, n_missing_judgments "
        "from marts.fct_masking_effect",
    )
    assert {m for m, *_ in rows} == set(models_of(w["rows"]))
    for m, scope, hcq_masked, hcq_unmasked, n_missing in rows:
        assert close(hcq_masked / 100, masked[m, scope])
        assert close(hcq_unmasked / 100, unmasked[m, scope]), (m, scope)
        languages = ("en", "zh") if scope == "bilingual" else (scope,)
        assert n_missing == sum(missing[m, lg] for lg in languages)
    planted = sum(q["prompt_id"] in w["absent"] for q in w["rows"]["questions"])
    assert [n for m, scope, *_, n in rows if (m, scope) == (ABSENT_MODEL, "bilingual")] >= [planted]


def check_leaderboard_by_judge(w: dict) -> None:
    """Leaves out: each judge's totals equal HCQ over that judge's answered evidence."""
    want = {j: totals(w["wh"], w["rows"], j, masked=True) for j in (OFFICIAL, SECOND_JUDGE)}
    for judge, m, scope, total in query(
        w["wh"],
        "select judge_id, model_id, language_scope, hcq_total_frac "
        "from marts.fct_hcq_leaderboard_by_judge where language_scope in ('en', 'zh')",
    ):
        assert close(total, want[judge][m, scope]), (judge, m, scope)


def check_same_scores_as_capability_scores(mart: str) -> Callable[[dict], None]:
    def check(w: dict) -> None:
        """Leaves out: the capability scores and N of fct_capability_scores (checked against
        the raw rows above), never others."""
        (n_different,) = query(
            w["wh"],
            f"""
            select count(*) from marts.{mart} as m
            inner join marts.fct_capability_scores as s using (model_id, language_scope, capability)
            where m.n_valid is distinct from s.n_valid or abs(m.score - s.score) > 1e-9
            """,
        )[0]
        assert n_different == 0

    return check


def check_rank_reliability(w: dict) -> None:
    """Leaves out: each point total is the leaderboard's (itself checked above)."""
    assert query(
        w["wh"],
        "select count(*) from marts.fct_rank_reliability as r inner join marts.fct_hcq_leaderboard "
        "as l using (model_id, language_scope) where abs(r.hcq_total - l.hcq_total) > 1e-9",
    ) == [(0,)]


def check_pairwise_reliability(w: dict) -> None:
    """Leaves out: each difference is that of the two leaderboard totals."""
    assert query(
        w["wh"],
        """
        select count(*) from marts.fct_pairwise_reliability as p
        inner join marts.fct_hcq_leaderboard as a
            on a.model_id = p.model_a and a.language_scope = p.language_scope
        inner join marts.fct_hcq_leaderboard as b
            on b.model_id = p.model_b and b.language_scope = p.language_scope
        where abs(p.diff - (a.hcq_total - b.hcq_total)) > 1e-9
        """,
    ) == [(0,)]


def reference_components(w: dict) -> dict[tuple[str, str], tuple]:
    """(model, component) -> (exact, root survival, descendant completion) by METHOD 7 from the
    raw answers; the components and roots are the benchmark's structure (question records)."""
    y, v = answers(w["rows"], OFFICIAL), validity(w["rows"], OFFICIAL)
    members = defaultdict(list)
    for m, p, q, component, is_root in query(
        w["wh"],
        "select model_id, prompt_id, question_id, component_id, is_root "
        "from marts.fct_question_records",
    ):
        members[m, component].append((v[m, p, q], y.get((m, p, q)), is_root))
    out = {}
    for key, cells in members.items():
        roots = component_rule([(valid, yy) for valid, yy, r in cells if r])
        rest = component_rule([(valid, yy) for valid, yy, r in cells if not r])
        exact = component_rule([(valid, yy) for valid, yy, _ in cells])
        out[key] = (exact, roots, rest if roots == 1 else None)
    return out


def check_component_exactness(w: dict) -> None:
    """Reports missing as undefined: C, R and descendant completion equal METHOD 7 from the raw
    answers, so a component of a missing image is NULL, never 0."""
    want = reference_components(w)
    rows = query(
        w["wh"],
        "select model_id, component_id, prompt_id, exact, root_survival, descendant_completion "
        "from marts.fct_component_exactness",
    )
    assert len(rows) == len(want)
    for m, component, prompt, *got in rows:
        assert tuple(got) == want[m, component], (m, component)
        if m == ABSENT_MODEL and prompt in w["absent"]:
            assert got == [None, None, None]


def prompt_macro(values: dict[str, list[float]]) -> tuple[float, int]:
    """(mean over prompts of the mean within each, number of prompts)."""
    means = [sum(v) / len(v) for v in values.values()]
    return sum(means) / len(means), len(means)


def check_exactness_by_tag_count(w: dict) -> None:
    """Leaves out: prompt-macro exact completion over the defined components only (recomputed
    from the METHOD 7 reference), so a prompt of a missing image is in no mean and no count."""
    want = reference_components(w)
    cells = defaultdict(lambda: defaultdict(list))
    for m, lang, bucket, prompt, component in query(
        w["wh"],
        "select model_id, language, n_tags_bucket, prompt_id, component_id "
        "from marts.fct_component_exactness",
    ):
        exact = want[m, component][0]
        if exact is not None:
            cells[m, lang, bucket][prompt].append(exact)
    rows = query(
        w["wh"],
        "select model_id, language, n_tags_bucket, exact_completion, n_prompts "
        "from marts.agg_exactness_by_tag_count",
    )
    for m, lang, bucket, exact, n_prompts in rows:
        if (m, lang, bucket) in cells:
            mean, n = prompt_macro(cells[m, lang, bucket])
            assert close(exact, 100 * mean) and n_prompts == n, (m, lang, bucket)
        else:
            assert exact is None and n_prompts == 0


def check_fingerprints(w: dict) -> None:
    """Leaves out: descendant completion over the components whose roots survive (recomputed
    from the METHOD 7 reference), prompt-macro, over the mart's tag sets."""
    want = reference_components(w)
    shown = query(
        w["wh"], "select distinct language, tag_set from marts.fct_composition_fingerprints"
    )
    cells = defaultdict(lambda: defaultdict(list))
    for m, lang, tag_set, prompt, component in query(
        w["wh"],
        "select model_id, language, tag_set, prompt_id, component_id "
        "from marts.fct_component_exactness",
    ):
        completion = want[m, component][2]
        if (lang, tag_set) in shown and completion is not None:
            cells[m, lang, tag_set][prompt].append(completion)
    rows = query(
        w["wh"],
        "select model_id, language, tag_set, descendant_completion, n_prompts "
        "from marts.fct_composition_fingerprints",
    )
    assert len(rows) == len(cells)
    for m, lang, tag_set, completion, n_prompts in rows:
        mean, n = prompt_macro(cells[m, lang, tag_set])
        assert close(completion, 100 * mean) and n_prompts == n


def check_root_controls(w: dict) -> None:
    """Leaves out (METHOD 8): R is undefined where a root carrying the entity has no answer, so
    a missing image's contexts are neither eligible nor in a baseline; n_contexts and both
    means equal the rule computed from the raw answers."""
    y = answers(w["rows"], OFFICIAL)
    lang = language_of(w["rows"])
    parents = {p for q in w["rows"]["questions"] for p in q["parents"]}
    roots = defaultdict(list)  # (prompt, entity) -> [(question, has a child)]
    for q in w["rows"]["questions"]:
        if not q["parents"] and q["entity"]:
            has_child = q["question_id"] in {
                a
                for c in w["rows"]["questions"]
                if c["prompt_id"] == q["prompt_id"]
                for a in c["parents"]
            }
            roots[q["prompt_id"], q["entity"]].append((q["question_id"], has_child))
    del parents
    for m, language, n_contexts, local, baseline in query(
        w["wh"],
        "select model_id, language, n_contexts, local_survival, baseline_survival "
        "from marts.fct_root_controls",
    ):
        defined = {}
        for (p, e), qs in roots.items():
            if lang[p] != language:
                continue
            judged = [y.get((m, p, q)) for q, _ in qs]
            defined[p, e] = None if None in judged else int(all(judged))
        eligible = []
        for (p, e), qs in roots.items():
            if lang[p] != language or defined[p, e] is None or not any(c for _, c in qs):
                continue
            others = [r for (p2, e2), r in defined.items() if e2 == e and p2 != p and r is not None]
            if len(others) >= 3:
                eligible.append((defined[p, e], sum(others) / len(others)))
        assert n_contexts == len(eligible), (m, language)
        if eligible:
            assert close(local, 100 * sum(r for r, _ in eligible) / len(eligible))
            assert close(baseline, 100 * sum(b for _, b in eligible) / len(eligible))


def check_judge_agreement(w: dict) -> None:
    """Leaves out (METHOD 14): the shared items are those both judges answered."""
    a, b = answers(w["rows"], OFFICIAL), answers(w["rows"], SECOND_JUDGE)
    shared = a.keys() & b.keys()
    (n_shared, agreement) = query(
        w["wh"],
        "select n_shared, agreement_frac from marts.fct_judge_agreement "
        "where capability = '__all__'",
    )[0]
    assert n_shared == len(shared)
    assert close(agreement, sum(a[k] == b[k] for k in shared) / len(shared))


def check_human_agreement(w: dict) -> None:
    """Leaves out (METHOD 15): only rated images a judge answered about are scored; the rated
    images without an answer are not scored 0. (Inside a judged image METHOD 15's DSG score
    counts a null answer as 0 by the spec's own word.)"""
    rated = {(r["model_id"], r["prompt_id"]) for r in w["rows"]["ratings"]}
    for judge, n_images in query(
        w["wh"], "select judge_id, n_images from marts.fct_human_agreement"
    ):
        judged = {(m, p) for (m, p, _) in answers(w["rows"], judge)}
        assert n_images == len(rated & judged)
    assert any(m == ABSENT_MODEL and p in w["absent"] for m, p in rated)


def check_failure_examples(w: dict) -> None:
    """Leaves out: every example is a question the official judge answered; none comes from a
    missing image."""
    y = answers(w["rows"], OFFICIAL)
    examples = query(
        w["wh"], "select model_id, prompt_id, question_id from marts.fct_failure_examples"
    )
    assert examples
    assert all(key in y for key in examples)


def check_subset_estimates(w: dict) -> None:
    """Reports missing (METHOD 16): the generator lacking images is the only one estimated from
    a subset, on the prompts it has."""
    lang = language_of(w["rows"])
    rows = query(
        w["wh"], "select model_id, language_scope, n_prompts from marts.fct_subset_estimates"
    )
    assert rows and {m for m, _, _ in rows} == {ABSENT_MODEL}
    for _, scope, n_prompts in rows:
        in_scope = {p for p, lg in lang.items() if scope in (lg, "pooled", "bilingual")}
        assert n_prompts == len(in_scope - w["absent"])


def check_structure_only(mart: str, column: str, count_sql: str) -> Callable[[dict], None]:
    def check(w: dict) -> None:
        """Reads no judgment (the benchmark's structure): its total equals the questions'."""
        assert query(w["wh"], f"select sum({column}) from marts.{mart}") == query(
            w["wh"], count_sql
        )

    return check


def check_routes_only(w: dict) -> None:
    """Leaves out: built on the capability evidence (`score_num` / `score_den`, Eq. 2 over
    valid questions, checked above) and on image costs; an absent image adds no evidence to any
    request it is routed on, as identical routes show. No separate recomputation."""
    assert query(
        w["wh"],
        "select count(*) from intermediate.int_router_request_evidence "
        f"where model_id = '{ABSENT_MODEL}' and prompt_id in {tuple(w['absent'])} "
        "and score_den > 0",
    ) == [(0,)]


def check_router_summary(w: dict) -> None:
    """Leaves out: a fixed generator's routed quality is its leaderboard total (checked against
    the raw rows above), the generator lacking images included; and `check_routes_only`."""
    check_routes_only(w)
    fixed = query(
        w["wh"],
        """
        select count(*), count(*) filter (
            where abs(s.en - en.hcq_total) > 1e-9 or abs(s.zh - zh.hcq_total) > 1e-9
                or abs(s.bilingual - bi.hcq_total) > 1e-9)
        from marts.agg_router_summary as s
        inner join marts.fct_hcq_leaderboard as en
            on s.router = 'fixed:' || en.model_id and en.language_scope = 'en'
        inner join marts.fct_hcq_leaderboard as zh
            on s.router = 'fixed:' || zh.model_id and zh.language_scope = 'zh'
        inner join marts.fct_hcq_leaderboard as bi
            on s.router = 'fixed:' || bi.model_id and bi.language_scope = 'bilingual'
        """,
    )
    assert fixed == [(len(models_of(w["rows"])), 0)]


def prompts_with_answered_pairs(w: dict, model: str) -> dict[tuple[str, str], set[str]]:
    """(language, context) -> the model's prompts with at least one METHOD 9 pair of that
    context whose two endpoints both have an answer."""
    y, lang = answers(w["rows"], OFFICIAL), language_of(w["rows"])
    parents = {(q["prompt_id"], q["question_id"]): q["parents"] for q in w["rows"]["questions"]}
    component = {
        (p, q): c
        for m, p, q, c in query(
            w["wh"],
            "select model_id, prompt_id, question_id, component_id from marts.fct_question_records",
        )
        if m == model
    }

    def ancestors(p: str, q: str) -> set[str]:
        return {a for parent in parents[p, q] for a in {parent, *ancestors(p, parent)}}

    out = defaultdict(set)
    answered = [(p, q) for (p, q) in parents if (model, p, q) in y]
    for p, q in answered:
        for p2, q2 in answered:
            if p2 != p or q2 <= q:
                continue
            if q in parents[p, q2] or q2 in parents[p, q]:
                out[lang[p], "edge"].add(p)
            if component[p, q] != component[p, q2]:
                out[lang[p], "disc"].add(p)
            elif q not in ancestors(p, q2) and q2 not in ancestors(p, q):
                out[lang[p], "nonanc"].add(p)
    return out


def check_coupling(w: dict) -> None:
    """Leaves out (METHOD 9: a pair with a missing endpoint is dropped): the generator lacking
    images has a Delta on no more prompts than those with a pair of the context whose endpoints
    both have an answer (its missing images' prompts have none)."""
    possible = prompts_with_answered_pairs(w, ABSENT_MODEL)
    rows = query(
        w["wh"],
        "select language, context, n_prompts from marts.fct_coupling "
        f"where model_id = '{ABSENT_MODEL}'",
    )
    assert rows
    for language, context, n_prompts in rows:
        assert 0 < n_prompts <= len(possible[language, context]), (language, context)
        assert not possible[language, context] & w["absent"]


def check_coupling_contrast(w: dict) -> None:
    """Leaves out (METHOD 9): Gamma averages the prompts with both contexts, so the generator
    lacking images has it on no more prompts than have answered pairs of both."""
    possible = prompts_with_answered_pairs(w, ABSENT_MODEL)
    rows = query(
        w["wh"],
        "select language, contrast, n_prompts from marts.fct_coupling_contrast "
        f"where model_id = '{ABSENT_MODEL}'",
    )
    assert rows
    for language, contrast, n_prompts in rows:
        context = contrast.removesuffix("_vs_disc")
        both = possible[language, context] & possible[language, "disc"]
        assert 0 < n_prompts <= len(both), (language, contrast)


def check_subset_validation(w: dict) -> None:
    """Leaves out (METHOD 16): only fully evaluated generators are held out, so the generator
    lacking images is no case; every row has (fully evaluated generators) x seeds cases (the
    project's `subset_validation_seeds`: 2)."""
    n_full = len(models_of(w["rows"])) - 1
    cases = query(w["wh"], "select distinct n_cases from marts.agg_subset_validation")
    assert cases == [(2 * n_full,)]


def check_release_scores(w: dict) -> None:
    """Reports missing (`n_missing`, out of both of a release's totals): this world has no
    release-sourced prompt, so the mart is empty here and the routes agreeing is all that is
    checked; tests/marts/test_release_scores.py holds a null answer and an absent image to it."""
    assert query(w["wh"], "select count(*) from marts.fct_release_scores") == [(0,)]
    (column,) = query(
        w["wh"],
        "select count(*) from information_schema.columns where table_schema = 'marts' "
        "and table_name = 'fct_release_scores' and column_name = 'n_missing'",
    )
    assert column == (1,)


def check_nothing_judged(w: dict) -> None:
    """Reads no judgment: identical routes are the whole check."""


N_QUESTIONS = "select count(*) from raw.questions"


def check_aggregation_robustness(w: dict) -> None:
    """Leaves out (Eq. 9): n_pt counts valid questions, so a prompt of a missing image is not a
    prompt of the model's; the full-scale ratio per capability is the mean over models of
    mean_p(n_pt) * mean_p(1/n_pt) over the prompts with a valid question, from the raw rows."""
    v, lang, cap = validity(w["rows"], OFFICIAL), language_of(w["rows"]), capability_of(w["rows"])
    n_pt = defaultdict(lambda: defaultdict(int))
    for (m, p, q), is_valid in v.items():
        if is_valid:
            n_pt[lang[p], cap[p, q], m][p] += 1
    models = models_of(w["rows"])
    rows = query(
        w["wh"],
        "select language, capability, variance_ratio, n_prompts "
        "from marts.fct_aggregation_robustness where scale = 'full' and capability <> '__total__'",
    )
    assert rows
    for language, capability, ratio, n_prompts in rows:
        counts = [list(n_pt[language, capability, m].values()) for m in models]
        counts = [c for c in counts if c]
        want = [sum(c) / len(c) * sum(1 / n for n in c) / len(c) for c in counts]
        assert close(ratio, sum(want) / len(want)), (language, capability)
        assert close(n_prompts, sum(len(c) for c in counts) / len(counts))


# MART -> (what it does with a missing judgment, the check). "leaves out": equal to a computation
# that drops the missing records; "reports missing": a count or NULL says they are missing.
MARTS: dict[str, tuple[str, Callable[[dict], None]]] = {
    "fct_question_records": ("reports missing", check_question_records),
    "fct_capability_scores": ("leaves out", check_capability_scores),
    "fct_hcq_leaderboard": ("leaves out", check_leaderboard),
    "fct_masking_effect": ("reports missing", check_masking_effect),
    "fct_hcq_leaderboard_by_judge": ("leaves out", check_leaderboard_by_judge),
    "fct_capability_deficits": (
        "leaves out",
        check_same_scores_as_capability_scores("fct_capability_deficits"),
    ),
    "fct_router_profiles": (
        "leaves out",
        check_same_scores_as_capability_scores("fct_router_profiles"),
    ),
    "fct_rank_reliability": ("leaves out", check_rank_reliability),
    "fct_pairwise_reliability": ("leaves out", check_pairwise_reliability),
    "fct_component_exactness": ("reports missing", check_component_exactness),
    "agg_exactness_by_tag_count": ("leaves out", check_exactness_by_tag_count),
    "fct_composition_fingerprints": ("leaves out", check_fingerprints),
    "fct_root_controls": ("leaves out", check_root_controls),
    "fct_judge_agreement": ("leaves out", check_judge_agreement),
    "fct_human_agreement": ("leaves out", check_human_agreement),
    "fct_failure_examples": ("leaves out", check_failure_examples),
    "fct_subset_estimates": ("reports missing", check_subset_estimates),
    "agg_dsg_atlas": (
        "leaves out",
        check_structure_only("agg_dsg_atlas", "n_questions", N_QUESTIONS),
    ),
    "agg_tag_set_frequencies": ("leaves out", check_nothing_judged),
    "fct_conversion_report": ("leaves out", check_nothing_judged),
    "fct_router_decisions": ("leaves out", check_routes_only),
    "fct_router_paired": ("leaves out", check_routes_only),
    "agg_router_summary": ("leaves out", check_router_summary),
    "agg_router_frontier": ("leaves out", check_routes_only),
    "fct_coupling": ("leaves out", check_coupling),
    "fct_coupling_contrast": ("leaves out", check_coupling_contrast),
    "fct_aggregation_robustness": ("leaves out", check_aggregation_robustness),
    "agg_subset_validation": ("leaves out", check_subset_validation),
    "fct_release_scores": ("reports missing", check_release_scores),
    "fct_router_excluded_generators": ("leaves out", check_nothing_judged),
    # questions' labels only (rule vs model attribution)
    "fct_attribution_agreement": ("leaves out", check_nothing_judged),
}


def built_marts(warehouse: Path) -> set[str]:
    return {
        name
        for (name,) in query(
            warehouse,
            "select table_name from information_schema.tables where table_schema = 'marts'",
        )
    }


def test_every_mart_is_named(world):
    """Guards against a new mart nobody held to METHOD 1: each one the build makes must say
    whether it leaves missing judgments out or reports them, with its check."""
    unnamed = built_marts(world["wh"]) - MARTS.keys()
    assert not unnamed, f"add to MARTS, with its check: {sorted(unnamed)}"


def sorted_rows(warehouse: Path, mart: str) -> list[tuple]:
    rows = query(warehouse, f"select * from marts.{mart}")
    return sorted(rows, key=lambda r: tuple((x is None, str(x)) for x in r))


def same_value(a, b) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return (math.isnan(a) and math.isnan(b)) or math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)
    return a == b


def test_both_routes_give_identical_marts(world):
    """Guards against a mart that tells a null answer from an absent row (METHOD 1: both are a
    missing judgment), e.g. coverage read from judgment rows, or `coalesce(answer, 0)` over the
    rows that exist: every mart equal, row for row, under the two routes."""
    marts = built_marts(world["wh"])
    assert marts == built_marts(world["null_wh"])
    for mart in sorted(marts):
        a, b = sorted_rows(world["wh"], mart), sorted_rows(world["null_wh"], mart)
        assert len(a) == len(b), mart
        for row_a, row_b in zip(a, b, strict=True):
            assert all(map(same_value, row_a, row_b)), (mart, row_a, row_b)


@pytest.mark.parametrize("mart", sorted(MARTS))
def test_missing_is_never_a_failure(world, mart):
    """Guards against a missing judgment counted as "no" (METHOD 6's unmasked total once did):
    the mart's own check, `MARTS[mart]`, against the raw rows."""
    if mart not in built_marts(world["wh"]):
        pytest.skip(f"{mart} is not built in this checkout")
    _, check = MARTS[mart]
    check(world)
