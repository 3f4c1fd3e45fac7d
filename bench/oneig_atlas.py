"""OneIG-Bench's figures for `make release-figures` (issue 24): the DSG atlas per language of the
question bank that `qct2i import-release oneig --questions-only` writes, its dirty rows, and how
many questions a capability rule mapped.

The atlas comes from the marts that define it, not from formulas written again here: components,
tag sets and depth are SQL (`int_question_graph`, `int_component_tags`, `agg_dsg_atlas`,
`agg_tag_set_frequencies`; METHOD 7 and 10), with no library function in `method/` to call. A
bank has no judgments, so `qct2i import` refuses it (`judgments` is a required table) and `qct2i
build` would build marts that need them; instead `load_bank` writes the bank's prompts, questions
and conversion report into a fresh warehouse's raw tables as the importer does
(`ingestion.bundle.raw_tables.replace_raw_tables`, every other raw table empty), after the
importer's own checks of each table, and `build_atlas` runs `dbt build` of those marts and what
they read, their data tests included (about 15 s). The atlas is model-independent, so nothing in
it waits for answers.

Two checks stop the script when they fail. `graph_counts` counts the same figures with networkx on
the bank's rows alone (no dbt, no converter code), and they must equal the marts'.
`mapping_coverage` re-maps every question with the converter's own rules
(`ingestion.sources.oneig_questions.map_question`) to say which rule gave its capability; the
capability must be the bank's, and the fallbacks and derived text questions must be as many as
the conversion report's rows of those classes, per language.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import duckdb
import networkx as nx
import pyarrow as pa

from bench.commands import qct2i
from bench.dsg_figures import _table
from ingestion.bundle import BundleError, raw_tables
from ingestion.bundle.format import TABLES
from ingestion.bundle.load import default_capabilities, read_questions_file
from ingestion.bundle.problems import LINE
from ingestion.bundle.read import read_table
from ingestion.sources.oneig_questions import (
    FALLBACK_CAPABILITY,
    FALLBACK_ENTITY,
    LANGUAGES,
    TEXT,
    QuestionRules,
    map_question,
    read_rules,
)
from ingestion.sources.oneig_release import TEXT_QUESTION
from qct2i.dbt_runner import run_dbt

# The atlas marts and everything upstream of them; the capabilities seed for the staging test that
# every question's capability is one. `cautious`: only the data tests whose models are all built.
ATLAS_SELECT = ("capabilities", "+agg_dsg_atlas", "+agg_tag_set_frequencies")
DERIVED = "derived_text_question"  # the conversion report's class, and the rule of such a question
FALLBACKS = ("entity_noun_unlisted", "capability_unmapped")
# Rows of the coverage table: (label, a rule of `map_question`; `cue` for every `cue_<capability>`,
# `predicate` for every rule of `ingestion.sources.attribution`).
RULE_ROWS = (
    ("quoted text (`text_rendering`)", "quoted_text"),
    ("existence that counts (`quantification_comparison`)", "existence_count"),
    ("existence, listed noun (its capability)", "entity_noun"),
    ("the predicate (`ingestion/sources/attribution.py`)", "predicate"),
    ("cue words of the whole question (`seeds/oneig_cue_words.csv`)", "cue"),
)
# A default is no attribution: counted apart from the rules' share (docs/attribution.md)
CATEGORY_DEFAULT = "category"
OWN_RULES = {row[1] for row in RULE_ROWS} | {DERIVED, CATEGORY_DEFAULT, *FALLBACKS}
LANGUAGE_NAMES = {"en": "English", "zh": "Chinese"}


# --------------------------------------------------------------------------------------------------
# The bank into a warehouse, and the atlas built
# --------------------------------------------------------------------------------------------------


def read_bank(bank: Path) -> dict[str, pa.Table]:
    """The bank's prompts, questions (with `question_order`) and conversion report as the
    importer reads them: the questions with every check of that table (`read_questions_file`:
    ids, known capabilities, parents in the prompt, no cycle), the others read and type-checked;
    the build's data tests check the rest (unique prompts, every question's prompt). The script
    stops on any problem."""
    tables = {}
    for name in ("prompts", "conversion_report"):
        read = read_table(bank, TABLES[name])
        if read.problems:
            raise SystemExit(f"{bank}: " + "; ".join(str(p) for p in read.problems))
        tables[name] = read.table.drop_columns([LINE]).cast(TABLES[name].schema)
    try:
        tables["questions"] = read_questions_file(bank / "questions.jsonl")
    except BundleError as error:
        raise SystemExit(str(error)) from error
    return tables


def load_bank(bank: Path, tables: Mapping[str, pa.Table], warehouse: Path) -> None:
    """The raw tables of a new warehouse as `qct2i import` writes them, from a bank: its tables,
    every other raw table (judgments included) empty."""
    rows = {name: spec.schema.empty_table() for name, spec in TABLES.items()} | dict(tables)
    with raw_tables.raw_transaction(warehouse) as con:
        raw_tables.replace_raw_tables(con, bank, rows)


def build_atlas(warehouse: Path, work: Path) -> None:
    """`dbt build` of the atlas marts, what they read, and their data tests (dbt state in
    `work`)."""
    run_dbt(
        "build",
        warehouse,
        select=ATLAS_SELECT,
        target_path=work / "dbt_target_atlas",
        extra=("--quiet", "--indirect-selection", "cautious"),
    )


# --------------------------------------------------------------------------------------------------
# Counted twice: by the marts, and by networkx on the bank's rows
# --------------------------------------------------------------------------------------------------


@dataclass
class GraphCounts:
    """One language's question graphs: what the atlas counts, and each prompt's depth (the
    longest parent chain, in edges; a prompt of lone roots has depth 0)."""

    prompts: int = 0
    questions: int = 0
    roots: int = 0
    components: int = 0
    multi_tag_components: int = 0
    prompts_with_multi_tag_component: int = 0
    prompts_by_depth: Counter = field(default_factory=Counter)


def graph_counts(
    prompts: Iterable[Mapping], questions: Iterable[Mapping]
) -> dict[str, GraphCounts]:
    """Per language, the question graphs counted with networkx from bank rows (prompts:
    `prompt_id`, `language`; questions: `prompt_id`, `question_id`, `capability`, `parents`),
    independently of the marts: a component is a maximal weakly connected set of a prompt's
    questions, its tags the distinct capabilities in it."""
    language, graphs = {}, {}
    for prompt in prompts:
        language[prompt["prompt_id"]] = prompt["language"]
        graphs[prompt["prompt_id"]] = nx.DiGraph()
    for question in questions:
        graph = graphs[question["prompt_id"]]
        graph.add_node(question["question_id"], capability=question["capability"])
        for parent in question["parents"]:
            graph.add_edge(parent, question["question_id"])
    counts = {lang: GraphCounts() for lang in sorted(set(language.values()))}
    for prompt_id, graph in graphs.items():
        c = counts[language[prompt_id]]
        components = list(nx.weakly_connected_components(graph))
        multi = sum(len({graph.nodes[q]["capability"] for q in comp}) >= 2 for comp in components)
        c.prompts += 1
        c.questions += graph.number_of_nodes()
        c.roots += sum(degree == 0 for _, degree in graph.in_degree())
        c.components += len(components)
        c.multi_tag_components += multi
        c.prompts_with_multi_tag_component += multi > 0
        c.prompts_by_depth[nx.dag_longest_path_length(graph)] += 1
    return counts


def built_counts(con: duckdb.DuckDBPyConnection) -> dict[str, GraphCounts]:
    """The same figures read from the built marts."""
    counts = {}
    for lang, *figures in con.execute(
        """
        select atlas.language, n_prompts, n_questions, roots.n_roots, n_components,
               n_multi_tag_components, n_prompts_with_multi_tag_component
        from marts.agg_dsg_atlas as atlas
        join (select language, sum(n_roots) as n_roots from intermediate.int_component_tags
              group by language) as roots on atlas.language = roots.language
        """
    ).fetchall():
        counts[lang] = GraphCounts(*(int(f) for f in figures))
    for lang, depth, n in con.execute(
        """
        select language, depth, count(*) from (
            select language, prompt_id, max(max_depth) as depth
            from intermediate.int_component_tags group by language, prompt_id
        ) group by all
        """
    ).fetchall():
        counts[lang].prompts_by_depth[depth] = n
    return counts


def check_atlas(counted: Mapping[str, GraphCounts], built: Mapping[str, GraphCounts]) -> str:
    if dict(counted) != dict(built):
        raise SystemExit(f"OneIG atlas: networkx counted {counted}, the marts hold {built}")
    return (
        "networkx, on the bank's rows alone, counts the same prompts, questions, roots, "
        "components, multi-tag components and depth of every prompt as the marts"
    )


# --------------------------------------------------------------------------------------------------
# The conversion: dirty rows by language, and which rule mapped each question
# --------------------------------------------------------------------------------------------------


def source_language(source_file: str) -> str:
    """The language of a release file: Chinese for OneIG-Bench-ZH.csv, <stem>_zh.json and
    text_content_zh.csv, else English."""
    return "zh" if re.search(r"[-_]zh$", Path(source_file).stem, re.IGNORECASE) else "en"


def report_counts(report: Iterable[Mapping]) -> Counter:
    """Conversion report rows per (language of their file, class)."""
    return Counter((source_language(r["source_file"]), r["dirty_class"]) for r in report)


def mapping_coverage(
    prompts: Iterable[Mapping], questions: Iterable[Mapping], rules: QuestionRules
) -> dict[str, Counter]:
    """Per language, the questions each capability rule mapped (`map_question`'s rule names,
    `quoted_text` ... `capability_unmapped`), and the derived text questions (a text target's
    question, worded as the converter words it) as `derived_text_question`. The category is the
    prompt's `source` (`oneig/<category>`). Raises ValueError for a question whose re-mapped
    capability is not the bank's."""
    by_id = {p["prompt_id"]: p for p in prompts}
    coverage: dict[str, Counter] = {}
    for q in questions:
        prompt = by_id[q["prompt_id"]]
        lang = prompt["language"]
        target = q["text_target"]
        if target is not None and q["text"] == TEXT_QUESTION[lang].format(target):
            rule, capability = DERIVED, TEXT
        else:
            category = rules.categories[prompt["source"].removeprefix("oneig/")]
            mapped = map_question(q["text"], lang, category, rules)
            rule, capability = mapped.rule, mapped.capability
        if capability != q["capability"]:
            raise ValueError(
                f"{q['prompt_id']}/{q['question_id']}: re-mapped {capability} by {rule}, "
                f"the bank has {q['capability']}"
            )
        coverage.setdefault(lang, Counter())[rule] += 1
    return coverage


