"""Test-only loader: the public DSG-1k annotations as an evidence bundle (real DSG structure).

Reads `../shared/data/dsg/dsg/data/dsg-1k-anns.csv` by path (never copied into the repository).
Tests reach it through the `dsg_1k_path` fixture (tests/conftest.py): when the file is missing
they skip, and under CI=true they fail instead.
One prompt per `item_id` (language `en`), one question per `proposition_id` (`q<id>`, in id
order). `dependency` lists parent proposition ids, `0` meaning "root". The file has dirty rows;
the loader repairs them as follows and counts each repair in `DsgLoad.repairs`:
- `non_numeric_parent`: tokens that are words, not ids (e.g. `"5, right"`): the word is dropped;
- `self_loop`: a question listed as its own parent: dropped;
- `missing_parent`: a parent id absent from the item: dropped;
- `cycle_edge`: an edge that would close a cycle (edges are added in child-id order, parents in
  listed order; an edge whose parent is already reachable from the child is dropped).
Capabilities come from (`category_broad`, `category_detailed`) via `CATEGORY_MAP` (entities by a
small keyword list); anything unmapped falls back by broad category. Judgments are for one
synthetic model with seeded random answers: the atlas does not depend on them.
"""

from __future__ import annotations

import csv
import random
import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from ingestion.bundle.format import write_bundle
from ingestion.paths import PROJECT_ROOT

DSG_1K = PROJECT_ROOT.parent / "shared" / "data" / "dsg" / "dsg" / "data" / "dsg-1k-anns.csv"
MODEL_ID = "dsg-probe"

CATEGORY_MAP = {
    ("entity", "part"): "part_whole",
    ("entity", "scale"): "quantification_comparison",
    ("attribute", "color"): "color",
    ("attribute", "shape"): "shape",
    ("attribute", "material"): "material",
    ("attribute", "texture"): "texture",
    ("attribute", "pattern"): "texture",
    ("attribute", "lighting"): "lighting",
    ("attribute", "state"): "state",
    ("attribute", "type"): "state",
    ("attribute", "style"): "style",
    ("attribute", "artist"): "style",
    ("attribute", "creator"): "style",
    ("attribute", "resolution"): "style",
    ("attribute", "detail"): "style",
    ("attribute", "quality"): "style",
    ("attribute", "time"): "temporal_setting",
    ("attribute", "count"): "quantification_comparison",
    ("attribute", "size"): "quantification_comparison",
    ("attribute", "scale"): "quantification_comparison",
    ("attribute", "width"): "quantification_comparison",
    ("attribute", "height"): "quantification_comparison",
    ("attribute", "length"): "quantification_comparison",
    ("attribute", "location"): "spatial",
    ("attribute", "position"): "spatial",
    ("attribute", "part"): "part_whole",
    ("attribute", "text rendering"): "text_rendering",
    ("attribute", "font"): "text_rendering",
    ("relation", "spatial"): "spatial",
    ("relation", "action"): "interaction",
    ("relation", "part"): "part_whole",
    ("relation", "temporal"): "temporal_setting",
    ("other", "count"): "quantification_comparison",
    ("other", "text rendering"): "text_rendering",
    ("global", "-"): "style",
}
FALLBACK = {
    "entity": "man_made",
    "attribute": "state",
    "relation": "spatial",
    "global": "style",
    "other": "logical_constraints",
}
ENTITY_WORDS = {
    "humans": "man woman men women person people boy girl child children kid kids baby guy lady "
    "someone player players guard guards skier surfer rider crowd chef",
    "animals": "dog dogs cat cats bird birds horse horses cow cows sheep elephant elephants bear "
    "giraffe zebra ostrich fish duck lion tiger monkey animal animals owl",
    "plants": "tree trees flower flowers plant plants grass bush bushes leaves leaf rose roses",
    "natural_scenes": "sky water sea ocean beach mountain mountains river lake field forest snow "
    "cloud clouds sand hill hills ground sun moon rocks rock waves",
}
_ENTITY_OF_WORD = {w: cap for cap, words in ENTITY_WORDS.items() for w in words.split()}


