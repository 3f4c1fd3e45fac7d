"""bench.oneig_atlas (`make release-figures`, OneIG-Bench) on a hand-written two-prompt bank in
the converter's layout (no release data), every figure worked out by hand.

English prompt, 7 questions: q1 "Is there a dog?" (animals) and q2 "Is there a blorp?" (an
unlisted noun: man_made) are roots; q3 "Is the dog on the blorp?" (spatial) has parents q1, q2;
q4 "Is the dog brown?" (color) has q1; q5 "Is the scene cheerful?" (emotion_atmosphere) has q4;
q6 "Are there three birds?" (counts) and q7 "Can the vase whistle?" (no rule: state) are lone
roots.
Components {q1..q5} (5 tags), {q6}, {q7}; 4 roots; depth 2 (q1 -> q4 -> q5).
Chinese prompt, 3 questions: q1 有猫吗？ (animals) -> q2 猫是黑色的吗？ (color), and q3 the derived
question of the text target 欢迎 (a lone root). Components {q1, q2} (2 tags), {q3}; 2 roots;
depth 1.
"""

from __future__ import annotations

from collections import Counter

import duckdb
import pytest

from bench.oneig_atlas import (
    GraphCounts,
    atlas_rows,
    build_atlas,
    built_counts,
    check_coverage,
    coverage_rows,
    figure_table,
    graph_counts,
    load_bank,
    mapping_coverage,
    oneig_section,
    read_bank,
    report_counts,
    source_language,
)
from bench.release_figures import figures_text, main, sections_of
from ingestion.bundle.format import write_bundle
from ingestion.bundle.load import default_capabilities
from ingestion.sources.oneig_questions import read_rules

CONCEPT = "oneig-object-900"
PROMPTS = [
    {"prompt_id": f"{CONCEPT}-en", "concept_id": CONCEPT, "language": "en",
     "source": "oneig/General_Object", "text": "A brown dog on a blorp, three birds, a vase."},
    {"prompt_id": f"{CONCEPT}-zh", "concept_id": CONCEPT, "language": "zh",
     "source": "oneig/General_Object", "text": "一只黑猫，招牌写着“欢迎”。"},
]  # fmt: skip


def question(prompt, qid, text, capability, parents=(), entity=None, target=None):
    return {
        "prompt_id": f"{CONCEPT}-{prompt}",
        "question_id": qid,
        "text": text,
        "capability": capability,
        "parents": list(parents),
        "entity": entity,
        "text_target": target,
    }


QUESTIONS = [
    question("en", "q1", "Is there a dog?", "animals", entity="dog"),
    question("en", "q2", "Is there a blorp?", "man_made", entity="blorp"),
    question("en", "q3", "Is the dog on the blorp?", "spatial", ["q1", "q2"]),
    question("en", "q4", "Is the dog brown?", "color", ["q1"]),
    question("en", "q5", "Is the scene cheerful?", "emotion_atmosphere", ["q4"]),
    question("en", "q6", "Are there three birds?", "quantification_comparison"),
    question("en", "q7", "Can the vase whistle?", "state"),
    question("zh", "q1", "有猫吗？", "animals", entity="猫"),
    question("zh", "q2", "猫是黑色的吗？", "color", ["q1"]),
    question("zh", "q3", "图中是否有文字“欢迎”？", "text_rendering", target="欢迎"),
]
QD = "scripts/alignment/Q_D"
REPORT = [
    {"source_file": f"{QD}/object.json", "line": 3, "dirty_class": "entity_noun_unlisted",
     "action": "repaired", "reason": f"{CONCEPT}-en/q2: noun 'blorp' is in no noun list"},
    {"source_file": f"{QD}/object.json", "line": 3, "dirty_class": "capability_unmapped",
     "action": "repaired", "reason": f"{CONCEPT}-en/q7: no rule maps it"},
    {"source_file": "scripts/text/text_content_zh.csv", "line": 2,
     "dirty_class": "derived_text_question", "action": "repaired",
     "reason": f"{CONCEPT}-zh/q3: a question for the text target '欢迎'"},
]  # fmt: skip
HAND = {
    "en": GraphCounts(1, 7, 4, 3, 1, 1, Counter({2: 1})),
    "zh": GraphCounts(1, 3, 2, 2, 1, 1, Counter({1: 1})),
}