def check_coverage(coverage: Mapping[str, Counter], reported: Counter) -> str:
    differing = {
        (lang, cls): (coverage[lang][cls], reported[lang, cls])
        for lang in coverage
        for cls in (*FALLBACKS, DERIVED)
        if coverage[lang][cls] != reported[lang, cls]
    }
    if differing:
        raise SystemExit(f"OneIG: re-mapped and reported counts differ: {differing}")
    return (
        "re-mapping every question with the converter's `map_question` gives the bank's "
        "capability for each, and as many fallbacks and derived text questions per language as "
        "the conversion report has rows"
    )


def _rule_row(rule: str) -> str:
    if rule.startswith("cue_"):
        return "cue"
    return rule if rule in OWN_RULES else "predicate"


def coverage_rows(coverage: Mapping[str, Counter], languages: Sequence[str]) -> list[tuple]:
    """The coverage table's rows: (label, a figure per language). The rule rows and the share
    mapped by a rule are of the release's own (Q_D) questions, the derived ones apart."""
    grouped: dict[str, Counter] = {lang: Counter() for lang in languages}
    for lang in languages:
        for rule, n in coverage[lang].items():
            grouped[lang][_rule_row(rule)] += n
    own = {lang: sum(coverage[lang].values()) - coverage[lang][DERIVED] for lang in languages}
    defaults = (*FALLBACKS, CATEGORY_DEFAULT)
    mapped = {lang: own[lang] - sum(coverage[lang][f] for f in defaults) for lang in languages}
    rows = [
        ("questions of the release (Q_D)", *(own[lang] for lang in languages)),
        ("derived text questions (text targets)", *(coverage[lang][DERIVED] for lang in languages)),
    ]
    rows += [(label, *(grouped[lang][rule] for lang in languages)) for label, rule in RULE_ROWS]
    share = (f"{mapped[lang]:,} ({100 * mapped[lang] / own[lang]:.1f} %)" for lang in languages)
    rows.append(("**mapped by a rule** (share of the release's questions)", *share))
    rows += [
        (f"fallback: `{rule}` (`{capability}`)", *(coverage[lang][rule] for lang in languages))
        for rule, capability in zip(FALLBACKS, (FALLBACK_ENTITY, FALLBACK_CAPABILITY), strict=True)
    ]
    category_default = (coverage[lang][CATEGORY_DEFAULT] for lang in languages)
    rows.append(("default: the category's capability (Multilingualism)", *category_default))
    return rows


