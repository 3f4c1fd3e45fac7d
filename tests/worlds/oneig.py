"""The OneIG-Bench hand release: our own invented prompts and questions (never the release's), laid
out as OneIG-Bench lays its files out, with a dirty row of every class the converter reports
(`ingestion.sources.oneig_release`). Read by tests/ingestion/sources/test_oneig_release.py, which
works its conversion out by hand, and by tests/dagster_defs/test_oneig_bank_run.py, which draws,
judges and reads part of its question bank through the GPU assets into a build."""

from __future__ import annotations

import json
from pathlib import Path

QD = "scripts/alignment/Q_D"
TEXT = "scripts/text"

# The line of each row is in the comment beside it: the reports must say it.
PROMPTS_EN = """category,id,prompt_en,type,prompt_length,class
Anime_Stylization,000,"1girl, cat ears, red dress",NP,short,
Anime_Stylization,001,"2boys, night",NP,short,
Portrait,000,A smiling chef holds a wooden spoon.,NP,short,
General_Object,000,A blue kettle on a table.,NP,short,
General_Object,001,A lonely lamp.,NP,short,
Text_Rendering,000,"A poster that reads ""OPEN LATE"" and ""Since 1990"".",NP,short,poster
Text_Rendering,001,A sign with some words.,NP,short,poster
Knowledge_Reasoning,000,Why the sky is blue.,NP,short,physics
Portrait,000,A second chef.,NP,short,
"""  # lines 2-10; 6: no questions; 9: skipped (no questions in the release); 10: a repeat
PROMPTS_ZH = """category,id,prompt_cn,class
Anime_Stylization,000,一个女孩，猫耳，红色连衣裙,
Portrait,000,一位微笑的厨师拿着木勺。,
Multilingualism,000,春节时，一家人在门口贴春联。,
Text_Rendering,000,一张写着“深夜营业”的海报。,
"""


def _questions(pairs: list[tuple[str, str]]) -> str:
    """A Q_D `question` or `dependency` member's value: a JSON string of an object, keys as given
    (repeats kept, as only a hand-written string can)."""
    inner = "{" + ", ".join(f"{json.dumps(k)}: {v}" for k, v in pairs) + "}"
    return json.dumps(inner, ensure_ascii=False)


def _q(*texts: tuple[str, str]) -> str:
    return _questions([(k, json.dumps(t, ensure_ascii=False)) for k, t in texts])


def _entry(key: str, question: str, dependency: str, last: bool = False) -> str:
    """Five lines: the key (line n), `question` (n + 1), `dependency` (n + 2), closing brace."""
    return (
        f'    "{key}": {{\n        "question": {question},\n        "dependency": {dependency}\n'
        f"    }}{'' if last else ','}\n"
    )


def _qd(*entries: str) -> str:
    return "{\n" + "".join(entries) + "}\n"


QD_FILES = {
    "anime.json": _qd(
        _entry(  # lines 2-5
            "000",
            _q(
                ("1", "Is there a girl?"),
                ("2", "Does the girl have cat ears?"),
                ("3", "Is the dress red?"),
                ("4", "Is there a dress?"),
                ("x", "Is it anime?"),  # question_id_not_a_number
            ),
            _questions([("1", "[0]"), ("2", "[1]"), ("3", "[4]"), ("4", "[0]"), ("x", "[0]")]),
        ),
        _entry("001", json.dumps("{not json"), json.dumps("{}")),  # 6: malformed_entry
        _entry("002", _q(("1", "Is there a boy?")), _questions([("1", "[0]")]), last=True),  # 10
    ),
    "human.json": _qd(
        _entry(  # lines 2-5
            "000",
            _q(
                ("1", "Is there a chef?"),
                ("2", "Is the chef smiling?"),
                ("3", "Is the chef holding a spoon?"),
                ("4", "Is the spoon wooden?"),
                ("5", "Is there a spoon?"),
                ("5", "Is there a ladle?"),  # duplicate_question
                ("6", "  "),  # empty_question
            ),
            _questions(
                [
                    ("1", "[0]"),
                    ("2", "[1, 1]"),  # duplicate_parent
                    ("3", '[1, "five", 5]'),  # parent_in_words
                    ("4", "[5, 4, 9]"),  # self_loop, missing_parent
                    ("5", "[0]"),
                    ("6", "[0]"),
                    ("7", "[1]"),  # dependency_mismatch: no question 7
                ]
            ),
            last=True,
        ),
    ),
    "object.json": _qd(
        _entry(  # lines 2-5
            "000",
            _q(
                ("1", "Is there a kettle?"),
                ("2", "Is the kettle blue?"),
                ("3", "Is the kettle on the table?"),
                ("4", "Is there a blorp?"),  # entity_noun_unlisted
                ("5", "Can the kettle whistle?"),  # capability_unmapped; no dependency entry
                ("6", 'Does the sign read "OPEN"?'),
            ),
            _questions([("1", "[3]"), ("3", "[1]"), ("2", "[1]"), ("4", "[0]"), ("6", "[0]")]),
        ),
        _entry("000", _q(("1", "Is there a pot?")), _questions([("1", "[0]")]), last=True),  # 6
    ),
    "anime_zh.json": _qd(
        _entry(
            "000",
            _q(
                ("1", "是否有一个女孩？"),
                ("2", "女孩有猫耳吗？"),
                ("3", "连衣裙是红色的吗？"),
                ("4", "有两只猫吗？"),
            ),
            _questions([("1", "[0]"), ("2", "[1]"), ("3", "[0]"), ("4", "[0]")]),
            last=True,
        ),
    ),
    "human_zh.json": _qd(  # line 4: malformed_dependency
        _entry(
            "000",
            _q(("1", "有厨师吗？"), ("2", "厨师在微笑吗？")),
            json.dumps("not json"),
            last=True,
        ),
    ),
    "multilingualism_zh.json": _qd(
        _entry(
            "000",
            _q(("1", "有一家人吗？"), ("2", "春联贴在门上吗？"), ("3", "这是传统习俗吗？")),
            _questions([("1", "[0]"), ("2", "[1]"), ("3", "[0]")]),
            last=True,
        ),
    ),
}
TEXT_EN = """,id,prompt_en,text_content
0,000,"A poster that reads ""OPEN LATE"" and ""Since 1990"".","['OPEN LATE', 'Since 1990']"
1,001,A sign with some words.,not a list
2,005,A flyer.,['SALE']
"""  # 3: malformed_text_targets; 4: text_without_prompt
TEXT_ZH = """,id,prompt_cn,text_content
0,000,另一张海报。,['深夜营业']
"""  # 2: text_without_prompt (the prompt text differs)


def write_oneig_fixture(root: Path) -> Path:
    """The hand release, laid out as OneIG-Bench lays its files out."""
    files = {
        "OneIG-Bench.csv": PROMPTS_EN,
        "OneIG-Bench-ZH.csv": PROMPTS_ZH,
        f"{TEXT}/text_content.csv": TEXT_EN,
        f"{TEXT}/text_content_zh.csv": TEXT_ZH,
        **{f"{QD}/{name}": text for name, text in QD_FILES.items()},
    }
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    return root