@pytest.fixture(scope="module")
def rules():
    found, problems = read_rules(default_capabilities())
    assert problems == []
    return found


def test_graph_counts_by_hand():
    assert graph_counts(PROMPTS, QUESTIONS) == HAND


def test_a_prompt_of_lone_roots_has_depth_zero():
    lone = [question("en", f"q{i}", "Is there a dog?", c) for i, c in ((1, "animals"), (2, "x"))]
    (counts,) = graph_counts(PROMPTS[:1], lone).values()
    assert (counts.components, counts.multi_tag_components, counts.roots) == (2, 0, 2)
    assert counts.prompts_by_depth == Counter({0: 1})


def test_source_language_reads_the_release_file_names():
    chinese = ["OneIG-Bench-ZH.csv", f"{QD}/anime_zh.json", "scripts/text/text_content_zh.csv"]
    english = ["OneIG-Bench.csv", f"{QD}/anime.json", "scripts/text/text_content.csv"]
    assert [source_language(f) for f in chinese] == ["zh"] * 3
    assert [source_language(f) for f in english] == ["en"] * 3


def test_mapping_coverage_names_the_rule_of_each_question(rules):
    coverage = mapping_coverage(PROMPTS, QUESTIONS, rules)
    assert coverage == {
        "en": Counter(
            entity_noun=1,
            entity_noun_unlisted=1,
            predicate_place=1,
            predicate_color=1,
            predicate_mood=1,
            existence_count=1,
            capability_unmapped=1,
        ),
        "zh": Counter(entity_noun=1, predicate_color=1, derived_text_question=1),
    }
    assert "as many fallbacks" in check_coverage(coverage, report_counts(REPORT))
    assert coverage_rows(coverage, ("en", "zh")) == [
        ("questions of the release (Q_D)", 7, 2),
        ("derived text questions (text targets)", 0, 1),
        ("quoted text (`text_rendering`)", 0, 0),
        ("existence that counts (`quantification_comparison`)", 1, 0),
        ("existence, listed noun (its capability)", 1, 1),
        ("the predicate (`ingestion/sources/attribution.py`)", 3, 1),
        ("cue words of the whole question (`seeds/oneig_cue_words.csv`)", 0, 0),
        ("**mapped by a rule** (share of the release's questions)", "5 (71.4 %)", "2 (100.0 %)"),
        ("fallback: `entity_noun_unlisted` (`man_made`)", 1, 0),
        ("fallback: `capability_unmapped` (`state`)", 1, 0),
        ("default: the category's capability (Multilingualism)", 0, 0),
    ]


def test_a_capability_the_rules_do_not_give_or_a_miscounted_report_stops(rules):
    wrong = [dict(QUESTIONS[3], capability="texture"), *QUESTIONS[4:]]
    with pytest.raises(
        ValueError, match="q4: re-mapped color by predicate_color, the bank has texture"
    ):
        mapping_coverage(PROMPTS, wrong, rules)
    coverage = mapping_coverage(PROMPTS, QUESTIONS, rules)
    with pytest.raises(SystemExit, match="capability_unmapped"):
        check_coverage(coverage, report_counts(REPORT[:1] + REPORT[2:]))


def test_figure_table_formats_counts_and_means():
    assert figure_table(["", "en"], [("questions", 11804), ("mean", 3.9083), ("share", "x")]) == (
        "|  | en |\n| --- | --- |\n| questions | 11,804 |\n| mean | 3.91 |\n| share | x |"
    )