def figure_table(header: Sequence[str], rows: Iterable[Sequence]) -> str:
    """A markdown table; integers with thousands separators, floats to 2 decimals."""

    def cell(value) -> str:
        if isinstance(value, bool) or value is None:
            return "" if value is None else str(value)
        if isinstance(value, int):
            return f"{value:,}"
        if isinstance(value, float):
            return f"{value:,.2f}"
        return str(value)

    lines = ["| " + " | ".join(header) + " |", "|" + " --- |" * len(header)]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)


# --------------------------------------------------------------------------------------------------
# The section
# --------------------------------------------------------------------------------------------------


def atlas_rows(con: duckdb.DuckDBPyConnection, languages: Sequence[str]) -> list[tuple]:
    atlas = {
        row[0]: dict(zip([d[0] for d in con.description], row, strict=True))
        for row in con.execute("select * from marts.agg_dsg_atlas").fetchall()
    }
    extra = {
        row[0]: dict(zip([d[0] for d in con.description], row, strict=True))
        for row in con.execute(
            """
            with per_prompt as (
                select language, prompt_id, max(max_depth) as depth
                from intermediate.int_component_tags group by all
            ), depth as (
                select language, avg(depth) as mean_depth, max(depth) as max_depth
                from per_prompt group by all
            )
            select c.language, sum(n_roots) as n_roots, avg(n_questions) as mean_size,
                   max(n_questions) as max_size, avg(n_tags) as mean_tags,
                   max(n_tags) as max_tags, any_value(depth.mean_depth) as mean_depth,
                   any_value(depth.max_depth) as max_depth
            from intermediate.int_component_tags as c join depth using (language)
            group by all
            """
        ).fetchall()
    }

    def row(label: str, source: dict, key: str, kind=int) -> tuple:
        return (label, *(kind(source[lang][key]) for lang in languages))

    return [
        row("prompts", atlas, "n_prompts"),
        row("concepts", atlas, "n_concepts"),
        row("questions", atlas, "n_questions"),
        row("roots (questions without parents)", extra, "n_roots"),
        row("components (maximal weakly connected)", atlas, "n_components"),
        row("components per prompt (mean)", atlas, "mean_components_per_prompt", float),
        row("questions per component (mean)", extra, "mean_size", float),
        row("largest component (questions)", extra, "max_size"),
        row("distinct tags per component (mean)", extra, "mean_tags", float),
        row("most distinct tags in a component", extra, "max_tags"),
        row("components with 2+ distinct tags", atlas, "n_multi_tag_components"),
        row("prompts with a component of 2+ tags", atlas, "n_prompts_with_multi_tag_component"),
        row("depth of a prompt's graph (mean; longest parent chain)", extra, "mean_depth", float),
        row("deepest prompt graph (edges)", extra, "max_depth"),
    ]


