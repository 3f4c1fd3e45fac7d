"""OneIG-Bench (GitHub `OneIG-Bench/OneIG-Benchmark`) as a question bank: the prompts and
questions, English and Chinese, that the GPU path draws and judges (`gpu/generated_images` reads
`prompts.jsonl`, `gpu/judged_images` `questions.jsonl`, `gpu/transcribed_images` their
`text_target`s). The release has no answers, so the bundle has no judgments: it is written, never
imported (`qct2i import-release oneig --questions-only --out DIR`).

Input, relative to the release folder `root`:
- `OneIG-Bench.csv` (`category`, `id`, `prompt_en`) and `OneIG-Bench-ZH.csv` (`category`, `id`,
  `prompt_cn`; about 200 prompts more, the Chinese-only `Multilingualism` set);
- `scripts/alignment/Q_D/<stem>.json` (English) and `<stem>_zh.json` (Chinese), `<stem>` the
  category's file in seeds/oneig_category_map.csv (`anime`, `human`, `object`,
  `multilingualism`): per prompt id an object whose `question` is a JSON string of an object
  `{"1": "Are there boys?", ...}` and whose `dependency` one of `{"1": [0], "2": [1], ...}`
  (0 = a root);
- `scripts/text/text_content.csv` / `text_content_zh.csv` (`id`, the prompt, `text_content`: a
  Python list literal of the strings a `Text_Rendering` prompt asks to render).

Ids: a concept per (category, id), `oneig-<id_part>-<id>` (`id_part` from the category map:
`oneig-anime-000`), shared by the English and the Chinese prompt of that id where both languages
have it; prompts `<concept>-en` and `<concept>-zh`, source `oneig/<category>`, the CSV's text
(trimmed). A question `q<n>` per key `n` of the `question` object, its text trimmed; an unsafe id
is refused. Categories whose map row names no questions (`Knowledge_Reasoning`, scored by other
means in the release) are skipped and counted, not dirty.

Parents by DSG's rules (`release_common.listed_parents` / `break_cycles`); a dependency value that
is not a list is read as a list of that one value, and integers and digit strings are numbers.
Text targets: the release gives them only for `Text_Rendering` prompts, which have no Q_D
questions, so each of a prompt's strings becomes one root question, "Does the image show the text
"<s>"?" (Chinese 图中是否有文字“<s>”？), capability `text_rendering`, `text_target` the string
(trimmed): each is recorded as `derived_text_question` (a rule applied, not dirt). A Q_D question
quoting one string and naming text (`oneig_questions`' quoted-text rule) has that string as its
target.

Capabilities (`ingestion.sources.oneig_questions.map_question`), by the first rule that applies:
1. quoted text: a quoted string (double or CJK quotes) in a question that names text (a
   text_rendering cue word, or read/say/number/word/sign; 写/显示/号码/字) -> `text_rendering`;
2. an existence question (English "Is/Are there ...?", "Does ... exist?", "Is the ... present /
   visible / depicted?"; Chinese 是否有/有...吗/有没有/存在/图中有..., "...存在吗", "...在场吗"):
   one that counts (a number or "several", "only", 两个, 多个, 只有) -> `quantification_comparison`;
   else its noun's capability in the noun lists (English: `tiif_entity_nouns` and the English
   rows of `oneig_entity_nouns`, the phrase's last two words then its head noun, plurals read as
   singulars; Chinese: the longest listed noun the phrase's head ends with, 樱花树 -> 树); a noun
   no list has gets `man_made` and is reported as `entity_noun_unlisted`;
3. the cue words of `oneig_cue_words` (a word of the question, English; a substring, Chinese),
   tried capability by capability in `oneig_questions.CUE_ORDER` (text_rendering, style,
   quantification_comparison, color, shape, material, texture, lighting, spatial,
   temporal_setting, emotion_atmosphere, interaction, part_whole, state, humans); `spatial` also
   fires on the locative form ("Is the cup on the table?", 在...上/里/中), `part_whole` on the
   possession form ("Does the girl have a tail?", 角色有尾巴吗);
4. the category's capability where the map gives one (`Multilingualism`:
   `scientific_cultural_knowledge`);
5. else `state`, reported as `capability_unmapped` (count and example: what no rule maps).
The category decides nothing else: an anime question is `style` only when it names a style.

Dirty rows, each reported as file:line: reason. A CSV's line is the 1-based physical line of the
row (header = line 1); a Q_D file's, the line of the prompt id's key (entry problems), of its
`question` member (question problems) or of its `dependency` member (parent problems). The default
mode repairs by these rules; `strict` refuses with every one listed and writes nothing:
- `malformed_entry`: an entry that is not an object with a `question` JSON string of a non-empty
  object (or that repeats a member): dropped, with its prompt;
- `malformed_dependency`: `dependency` missing, not a string or not a JSON object: every question
  of the entry is a root;
- `duplicate_prompt`: a prompt id listed twice in a Q_D file or a text file, or a (category, id)
  twice in a prompts CSV: the second dropped (the first wins);
- `question_id_not_a_number`: a question key that is not a number: dropped;
- `duplicate_question`: a question key listed twice in one `question` object: the second dropped;
- `empty_question`: a question that is not a non-empty string: dropped;
- `dependency_mismatch`: a question without a dependency entry (a root, repaired), or a
  dependency entry of no question or repeated (dropped);
- `parent_in_words`, `self_loop`, `missing_parent`, `cycle`: DSG's rules (docs/releases.md);
- `duplicate_parent`: a parent listed twice for one question: kept once;
- `questions_without_prompt`: a Q_D entry whose prompt the prompts CSV lacks or leaves empty:
  dropped;
- `prompt_without_questions`: a prompt of a category with questions that has none (no entry,
  none kept, no text targets): dropped (the GPU path would draw it with nothing to judge);
- `malformed_text_targets`: a `text_content` that is not a non-empty list of non-empty strings:
  dropped;
- `text_without_prompt`: text targets of an id no `Text_Rendering` prompt has, or whose prompt
  text differs from the prompts CSV's: dropped;
- `entity_noun_unlisted`, `capability_unmapped`: rules 2 and 5 above.
A file that cannot be read or parsed as a whole, a missing column, a category or Q_D file the map
lacks, seeds naming no capability, and unsafe ids are refused in either mode.
"""