def test_sections_are_kept_byte_for_byte_and_replaced_by_release():
    text = (
        "# Figures on published releases (`make release-figures`)\n\n"
        "## TIIF-Bench (testmini)\n\n```\nx\n```\n\n### Official judge A\n\n| a |\n\n"
        "## OneIG-Bench (old)\n\nold\n"
    )
    sections = sections_of(text)
    assert list(sections) == ["tiif", "oneig"]
    assert figures_text(sections) == text
    sections["oneig"] = "## OneIG-Bench (new)\n\nnew\n"
    assert figures_text(sections) == text.replace("(old)\n\nold", "(new)\n\nnew")
    assert figures_text({"oneig": sections["oneig"]}).endswith(
        "`)\n\n## OneIG-Bench (new)\n\nnew\n"
    )


def test_a_release_the_folder_lacks_or_only_leaves_out_is_skipped(tmp_path, capsys):
    out = tmp_path / "figures.md"
    out.write_text("# Figures\n\n## OneIG-Bench (kept)\n\nold\n", encoding="utf-8")
    (tmp_path / "oneig").mkdir()
    assert main(["--releases", str(tmp_path), "--only", "tiif", f"--out={out}"]) == 2
    said = capsys.readouterr().err.splitlines()
    assert said[0] == f"skipped TIIF-Bench: {tmp_path / 'tiif'} is not a folder"
    assert said[1] == (f"skipped OneIG-Bench: not asked for (--only); its section of {out} is kept")
    assert said[2] == f"no release to do under {tmp_path}: nothing written"
    assert out.read_text(encoding="utf-8").endswith("(kept)\n\nold\n")


@pytest.mark.dbt
def test_the_marts_built_from_the_bank_give_the_hand_atlas(tmp_path, rules):
    bank = tmp_path / "bank"
    write_bundle(bank, {"prompts": PROMPTS, "questions": QUESTIONS, "conversion_report": REPORT})
    tables = read_bank(bank)
    assert [q["question_order"] for q in tables["questions"].to_pylist()[:3]] == [1, 2, 3]
    warehouse = tmp_path / "oneig.duckdb"
    load_bank(bank, tables, warehouse)
    build_atlas(warehouse, tmp_path)
    coverage = mapping_coverage(PROMPTS, QUESTIONS, rules)
    with duckdb.connect(str(warehouse), read_only=True) as con:
        assert built_counts(con) == HAND
        rows = {label: figures for label, *figures in atlas_rows(con, ("en", "zh"))}
        section = oneig_section(con, "summary", report_counts(REPORT), coverage, ["c1", "c2"])
    assert rows["components per prompt (mean)"] == [3.0, 2.0]
    assert rows["questions per component (mean)"] == pytest.approx([7 / 3, 3 / 2])
    assert rows["largest component (questions)"] == [5, 2]
    assert rows["distinct tags per component (mean)"] == pytest.approx([7 / 3, 3 / 2])
    assert rows["most distinct tags in a component"] == [5, 2]
    assert rows["depth of a prompt's graph (mean; longest parent chain)"] == [2.0, 1.0]
    assert rows["components with 2+ distinct tags"] == [1, 1]
    assert section.startswith("## OneIG-Bench (questions only: no answers in the release)\n")
    # questions at depth d and prompts whose deepest question is there, English then Chinese
    assert table_rows(section, "| depth |") == [
        "| 0 | 4 | 0 | 2 | 0 |",
        "| 1 | 2 | 0 | 1 | 1 |",
        "| 2 | 1 | 1 | 0 | 0 |",
    ]
    # components by distinct tags: English 1, 1 and 5; Chinese 1 and 2
    assert table_rows(section, "| distinct tags in a component |") == [
        "| 1 | 2 | 1 |",
        "| 2 | 0 | 1 |",
        "| 5 | 1 | 0 |",
    ]


def table_rows(text: str, header: str) -> list[str]:
    """The body rows of the markdown table whose header line starts with `header`."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(header)) + 2
    end = next((i for i in range(start, len(lines)) if not lines[i].startswith("|")), len(lines))
    return lines[start:end]