@dataclass
class DsgLoad:
    prompts: list[dict] = field(default_factory=list)
    questions: list[dict] = field(default_factory=list)
    judgments: list[dict] = field(default_factory=list)
    repairs: Counter = field(default_factory=Counter)

    def edges(self) -> list[tuple[str, str, str]]:
        """(prompt_id, parent, child) of the repaired graph."""
        return [
            (q["prompt_id"], parent, q["question_id"])
            for q in self.questions
            for parent in q["parents"]
        ]


def capability_of(broad: str, detailed: str, keywords: str) -> str:
    if (broad, detailed) == ("entity", "whole"):
        words = re.findall(r"[a-z]+", keywords.lower())
        for word in reversed(words):  # the head noun comes last
            if word in _ENTITY_OF_WORD:
                return _ENTITY_OF_WORD[word]
        return "man_made"
    return CATEGORY_MAP.get((broad, detailed), FALLBACK.get(broad, "logical_constraints"))


def load_dsg(path: Path = DSG_1K, seed: int = 0) -> DsgLoad:
    by_item: dict[str, list[dict]] = defaultdict(list)
    with path.open(newline="", encoding="utf-8") as handle:
        for row in csv.DictReader(handle):
            by_item[row["item_id"]].append(row)
    load = DsgLoad()
    rng = random.Random(seed)
    for item_id, rows in by_item.items():
        rows.sort(key=lambda r: int(r["proposition_id"]))
        ids = {r["proposition_id"] for r in rows}
        listed: dict[str, list[str]] = {}
        for row in rows:
            child = row["proposition_id"]
            parents = []
            for token in (t.strip() for t in row["dependency"].split(",")):
                if not token.isdigit():
                    load.repairs["non_numeric_parent"] += 1
                elif token == "0":
                    continue
                elif token == child:
                    load.repairs["self_loop"] += 1
                elif token not in ids:
                    load.repairs["missing_parent"] += 1
                elif token not in parents:
                    parents.append(token)
            listed[child] = parents
        kept = _break_cycles(listed, load.repairs)
        load.prompts.append(
            {
                "prompt_id": item_id,
                "concept_id": item_id,
                "language": "en",
                "source": item_id.rsplit("_", 1)[0],
                "text": rows[0]["text"],
            }
        )
        for row in rows:
            pid = row["proposition_id"]
            capability = capability_of(
                row["category_broad"], row["category_detailed"], row["keywords"]
            )
            is_entity_root = row["category_broad"] == "entity" and not kept[pid]
            load.questions.append(
                {
                    "prompt_id": item_id,
                    "question_id": f"q{pid}",
                    "text": row["question_natural_language"],
                    "capability": capability,
                    "parents": [f"q{p}" for p in kept[pid]],
                    "entity": row["keywords"].strip().lower() if is_entity_root else None,
                    "text_target": None,
                }
            )
            answer = "yes" if rng.random() < 0.8 else "no"
            load.judgments.append(
                {
                    "prompt_id": item_id,
                    "model_id": MODEL_ID,
                    "question_id": f"q{pid}",
                    "answer": answer,
                    "p_yes": None,
                }
            )
    return load


def _break_cycles(listed: dict[str, list[str]], repairs: Counter) -> dict[str, list[str]]:
    """Add edges child by child (id order); drop one whose parent is reachable from the child."""
    children: dict[str, list[str]] = defaultdict(list)
    kept: dict[str, list[str]] = {c: [] for c in listed}

    def reaches(start: str, goal: str) -> bool:
        stack, seen = [start], {start}
        while stack:
            node = stack.pop()
            if node == goal:
                return True
            for nxt in children[node]:
                if nxt not in seen:
                    seen.add(nxt)
                    stack.append(nxt)
        return False

    for child in sorted(listed, key=int):
        for parent in listed[child]:
            if reaches(child, parent):
                repairs["cycle_edge"] += 1
                continue
            kept[child].append(parent)
            children[parent].append(child)
    return kept


def write_dsg_bundle(folder: Path, load: DsgLoad) -> Path:
    tables = {"prompts": load.prompts, "questions": load.questions, "judgments": load.judgments}
    write_bundle(folder, tables, "jsonl")
    return folder