from __future__ import annotations

import ast
import json
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from ingestion.bundle import Problem
from ingestion.bundle.format import is_safe_id
from ingestion.bundle.load import default_capabilities
from ingestion.sources.oneig_questions import (
    DEFAULT_CATEGORY_MAP,
    DEFAULT_CUE_WORDS,
    DEFAULT_ENTITY_NOUNS,
    LANGUAGES,
    TEXT,
    Category,
    QuestionRules,
    map_question,
    read_rules,
)
from ingestion.sources.release_common import (
    Conversion,
    DirtyRow,
    JsonMembers,
    ReleaseError,
    break_cycles,
    csv_rows,
    json_pairs,
    listed_parents,
    refuse_unless_empty,
    write_conversion,
)

QD_DIR = Path("scripts/alignment/Q_D")
TEXT_DIR = Path("scripts/text")
PROMPT_FILES = {"en": "OneIG-Bench.csv", "zh": "OneIG-Bench-ZH.csv"}
PROMPT_COLUMN = {"en": "prompt_en", "zh": "prompt_cn"}
TEXT_FILES = {"en": "text_content.csv", "zh": "text_content_zh.csv"}
TEXT_QUESTION = {"en": 'Does the image show the text "{}"?', "zh": "图中是否有文字“{}”？"}
DIRTY_CLASSES = (
    "malformed_entry",
    "malformed_dependency",
    "duplicate_prompt",
    "question_id_not_a_number",
    "duplicate_question",
    "empty_question",
    "dependency_mismatch",
    "parent_in_words",
    "self_loop",
    "missing_parent",
    "duplicate_parent",
    "cycle",
    "questions_without_prompt",
    "prompt_without_questions",
    "malformed_text_targets",
    "text_without_prompt",
    "entity_noun_unlisted",
    "capability_unmapped",
)
APPLIED_CLASSES = ("derived_text_question",)


class OneigReleaseError(ReleaseError):
    """The release cannot be converted (or, strict, has dirty rows); lists every problem."""

    release = "OneIG-Bench release"