def _pivot(con, sql: str, languages: Sequence[str]) -> list[tuple]:
    """`sql` returns (key, language, value) rows: one row per key, a value per language."""
    table: dict[object, dict[str, int]] = {}
    for key, lang, value in con.execute(sql).fetchall():
        table.setdefault(key, {})[lang] = value
    return [(key, *(table[key].get(lang, 0) for lang in languages)) for key in table]


def oneig_section(
    con: duckdb.DuckDBPyConnection,
    summary: str,
    reported: Counter,
    coverage: Mapping[str, Counter],
    checks: Sequence[str],
) -> str:
    languages = tuple(lang for lang in LANGUAGES if lang in coverage)
    names = [LANGUAGE_NAMES.get(lang, lang) for lang in languages]
    classes = sorted({cls for _, cls in reported}, key=lambda c: (c == DERIVED, c))
    dirty = figure_table(
        ["class (rows, by the file's language)", *names],
        [(f"`{cls}`", *(reported[lang, cls] for lang in languages)) for cls in classes],
    )
    tags = figure_table(
        ["distinct tags in a component", *(f"{n} components" for n in names)],
        _pivot(
            con,
            "select n_tags_bucket, language, count(*) from intermediate.int_component_tags "
            "group by all order by min(n_tags), language",
            languages,
        ),
    )
    depth = figure_table(
        ["depth", *(f"{n} {what}" for n in names for what in ("questions", "prompts"))],
        _depth_rows(con, languages),
    )
    categories = _table(
        con,
        """
        with per_prompt as (
            select c.language, p.source, c.prompt_id, sum(c.n_questions) as n_questions,
                   count(*) as n_components, count(*) filter (where c.n_tags >= 2) as n_multi,
                   max(c.max_depth) as depth
            from intermediate.int_component_tags as c
            join staging.stg_prompts as p using (prompt_id)
            group by all
        )
        select language, source, count(*) as n_prompts, sum(n_questions) as n_questions,
               sum(n_components) as n_components, sum(n_multi) as n_multi_tag_components,
               count(*) filter (where n_multi > 0) as n_prompts_with_multi_tag_component,
               avg(depth) as mean_depth, max(depth) as max_depth
        from per_prompt group by language, source order by language <> 'en', language, source
        """,
    )
    tag_sets = _table(
        con,
        """
        select language, n_tags, frequency_rank as rank, tag_set, n_components, n_prompts
        from marts.agg_tag_set_frequencies
        where n_tags between 2 and 5 and frequency_rank <= 3
        order by language <> 'en', language, n_tags, frequency_rank
        """,
    )
    capabilities = figure_table(
        ["capability", *(f"{n} questions" for n in names)],
        _pivot(
            con,
            """
            select capability, language, count(*) from intermediate.int_question_graph
            join staging.stg_prompts using (prompt_id)
            group by capability, language
            order by sum(count(*)) over (partition by capability) desc, capability, language
            """,
            languages,
        ),
    )
    return "\n".join(
        [
            "## OneIG-Bench (questions only: no answers in the release)\n",
            "`qct2i import-release oneig --root DIR/oneig --questions-only --out WORK/bank` "
            "(the bank: prompts.jsonl, questions.jsonl, conversion_report.jsonl):\n",
            f"```\n{summary}\n```\n",
            "The conversion report by the language of the file each row is in "
            "(`derived_text_question` is a rule applied, not dirt):\n",
            dirty + "\n",
            "### The DSG atlas per language (METHOD 7)\n",
            "The bank's tables in a fresh warehouse's raw tables (a bank has no judgments, so "
            "`qct2i import` refuses it), then `dbt build --select "
            + " ".join(ATLAS_SELECT)
            + "` (`marts.agg_dsg_atlas`, `marts.agg_tag_set_frequencies`, "
            "`intermediate.int_component_tags`, `int_question_graph`; their tests pass). "
            f"Check: {checks[0]}.\n",
            figure_table(["", *names], atlas_rows(con, languages)) + "\n",
            "Components by the number of distinct capabilities (tags) in them (Figure 2's "
            "buckets):\n",
            tags + "\n",
            "Depth (`int_question_graph.depth`: the longest parent chain above a question, in "
            "edges; a root has depth 0): questions at each depth, and prompts whose deepest "
            "question is there:\n",
            depth + "\n",
            "The same by category (the prompt's `source`):\n",
            categories + "\n",
            "The three most frequent full component tag sets of each size 2 to 5 "
            "(`marts.agg_tag_set_frequencies`, METHOD 10):\n",
            tag_sets + "\n",
            "Questions per capability. The fallbacks sit in two of them: "
            + _fallback_note(coverage, languages)
            + ", so tag sets with `state` or `man_made` count some questions no rule read:\n",
            capabilities + "\n",
            "### Capability mapping coverage\n",
            "Which of the converter's rules gave each question its capability "
            f'(`ingestion/sources/oneig_release.py`, "Capabilities"). Check: {checks[1]}.\n',
            figure_table(["questions", *names], coverage_rows(coverage, languages)) + "\n",
        ]
    )


