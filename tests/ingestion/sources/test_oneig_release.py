"""The OneIG-Bench question bank (`ingestion.sources.oneig_release`) on the hand release of
tests/worlds/oneig.py (our own invented prompts and questions, never the release's): prompts and
concepts in both languages, questions with their repaired parents, capabilities by rule, text
targets, each dirty class with its file, line and reason, strict mode; then `qct2i
import-release oneig --questions-only` and the refusals, in-process."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from ingestion.bundle import read_questions_file
from ingestion.bundle.load import default_capabilities
from ingestion.sources.oneig_questions import en_existence, read_rules, zh_existence
from ingestion.sources.oneig_release import (
    APPLIED_CLASSES,
    DIRTY_CLASSES,
    OneigReleaseError,
    convert_oneig_questions,
)
from ingestion.sources.release_common import REPORT_FILE
from ingestion.store.warehouse import Warehouse
from tests.helpers import run_main
from tests.worlds.oneig import PROMPTS_ZH, QD, TEXT, write_oneig_fixture


@pytest.fixture
def release(tmp_path) -> Path:
    return write_oneig_fixture(tmp_path / "oneig")


def _read(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


# -- the question bank ---------------------------------------------------------------------------


def test_prompts_and_concepts_of_both_languages(release, tmp_path):
    conversion = convert_oneig_questions(release, tmp_path / "bank")
    assert sorted(p.name for p in (tmp_path / "bank").iterdir()) == [
        REPORT_FILE,
        "prompts.jsonl",
        "questions.jsonl",
    ]
    prompts = _read(tmp_path / "bank" / "prompts.jsonl")
    assert [(p["prompt_id"], p["concept_id"], p["language"], p["source"]) for p in prompts] == [
        ("oneig-anime-000-en", "oneig-anime-000", "en", "oneig/Anime_Stylization"),
        ("oneig-human-000-en", "oneig-human-000", "en", "oneig/Portrait"),
        ("oneig-object-000-en", "oneig-object-000", "en", "oneig/General_Object"),
        ("oneig-text-000-en", "oneig-text-000", "en", "oneig/Text_Rendering"),
        ("oneig-anime-000-zh", "oneig-anime-000", "zh", "oneig/Anime_Stylization"),
        ("oneig-human-000-zh", "oneig-human-000", "zh", "oneig/Portrait"),
        (
            "oneig-multilingualism-000-zh",
            "oneig-multilingualism-000",
            "zh",
            "oneig/Multilingualism",
        ),
    ]
    assert prompts[0]["text"] == "1girl, cat ears, red dress"
    assert prompts[5]["text"] == "一位微笑的厨师拿着木勺。"  # the first Portrait 000 (en) won
    assert conversion.counts == {"prompts": 7, "questions": 26, "conversion_report": 23}
    assert conversion.out_of_scope == 1  # Knowledge_Reasoning 000
    assert conversion.notes == [
        "en: 4 prompts, 17 questions (10 roots, 7 with parents), 3 text targets",
        "zh: 3 prompts, 9 questions (7 roots, 2 with parents), 0 text targets",
        "concepts: 5, 2 shared by English and Chinese",
        "capabilities: 24 by a rule, 2 by a default (7.7 %)",
    ]
    # what the GPU path reads is a valid questions table (parents inside the prompt, acyclic)
    assert read_questions_file(tmp_path / "bank" / "questions.jsonl").num_rows == 26


def test_questions_parents_capabilities_and_text_targets_worked_by_hand(release, tmp_path):
    convert_oneig_questions(release, tmp_path / "bank")
    questions = {
        (q["prompt_id"].removeprefix("oneig-"), q["question_id"]): q
        for q in _read(tmp_path / "bank" / "questions.jsonl")
    }
    # (capability, parents, entity, text target), by the rules of oneig_release's docstring
    expected = {
        ("anime-000-en", "q1"): ("humans", [], "girl", None),  # existence, listed noun
        ("anime-000-en", "q2"): ("part_whole", ["q1"], None, None),  # possession form
        ("anime-000-en", "q3"): ("color", ["q4"], None, None),
        ("anime-000-en", "q4"): ("man_made", [], "dress", None),
        ("human-000-en", "q1"): ("humans", [], "chef", None),
        # a person's expression is her state (docs/attribution.md, 2); [1, 1]: once
        ("human-000-en", "q2"): ("state", ["q1"], None, None),
        ("human-000-en", "q3"): ("interaction", ["q1", "q5"], None, None),  # "five" dropped
        ("human-000-en", "q4"): ("material", ["q5"], None, None),  # 4 and 9 dropped
        ("human-000-en", "q5"): ("man_made", [], "spoon", None),  # the first q5 won
        # 1 <- 3 kept (child 1 first), 3 <- 1 closed the cycle: q1 is no root, so no entity
        ("object-000-en", "q1"): ("man_made", ["q3"], None, None),
        ("object-000-en", "q2"): ("color", ["q1"], None, None),
        ("object-000-en", "q3"): ("spatial", [], None, None),  # the locative form
        ("object-000-en", "q4"): ("man_made", [], "blorp", None),  # unlisted: the fallback
        ("object-000-en", "q5"): ("state", [], None, None),  # unmapped: the fallback
        ("object-000-en", "q6"): ("text_rendering", [], None, "OPEN"),  # quoted text
        ("text-000-en", "q1"): ("text_rendering", [], None, "OPEN LATE"),  # derived
        ("text-000-en", "q2"): ("text_rendering", [], None, "Since 1990"),
        ("anime-000-zh", "q1"): ("humans", [], "女孩", None),  # 孩, its longest listed suffix
        ("anime-000-zh", "q2"): ("part_whole", ["q1"], None, None),
        ("anime-000-zh", "q3"): ("color", [], None, None),
        ("anime-000-zh", "q4"): ("quantification_comparison", [], None, None),  # 两只: counts
        ("human-000-zh", "q1"): ("humans", [], "厨师", None),  # malformed dependency: roots
        ("human-000-zh", "q2"): ("state", [], None, None),
        ("multilingualism-000-zh", "q1"): ("humans", [], "一家人", None),
        ("multilingualism-000-zh", "q2"): ("spatial", ["q1"], None, None),  # 在门上
        ("multilingualism-000-zh", "q3"): ("scientific_cultural_knowledge", [], None, None),
    }
    got = {
        key: (q["capability"], q["parents"], q["entity"], q["text_target"])
        for key, q in questions.items()
    }
    assert got == expected
    assert questions[("text-000-en", "q1")]["text"] == 'Does the image show the text "OPEN LATE"?'
    assert questions[("human-000-en", "q5")]["text"] == "Is there a spoon?"


def test_every_question_says_where_its_capability_came_from(release, tmp_path):
    """capability_source names the rule, and a fallback as a default (a converter that wrote a
    fallback as `rule:` would hide it from the default share); the summary counts them."""
    conversion = convert_oneig_questions(release, tmp_path / "bank")
    sources = {
        (q["prompt_id"].removeprefix("oneig-"), q["question_id"]): q["capability_source"]
        for q in _read(tmp_path / "bank" / "questions.jsonl")
    }
    assert sources[("anime-000-en", "q1")] == "rule:entity_noun"
    assert sources[("anime-000-en", "q3")] == "rule:predicate_color"
    assert sources[("object-000-en", "q4")] == "default:entity_noun_unlisted"
    assert sources[("object-000-en", "q5")] == "default:unmapped"
    assert sources[("object-000-en", "q6")] == "rule:quoted_text"
    assert sources[("text-000-en", "q1")] == "rule:derived_text_question"
    # 这是传统习俗吗？ read as what the image is (the identity form), a custom
    assert sources[("multilingualism-000-zh", "q3")] == "rule:existence_named"
    # the 26 questions of the table above, 2 of them (q4, q5 of object-000-en) by a default
    assert "capabilities: 24 by a rule, 2 by a default (7.7 %)" in conversion.notes


def test_every_dirty_class_is_reported_with_its_file_line_and_reason(release, tmp_path):
    conversion = convert_oneig_questions(release, tmp_path / "bank")
    anime, human, obj = (f"{QD}/{name}.json" for name in ("anime", "human", "object"))
    reported = Counter((r.file, r.line, r.dirty_class, r.action) for r in conversion.dirty)
    assert reported == Counter(
        {
            ("OneIG-Bench.csv", 10, "duplicate_prompt", "dropped"): 1,
            ("OneIG-Bench.csv", 6, "prompt_without_questions", "dropped"): 1,
            (anime, 3, "question_id_not_a_number", "dropped"): 1,
            (anime, 6, "malformed_entry", "dropped"): 1,
            (anime, 10, "questions_without_prompt", "dropped"): 1,
            (human, 3, "duplicate_question", "dropped"): 1,
            (human, 3, "empty_question", "dropped"): 1,
            (human, 4, "duplicate_parent", "repaired"): 1,
            (human, 4, "parent_in_words", "repaired"): 1,
            (human, 4, "self_loop", "repaired"): 1,
            (human, 4, "missing_parent", "repaired"): 1,
            (human, 4, "dependency_mismatch", "dropped"): 1,
            (obj, 4, "cycle", "repaired"): 1,
            (obj, 3, "entity_noun_unlisted", "repaired"): 1,
            (obj, 3, "capability_unmapped", "repaired"): 1,
            (obj, 4, "dependency_mismatch", "repaired"): 1,
            (obj, 6, "duplicate_prompt", "dropped"): 1,
            (f"{QD}/human_zh.json", 4, "malformed_dependency", "repaired"): 1,
            (f"{TEXT}/text_content.csv", 3, "malformed_text_targets", "dropped"): 1,
            (f"{TEXT}/text_content.csv", 4, "text_without_prompt", "dropped"): 1,
            (f"{TEXT}/text_content_zh.csv", 2, "text_without_prompt", "dropped"): 1,
        }
    )
    assert set(conversion.dirty_counts()) == set(DIRTY_CLASSES)
    reasons = {(r.dirty_class, r.file): r.reason for r in conversion.dirty}
    assert reasons[("self_loop", human)] == (
        "oneig-human-000-en: question 4 lists itself as parent; dropped"
    )
    assert reasons[("missing_parent", human)] == (
        "oneig-human-000-en: parent 9 of question 4 is no question of the prompt; dropped"
    )
    assert reasons[("cycle", obj)] == "oneig-object-000-en: edge 1 -> 3 closes a cycle; dropped"
    assert reasons[("parent_in_words", human)].endswith(
        "parent 'five' of question 3 is not a number; dropped"
    )
    assert "noun 'blorp' is in no noun list" in reasons[("entity_noun_unlisted", obj)]
    assert "'Can the kettle whistle?'; capability state" in reasons[("capability_unmapped", obj)]
    assert reasons[("text_without_prompt", f"{TEXT}/text_content_zh.csv")] == (
        "000: its prompt text differs from OneIG-Bench-ZH.csv:5's; dropped"
    )
    # the rules applied: one row per derived text question, at its text_content line
    assert [(r.file, r.line, r.dirty_class) for r in conversion.applied] == [
        (f"{TEXT}/text_content.csv", 2, "derived_text_question")
    ] * 2
    assert set(conversion.applied_counts()) == set(APPLIED_CLASSES)
    report = _read(tmp_path / "bank" / REPORT_FILE)
    assert Counter(r["dirty_class"] for r in report) == {
        **conversion.dirty_counts(),
        "derived_text_question": 2,
    }
    assert {r["action"] for r in report} == {"repaired", "dropped"}


def test_strict_refuses_with_every_dirty_row_and_writes_nothing(release, tmp_path):
    out = tmp_path / "bank"
    with pytest.raises(OneigReleaseError) as refused:
        convert_oneig_questions(release, out, strict=True)
    assert len(refused.value.problems) == 21  # the dirty rows; derived text questions are rules
    message = str(refused.value)
    assert message.startswith("OneIG-Bench release refused (21 problems):")
    for where in (
        f"{QD}/anime.json:6: malformed_entry",
        f"{QD}/object.json:4: cycle",
        f"{QD}/human_zh.json:4: malformed_dependency",
        f"{TEXT}/text_content.csv:3: malformed_text_targets",
        "OneIG-Bench.csv:10: duplicate_prompt",
    ):
        assert where in message
    assert not out.exists()


def test_what_cannot_be_converted_is_refused_in_either_mode(release, tmp_path):
    (release / "OneIG-Bench-ZH.csv").write_text(
        PROMPTS_ZH + "Cartoons,000,一只猫。,\nPortrait,0 1,一个人。,\n", encoding="utf-8"
    )
    (release / QD / "extra.json").write_text("{}\n", encoding="utf-8")
    (release / QD / "object.json").write_text("[1, 2]\n", encoding="utf-8")
    with pytest.raises(OneigReleaseError) as refused:
        convert_oneig_questions(release, tmp_path / "bank")
    message = str(refused.value)
    assert "OneIG-Bench-ZH.csv:6: category 'Cartoons' is not in seeds/oneig_category_map.csv" in (
        message
    )
    assert "OneIG-Bench-ZH.csv:7: id 'oneig-human-0 1-zh' is not a safe id" in message
    assert (
        f"{QD}/extra.json: no category of seeds/oneig_category_map.csv reads this file" in message
    )
    assert f"{QD}/object.json: cannot be read as a JSON object" in message
    assert not (tmp_path / "bank").exists()
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "x").write_text("", encoding="utf-8")
    with pytest.raises(OneigReleaseError, match="output folder is not empty"):
        convert_oneig_questions(write_oneig_fixture(tmp_path / "again"), tmp_path / "full")


def test_the_seeds_name_only_capabilities_of_the_taxonomy():
    rules, problems = read_rules(default_capabilities())
    assert problems == []
    assert {c.questions for c in rules.categories.values()} == {
        "anime",
        "human",
        "object",
        "multilingualism",
        "text_content",
        "",
    }
    assert rules.nouns["en"]["girl"] == "humans"  # from tiif_entity_nouns
    assert rules.nouns["zh"]["孩"] == "humans" and rules.nouns["zh"]["桌子"] == "man_made"
    assert "红色" in rules.cues["zh"]["color"] and "色" not in rules.cues["zh"]["color"]


@pytest.mark.parametrize(
    ("question", "found"),
    [
        ("Is there a red kite?", (["red", "kite"], False)),
        ("Are there four boys?", (["boys"], True)),
        ("Is there a hat worn by the girl?", (["hat"], False)),
        ("Is the nun present?", (["nun"], False)),
        ("Is the kite red?", None),
    ],
)
def test_english_existence_questions(question, found):
    assert en_existence(question) == found


@pytest.mark.parametrize(
    ("question", "found"),
    [
        ("是否有一个女孩？", ("女孩", False)),
        ("图中有两只猫吗？", ("猫", True)),
        ("有没有男孩在跑步？", ("男孩", False)),
        ("是否有男子存在？", ("男子", False)),
        ("桌子上的花瓶在吗？", ("花瓶", False)),
        ("女孩有猫耳吗？", None),  # possession, not existence
    ],
)
def test_chinese_existence_questions(question, found):
    assert zh_existence(question) == found


# -- `qct2i import-release oneig --questions-only`, in-process ----------------------------------


def test_questions_only_writes_the_bank_and_imports_nothing(release, tmp_path):
    warehouse, out = tmp_path / "w.duckdb", tmp_path / "gpu"
    done = run_main(
        ["import-release", "oneig", "--root", str(release), "--questions-only", "--out", str(out)],
        warehouse,
    )
    assert done.returncode == 0, done.stderr
    assert "self_loop=1" in done.stdout and "capability_unmapped=1" in done.stdout
    assert f"  e.g. {QD}/anime.json:6: malformed_entry: " in done.stdout
    assert "rules applied: derived_text_question=2" in done.stdout
    assert "skipped 1 prompts of categories without questions in the release" in done.stdout
    assert "concepts: 5, 2 shared by English and Chinese" in done.stdout
    assert f"question bank {out}: " in done.stdout and "nothing imported" in done.stdout
    assert len(_read(out / "prompts.jsonl")) == 7
    assert not warehouse.exists() and not Warehouse(warehouse).working.exists()


def test_oneig_without_questions_only_and_tiif_with_it_are_refused(release, tmp_path):
    warehouse = tmp_path / "w.duckdb"
    oneig = run_main(["import-release", "oneig", "--root", str(release)], warehouse)
    assert oneig.returncode == 2
    assert "OneIG-Bench ships questions but no answers" in oneig.stderr
    assert "--questions-only --out DIR" in oneig.stderr
    tiif = run_main(
        ["import-release", "tiif", "--root", str(release), "--questions-only", "--out", "x"],
        warehouse,
    )
    assert tiif.returncode == 2
    assert "tiif ships its judges' answers: import it without --questions-only" in tiif.stderr
    no_out = run_main(
        ["import-release", "oneig", "--root", str(release), "--questions-only"], warehouse
    )
    assert no_out.returncode == 2 and "name the question bank's folder with --out" in no_out.stderr
    strict = run_main(
        [
            "import-release",
            "oneig",
            "--root",
            str(release),
            "--questions-only",
            "--strict",
            "--out",
            str(tmp_path / "bank"),
        ],
        warehouse,
    )
    assert strict.returncode == 2 and "OneIG-Bench release refused (21 problems)" in strict.stderr
    assert not (tmp_path / "bank").exists()
    assert not warehouse.exists() and not Warehouse(warehouse).working.exists()