@dataclass(frozen=True)
class _Prompt:
    category: Category
    language: str
    id: str
    text: str
    file: str
    line: int

    @property
    def concept_id(self) -> str:
        return f"oneig-{self.category.id_part}-{self.id}"

    @property
    def prompt_id(self) -> str:
        return f"{self.concept_id}-{self.language}"


@dataclass(frozen=True)
class _Question:
    key: str  # the release's question id ("3")
    text: str
    parents: tuple[str, ...]
    where: tuple[str, int]  # the `question` member's (file, line)
    text_target: str | None = None


# --------------------------------------------------------------------------------------------------
# Prompts
# --------------------------------------------------------------------------------------------------


def _prompts(root: Path, rules: QuestionRules, dirty, problems) -> dict[tuple, _Prompt]:
    """Every prompt of both prompts CSVs, keyed (language, category, id)."""
    prompts: dict[tuple, _Prompt] = {}
    for language in LANGUAGES:
        rel = PROMPT_FILES[language]
        if not (root / rel).is_file():
            problems.append(Problem(rel, None, "no prompts file here"))
            continue
        columns = ("category", "id", PROMPT_COLUMN[language])
        for line, row in csv_rows(root, rel, columns, problems):
            name, pid = row["category"].strip(), row["id"].strip()
            category = rules.categories.get(name)
            if category is None:
                reason = f"category {name!r} is not in seeds/oneig_category_map.csv"
                problems.append(Problem(rel, line, reason))
                continue
            prompt = _Prompt(
                category, language, pid, row[PROMPT_COLUMN[language]].strip(), rel, line
            )
            if not is_safe_id(prompt.prompt_id):
                problems.append(Problem(rel, line, f"id {prompt.prompt_id!r} is not a safe id"))
                continue
            key = (language, name, pid)
            if key in prompts:
                first = prompts[key].line
                reason = f"{name} {pid} repeats line {first}; dropped (the first wins)"
                dirty.append(DirtyRow(rel, line, "duplicate_prompt", "dropped", reason))
                continue
            prompts[key] = prompt
    return prompts


# --------------------------------------------------------------------------------------------------
# Q_D questions and their parents
# --------------------------------------------------------------------------------------------------


def _entry_questions(
    doc: JsonMembers, rel: str, prompt_id: str, key_line: int, value, start, dirty
):
    """The questions of one Q_D entry with their repaired parents; None for a malformed entry."""
    label = f"{prompt_id}: "

    def malformed(reason: str):
        dirty.append(DirtyRow(rel, key_line, "malformed_entry", "dropped", label + reason))

    members = doc.members(start) if isinstance(value, dict) else None
    names = [name for name, *_ in members or ()]
    if members is None or len(set(names)) != len(names):
        return malformed("not an object with one `question` and one `dependency`; dropped")
    by_name = {name: (line, member) for name, line, member, _ in members}
    q_line, listed = by_name.get("question", (key_line, None))
    pairs = json_pairs(listed)
    if not pairs:
        return malformed("`question` is not a JSON string of a non-empty object; dropped")
    where = (rel, q_line)
    texts: dict[str, str] = {}
    keys = set()
    for raw, text in pairs:
        qid = raw.strip()
        keys.add(qid)
        if not qid.isdigit():
            reason = f"{label}question id {raw!r} is not a number; dropped"
            dirty.append(DirtyRow(*where, "question_id_not_a_number", "dropped", reason))
        elif qid in texts:
            reason = f"{label}question {qid} is listed twice; the second dropped"
            dirty.append(DirtyRow(*where, "duplicate_question", "dropped", reason))
        elif not isinstance(text, str) or not text.strip():
            reason = f"{label}question {qid} has no text ({text!r}); dropped"
            dirty.append(DirtyRow(*where, "empty_question", "dropped", reason))
        else:
            texts[qid] = text.strip()
    d_line, dependency = by_name.get("dependency", (key_line, None))
    parents = _parents(texts, keys, json_pairs(dependency), (rel, d_line), label, dirty)
    return [
        _Question(qid, texts[qid], tuple(parents[qid]), where) for qid in sorted(texts, key=int)
    ]