def _fallback_note(coverage: Mapping[str, Counter], languages: Sequence[str]) -> str:
    """Where the fallbacks went: `state` holds ... `capability_unmapped` questions; ..."""
    parts = []
    for rule, capability in ((FALLBACKS[1], FALLBACK_CAPABILITY), (FALLBACKS[0], FALLBACK_ENTITY)):
        held = " and ".join(
            f"{coverage[lang][rule]:,} {LANGUAGE_NAMES.get(lang, lang)}" for lang in languages
        )
        parts.append(f"`{capability}` holds {held} `{rule}` questions")
    return "; ".join(parts)


def _depth_rows(con, languages: Sequence[str]) -> list[tuple]:
    questions = dict(
        ((d, lang), n)
        for d, lang, n in con.execute(
            "select depth, language, count(*) from intermediate.int_question_graph "
            "join staging.stg_prompts using (prompt_id) group by all"
        ).fetchall()
    )
    prompts = dict(
        ((d, lang), n)
        for d, lang, n in con.execute(
            "select depth, language, count(*) from (select language, prompt_id, "
            "max(max_depth) as depth from intermediate.int_component_tags group by all) "
            "group by all"
        ).fetchall()
    )
    depths = sorted({d for d, _ in questions})
    return [
        (d, *(f.get((d, lang), 0) for lang in languages for f in (questions, prompts)))
        for d in depths
    ]