def _parents(texts, keys, dependency, where, label, dirty) -> dict[str, list[str]]:
    """Each kept question's parents by DSG's rules (a root where the dependency says nothing)."""
    if dependency is None:
        reason = f"{label}`dependency` is not a JSON string of an object; every question a root"
        dirty.append(DirtyRow(*where, "malformed_dependency", "repaired", reason))
        return {qid: [] for qid in texts}
    listed: dict[str, list[str]] = {}
    for raw, value in dependency:
        qid = raw.strip()
        if qid in listed or qid not in keys:
            what = "is listed twice" if qid in listed else "is no question of the prompt"
            reason = f"{label}the dependency of question {raw!r} {what}; dropped"
            dirty.append(DirtyRow(*where, "dependency_mismatch", "dropped", reason))
            continue
        if qid not in texts:
            continue  # its question was dropped (and reported)
        values = value if isinstance(value, list) else [value]
        tokens = [_token(v) for v in values]
        listed[qid] = listed_parents(
            qid, tokens, set(texts), where, dirty, label, report_repeats=True, unit="prompt"
        )
    for qid in texts:
        if qid not in listed:
            reason = f"{label}question {qid} has no dependency entry; a root"
            dirty.append(DirtyRow(*where, "dependency_mismatch", "repaired", reason))
            listed[qid] = []
    ordered = {qid: listed[qid] for qid in sorted(listed, key=int)}
    return break_cycles(ordered, {qid: where for qid in ordered}, dirty, label)


def _token(value: object) -> str:
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return value if isinstance(value, str) else json.dumps(value)


def _read_json(root: Path, rel: str, problems) -> JsonMembers | None:
    try:
        doc = JsonMembers((root / rel).read_text(encoding="utf-8"))
        doc.members()  # the whole file must be one object
        return doc
    except (OSError, UnicodeDecodeError, ValueError) as error:
        problems.append(Problem(rel, None, f"cannot be read as a JSON object: {error}"))
        return None


def _qd_questions(root: Path, rules, prompts, dirty, problems) -> dict[str, list[_Question]]:
    """The questions of every prompt that has a Q_D entry, keyed by prompt id."""
    stems = {c.questions: c for c in rules.categories.values() if c.questions}
    found: dict[str, list[_Question]] = {}
    for path in sorted((root / QD_DIR).glob("*.json")):
        rel = (QD_DIR / path.name).as_posix()
        stem, language = (path.stem[:-3], "zh") if path.stem.endswith("_zh") else (path.stem, "en")
        category = stems.get(stem)
        if category is None or category.questions == "text_content":
            reason = "no category of seeds/oneig_category_map.csv reads this file"
            problems.append(Problem(rel, None, reason))
            continue
        doc = _read_json(root, rel, problems)
        seen: dict[str, int] = {}
        for key, line, value, start in doc.members() if doc else ():
            pid = key.strip()
            prompt = prompts.get((language, category.name, pid))
            if pid in seen:
                reason = f"prompt {pid} repeats line {seen[pid]}; dropped (the first wins)"
                dirty.append(DirtyRow(rel, line, "duplicate_prompt", "dropped", reason))
                continue
            seen[pid] = line
            if prompt is None or not prompt.text:
                what = "lacks" if prompt is None else "has no text for"
                reason = f"{PROMPT_FILES[language]} {what} {category.name} {pid}; dropped"
                dirty.append(DirtyRow(rel, line, "questions_without_prompt", "dropped", reason))
                continue
            questions = _entry_questions(doc, rel, prompt.prompt_id, line, value, start, dirty)
            if questions == []:
                reason = f"{prompt.prompt_id}: none of its questions is kept; dropped"
                dirty.append(DirtyRow(rel, line, "prompt_without_questions", "dropped", reason))
            found[prompt.prompt_id] = questions or []  # [] : dropped, reported
    return found


# --------------------------------------------------------------------------------------------------
# Text targets
# --------------------------------------------------------------------------------------------------


def _text_targets(value: str) -> list[str] | None:
    try:
        targets = ast.literal_eval(value.strip())
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return None
    if not isinstance(targets, list) or not targets:
        return None
    if not all(isinstance(t, str) and t.strip() for t in targets):
        return None
    return [t.strip() for t in targets]


def _text_questions(root: Path, rules, prompts, dirty, applied, problems) -> dict[str, list]:
    """One derived question per text target of each Text_Rendering prompt, keyed by prompt id."""
    texts = [c for c in rules.categories.values() if c.questions == "text_content"]
    found: dict[str, list[_Question]] = {}
    for category in texts:
        for language in LANGUAGES:
            rel = (TEXT_DIR / TEXT_FILES[language]).as_posix()
            if not (root / rel).is_file():
                continue
            columns = ("id", PROMPT_COLUMN[language], "text_content")
            for line, row in csv_rows(root, rel, columns, problems):
                pid = row["id"].strip()
                prompt = prompts.get((language, category.name, pid))
                dropped = _text_problem(row, language, prompt, found)
                if dropped:
                    dirty.append(DirtyRow(rel, line, dropped[0], "dropped", f"{pid}: {dropped[1]}"))
                    if prompt is not None and dropped[0] != "duplicate_prompt":
                        found[prompt.prompt_id] = []  # dropped, reported
                    continue
                targets = _text_targets(row["text_content"])
                if targets is None:
                    reason = f"{pid}: text_content is not a list of non-empty strings; dropped"
                    dirty.append(DirtyRow(rel, line, "malformed_text_targets", "dropped", reason))
                    found[prompt.prompt_id] = []
                    continue
                found[prompt.prompt_id] = _derived(prompt, targets, (rel, line), applied)
    return found


def _text_problem(row, language, prompt, found) -> tuple[str, str] | None:
    if prompt is None or not prompt.text:
        what = (
            "no Text_Rendering prompt has this id" if prompt is None else "its prompt has no text"
        )
        return "text_without_prompt", f"{what}; dropped"
    if prompt.prompt_id in found:
        return "duplicate_prompt", "a second text_content row of this id; dropped"
    if row[PROMPT_COLUMN[language]].strip() != prompt.text:
        where = f"{prompt.file}:{prompt.line}"
        return "text_without_prompt", f"its prompt text differs from {where}'s; dropped"
    return None


def _derived(prompt: _Prompt, targets: list[str], where, applied) -> list[_Question]:
    questions = []
    for at, target in enumerate(targets, start=1):
        text = TEXT_QUESTION[prompt.language].format(target)
        reason = f"{prompt.prompt_id}/q{at}: a question for the text target {target[:40]!r}"
        applied.append(DirtyRow(*where, "derived_text_question", "repaired", reason))
        questions.append(_Question(str(at), text, (), where, target))
    return questions


# --------------------------------------------------------------------------------------------------
# The bundle's tables
# --------------------------------------------------------------------------------------------------


def _question_row(prompt: _Prompt, question: _Question, rules: QuestionRules, dirty) -> dict:
    question_id = f"q{question.key}"
    if question.text_target is not None:  # a derived text question
        capability, entity, target = TEXT, None, question.text_target
        source = "rule:derived_text_question"
    else:
        mapped = map_question(question.text, prompt.language, prompt.category, rules)
        capability, target = mapped.capability, mapped.text_target
        source = mapped.source(prompt.category.name)
        entity = mapped.entity if not question.parents else None
        label = f"{prompt.prompt_id}/{question_id}"
        if mapped.rule == "entity_noun_unlisted":
            noun = mapped.entity or "(no noun)"
            reason = (
                f"{label}: noun {noun!r} is in no noun list (seeds/oneig_entity_nouns.csv); "
                "capability man_made (the fallback)"
            )
            dirty.append(DirtyRow(*question.where, "entity_noun_unlisted", "repaired", reason))
        elif mapped.rule == "capability_unmapped":
            reason = (
                f"{label}: no rule maps {question.text[:60]!r}; capability {capability} "
                "(the fallback)"
            )
            dirty.append(DirtyRow(*question.where, "capability_unmapped", "repaired", reason))
    return {
        "prompt_id": prompt.prompt_id,
        "question_id": question_id,
        "text": question.text,
        "capability": capability,
        "parents": [f"q{parent}" for parent in question.parents],
        "entity": entity,
        "text_target": target,
        "capability_source": source,
    }