def oneig_figures(root: Path, work: Path) -> str:
    """The `## OneIG-Bench` section of bench/release_figures.md from the release folder `root`."""
    bank, warehouse = work / "oneig-bank", work / "oneig.duckdb"
    converted = qct2i(
        ["import-release", "oneig", f"--root={root}", "--questions-only", f"--out={bank}"],
        warehouse,
    )
    summary = "\n".join(
        line
        for line in converted.splitlines()
        if not line.startswith(("  e.g.", "bundle", "question bank"))
    )
    tables = read_bank(bank)
    load_bank(bank, tables, warehouse)
    build_atlas(warehouse, work)
    prompts, questions = tables["prompts"].to_pylist(), tables["questions"].to_pylist()
    reported = report_counts(tables["conversion_report"].to_pylist())
    rules, problems = read_rules(default_capabilities())
    if problems:
        raise SystemExit("the OneIG seeds: " + "; ".join(str(p) for p in problems))
    try:
        coverage = mapping_coverage(prompts, questions, rules)
    except ValueError as error:
        raise SystemExit(f"OneIG: {error}") from error
    checks = [check_coverage(coverage, reported)]
    with duckdb.connect(str(warehouse), read_only=True) as con:
        checks.insert(0, check_atlas(graph_counts(prompts, questions), built_counts(con)))
        return oneig_section(con, summary, reported, coverage, checks)