def _tables(prompts, questions, rules, dirty) -> tuple[list[dict], list[dict], Counter]:
    """The prompts and questions tables, and how many prompts of each category without
    questions in the release were skipped."""
    prompt_rows, question_rows, skipped = [], [], Counter()
    for prompt in prompts.values():
        if not prompt.category.questions:
            skipped[prompt.category.name] += 1
            continue
        held = questions.get(prompt.prompt_id)
        if not held:  # [] where its questions were dropped with a report already
            if prompt.text and held is None:
                reason = f"{prompt.prompt_id}: no question in the release; dropped"
                dirty.append(
                    DirtyRow(
                        prompt.file, prompt.line, "prompt_without_questions", "dropped", reason
                    )
                )
            continue
        prompt_rows.append(
            {
                "prompt_id": prompt.prompt_id,
                "concept_id": prompt.concept_id,
                "language": prompt.language,
                "source": f"oneig/{prompt.category.name}",
                "text": prompt.text,
            }
        )
        question_rows += [_question_row(prompt, q, rules, dirty) for q in held]
    return prompt_rows, question_rows, skipped


def _notes(prompts: list[dict], questions: list[dict], skipped: Counter) -> list[str]:
    """The summary's counts per language, the concepts both languages share, what was skipped."""
    notes = []
    for language in LANGUAGES:
        ids = {p["prompt_id"] for p in prompts if p["language"] == language}
        mine = [q for q in questions if q["prompt_id"] in ids]
        roots = sum(not q["parents"] for q in mine)
        targets = sum(q["text_target"] is not None for q in mine)
        notes.append(
            f"{language}: {len(ids)} prompts, {len(mine)} questions ({roots} roots, "
            f"{len(mine) - roots} with parents), {targets} text targets"
        )
    languages: dict[str, set[str]] = {}
    for prompt in prompts:
        languages.setdefault(prompt["concept_id"], set()).add(prompt["language"])
    shared = sum(len(held) == len(LANGUAGES) for held in languages.values())
    notes.append(f"concepts: {len(languages)}, {shared} shared by English and Chinese")
    return notes


# --------------------------------------------------------------------------------------------------
# The conversion
# --------------------------------------------------------------------------------------------------


def convert_oneig_questions(
    root: Path,
    out: Path,
    strict: bool = False,
    category_map: Path = DEFAULT_CATEGORY_MAP,
    entity_nouns: Path = DEFAULT_ENTITY_NOUNS,
    cue_words: Path = DEFAULT_CUE_WORDS,
) -> Conversion:
    """Write the release folder `root` as a question bank (a JSONL bundle of `prompts`,
    `questions` and `conversion_report`, no judgments) in `out` (absent or empty), or raise
    OneigReleaseError listing every problem (and, `strict`, every dirty row); nothing is
    written then."""
    root, out = Path(root), Path(out)
    refuse_unless_empty(out, OneigReleaseError)
    dirty: list[DirtyRow] = []
    applied: list[DirtyRow] = []
    rules, problems = read_rules(default_capabilities(), category_map, entity_nouns, cue_words)
    prompts = {} if problems else _prompts(root, rules, dirty, problems)
    questions = _qd_questions(root, rules, prompts, dirty, problems) if prompts else {}
    questions |= _text_questions(root, rules, prompts, dirty, applied, problems) if prompts else {}
    prompt_rows, question_rows, skipped = _tables(prompts, questions, rules, dirty)
    tables = {"prompts": prompt_rows, "questions": question_rows}
    conversion = write_conversion(
        out,
        tables,
        dirty,
        problems,
        strict,
        OneigReleaseError,
        applied,
        dirty_classes=DIRTY_CLASSES,
    )
    conversion.out_of_scope = sum(skipped.values())
    conversion.out_of_scope_what = (
        "prompts of categories without questions in the release ("
        + (", ".join(f"{name} {n}" for name, n in sorted(skipped.items())) or "none")
        + ")"
    )
    conversion.notes = _notes(prompt_rows, question_rows, skipped) + conversion.notes
    return conversion
