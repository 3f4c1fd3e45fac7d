"""The world: conceptual prompts and their DSGs, drawn by `_WorldBuilder` from the vocabulary.

A prompt is 1-4 weakly connected components (multi-entity scenes, single objects, text carriers,
global semantics roots); how often each kind appears depends on the prompt's source
(`SOURCES`). Only capabilities present in the taxonomy get questions.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from ingestion.sources.simulator.vocabulary import (
    ATTRIBUTES,
    ENTITIES,
    RELATIONS,
    SEMANTICS_GLOBAL,
    SEMANTICS_ON_ENTITY,
    TEXT_CAPABILITY,
    TEXT_CARRIER_CAPABILITY,
    TEXT_CARRIERS,
    TEXT_TARGETS,
)
from method.taxonomy import Taxonomy

MAX_TARGETS_PER_PROMPT = 3


@dataclass(frozen=True)
class SourceProfile:
    """Where prompts come from, and how that shapes them (METHOD 12 stratifies folds by it)."""

    name: str
    weight: float
    p_scene: float  # first component is a multi-entity scene (else a single object)
    extra_components: tuple[float, ...]  # P(0, 1, 2, 3 extra components)
    extra_kinds: tuple[float, float, float]  # P(object, global semantics, text carrier)
    p_text_in_scene: float
    p_semantics_child: float


SOURCES = (
    SourceProfile("world_knowledge", 0.14, 0.55, (0.25, 0.45, 0.25, 0.05), (0.3, 0.6, 0.1),
                  0.15, 0.7),
    SourceProfile("entity_sets", 0.22, 0.45, (0.35, 0.40, 0.20, 0.05), (0.6, 0.25, 0.15),
                  0.15, 0.35),
    SourceProfile("attribute_binding", 0.20, 0.55, (0.40, 0.40, 0.15, 0.05), (0.6, 0.25, 0.15),
                  0.15, 0.4),
    SourceProfile("relational_scenes", 0.18, 0.85, (0.45, 0.35, 0.15, 0.05), (0.5, 0.3, 0.2),
                  0.2, 0.45),
    SourceProfile("visual_text", 0.10, 0.55, (0.20, 0.50, 0.25, 0.05), (0.25, 0.15, 0.6),
                  0.5, 0.35),
    SourceProfile("long_multilingual", 0.16, 0.90, (0.10, 0.35, 0.35, 0.20), (0.4, 0.35, 0.25),
                  0.3, 0.6),
)  # fmt: skip


@dataclass
class _Question:
    capability: str
    parents: tuple[int, ...]  # indices within the prompt
    text_en: str
    text_zh: str
    entity: str | None = None
    target: str | None = None


@dataclass
class _Concept:
    concept_id: str
    source: str
    questions: list[_Question] = field(default_factory=list)
    phrases: list[tuple[str, str]] = field(default_factory=list)

    def add(self, q: _Question) -> int:
        self.questions.append(q)
        return len(self.questions) - 1


def _n_targets(c: _Concept) -> int:
    return sum(q.target is not None for q in c.questions)


def _article(noun: str) -> str:
    return f"an {noun}" if noun[0].lower() in "aeiou" else f"a {noun}"


class _WorldBuilder:
    """Draws concepts; only capabilities present in the taxonomy get questions."""

    def __init__(self, rng: np.random.Generator, taxonomy: Taxonomy) -> None:
        self.rng = rng
        known = set(taxonomy.capabilities)
        self.entity_caps = [c for c in ENTITIES if c in known]
        self.attribute_caps = [c for c in ATTRIBUTES if c in known]
        self.relation_caps = [c for c in RELATIONS if c in known]
        self.semantic_caps = [c for c in SEMANTICS_GLOBAL if c in known]
        self.has_text = TEXT_CAPABILITY in known and TEXT_CARRIER_CAPABILITY in known
        if not self.entity_caps:
            raise ValueError("the taxonomy has none of the simulator's entity capabilities")
        self.source_weights = np.array([s.weight for s in SOURCES]) / sum(s.weight for s in SOURCES)

    def _pick(self, seq):
        return seq[int(self.rng.integers(len(seq)))]

    def _choice(self, probs: Sequence[float]) -> int:
        return int(self.rng.choice(len(probs), p=np.asarray(probs) / sum(probs)))

    # -- pieces --------------------------------------------------------------------------------

    def _entity(self, c: _Concept, used: set[str], cap: str | None = None, carrier: bool = False):
        cap = cap or self._pick(self.entity_caps)
        pool = TEXT_CARRIERS if carrier else ENTITIES[cap]
        free = [e for e in pool if e[0] not in used] or list(pool)
        en, zh = self._pick(free)
        used.add(en)
        q = _Question(cap, (), f"Is there {_article(en)}?", f"画面中有{zh}吗？", entity=en.lower())
        idx = c.add(q)
        return idx, en, zh

    def _palette(self, caps: Sequence[str], k: int) -> list[str]:
        return [str(x) for x in self.rng.permutation(caps)[:k]]

    def _attributes(
        self, c: _Concept, parent: int, en: str, zh: str, k: int, palette: Sequence[str] = ()
    ) -> list[tuple[str, str]]:
        """k attribute children of one entity, sometimes with a depth-2 child; their phrases."""
        palette = palette or self.attribute_caps
        phrases = []
        children = []
        for cap in self._palette(palette, k):
            v_en, v_zh = self._pick(ATTRIBUTES[cap])
            children.append(
                c.add(_Question(cap, (parent,), f"Is the {en} {v_en}?", f"{zh}是{v_zh}的吗？"))
            )
            phrases.append((v_en, v_zh))
        if children and self.rng.random() < 0.3:  # depth 2: a child of an attribute
            cap = self._pick(palette)
            v_en, v_zh = self._pick(ATTRIBUTES[cap])
            question = _Question(
                cap, (children[0],), f"Is the {en} also {v_en}?", f"{zh}同时是{v_zh}的吗？"
            )
            c.add(question)
            phrases.append((v_en, v_zh))
        return phrases

    @staticmethod
    def _described(en: str, zh: str, attrs: list[tuple[str, str]]) -> tuple[str, str]:
        if not attrs:
            return _article(en), f"一个{zh}"
        return (
            f"{_article(en)} that is {', '.join(a for a, _ in attrs)}",
            f"一个{'、'.join(z for _, z in attrs)}的{zh}",
        )

    def _semantics_child(self, c: _Concept, parent: int, en: str, zh: str) -> tuple[str, str]:
        cap = self._pick(self.semantic_caps)
        q_en, q_zh, p_en, p_zh = self._pick(SEMANTICS_ON_ENTITY[cap])
        c.add(_Question(cap, (parent,), q_en.format(e=en), q_zh.format(e=zh)))
        return p_en.format(e=en), p_zh.format(e=zh)

    def _text_targets(self, c: _Concept, parent: int, en: str, zh: str, k: int) -> list[str]:
        """k text_rendering children of a carrier; targets are distinct within the prompt."""
        taken = {q.target for q in c.questions if q.target}
        free = [t for t in TEXT_TARGETS if t not in taken]
        targets = [free[i] for i in self.rng.choice(len(free), size=k, replace=False)]
        for t in targets:
            c.add(
                _Question(
                    TEXT_CAPABILITY,
                    (parent,),
                    f'Does the {en} show the text "{t}"?',
                    f"{zh}上写着“{t}”吗？",
                    target=t,
                )
            )
        return targets

    # -- components ----------------------------------------------------------------------------

    def _object(self, c: _Concept, used: set[str], profile: SourceProfile) -> None:
        root, en, zh = self._entity(c, used)
        attrs = self._attributes(c, root, en, zh, self._choice((0.05, 0.2, 0.3, 0.25, 0.2)))
        c.phrases.append(self._described(en, zh, attrs))
        if self.semantic_caps and self.rng.random() < profile.p_semantics_child:
            c.phrases.append(self._semantics_child(c, root, en, zh))

    def _relation(self, c: _Concept, cap: str, a, b) -> tuple[int, str, str]:
        rel_en, rel_zh = self._pick(RELATIONS[cap])
        (ia, a_en, a_zh), (ib, b_en, b_zh) = a, b
        clause = rel_zh.format(a=a_zh, b=b_zh)
        q_en = f"Is the {a_en} {rel_en} the {b_en}?"
        rel = c.add(_Question(cap, (ia, ib), q_en, f"{clause}吗？"))
        c.phrases.append((f"the {a_en} is {rel_en} the {b_en}", clause))
        return rel, f"the {a_en} that is {rel_en} the {b_en}", clause

    def _scene(self, c: _Concept, used: set[str], profile: SourceProfile) -> None:
        """Entities bound by relations; a scene reuses a few attribute and relation kinds."""
        n_entities = 2 + self._choice((0.3, 0.35, 0.23, 0.12))
        entity_palette = self._palette(self.entity_caps, 1 + self._choice((0.3, 0.5, 0.2)))
        nodes = [self._entity(c, used, self._pick(entity_palette)) for _ in range(n_entities)]
        n_kinds = 1 + self._choice((0.1, 0.35, 0.35, 0.2))
        attribute_palette = self._palette(self.attribute_caps, n_kinds)
        relation_palette = self._palette(self.relation_caps, 1 + self._choice((0.6, 0.4)))
        for root, en, zh in nodes:
            n = len(attribute_palette)
            k = self._choice([0.05] + [0.95 / n] * n) if n else 0
            attrs = self._attributes(c, root, en, zh, k, attribute_palette)
            c.phrases.append(self._described(en, zh, attrs))
        # A chain keeps the scene one component; extra relations close diamonds.
        pairs = [(int(self.rng.integers(i)), i) for i in range(1, n_entities)]
        for _ in range(self._choice((0.25, 0.4, 0.35))):
            pairs.append(tuple(int(x) for x in self.rng.choice(n_entities, 2, replace=False)))
        for a, b in pairs:
            rel, subject_en, clause = self._relation(
                c, self._pick(relation_palette), nodes[a], nodes[b]
            )
            if "state" in self.attribute_caps and self.rng.random() < 0.25:
                # depth 2: a state of the related entity, asked through the relation
                s_en, s_zh = self._pick(ATTRIBUTES["state"])
                q_en = f"Is {subject_en} {s_en}?"
                c.add(_Question("state", (rel,), q_en, f"{clause}，{nodes[a][2]}是{s_zh}的吗？"))
        if self.has_text and self.rng.random() < profile.p_text_in_scene:
            carrier = self._entity(c, used, TEXT_CARRIER_CAPABILITY, carrier=True)
            _, en, zh = carrier
            targets = self._text_targets(c, carrier[0], en, zh, 1)
            quoted = f'"{targets[0]}"'
            c.phrases.append((f"{_article(en)} reading {quoted}", f"写着{quoted}的{zh}"))
            # The carrier hangs in the scene, so its text belongs to the component.
            self._relation(c, self._pick(self.relation_caps), carrier, nodes[0])
        if self.semantic_caps:
            for root, en, zh in nodes:
                if self.rng.random() < profile.p_semantics_child / 2:
                    c.phrases.append(self._semantics_child(c, root, en, zh))

    def _text_carrier(self, c: _Concept, used: set[str]) -> None:
        root, en, zh = self._entity(c, used, TEXT_CARRIER_CAPABILITY, carrier=True)
        k = min(1 + self._choice((0.65, 0.35)), MAX_TARGETS_PER_PROMPT - _n_targets(c))
        targets = self._text_targets(c, root, en, zh, k)
        attrs = self._attributes(c, root, en, zh, 1) if self.rng.random() < 0.4 else []
        desc_en, desc_zh = self._described(en, zh, attrs)
        quoted = ", ".join(f'"{t}"' for t in targets)
        c.phrases.append((f"{desc_en} reading {quoted}", f"{desc_zh}，上面写着{quoted}"))

    def _global(self, c: _Concept, profile: SourceProfile) -> None:
        cap = self._pick(self.semantic_caps)
        (q_en, q_zh, p_en, p_zh), values = SEMANTICS_GLOBAL[cap]
        v_en, v_zh = self._pick(values)
        root = c.add(_Question(cap, (), q_en.format(v=v_en), q_zh.format(v=v_zh)))
        c.phrases.append((p_en.format(v=v_en), p_zh.format(v=v_zh)))
        for _ in range(self._choice((0.5, 0.35, 0.15))):
            cap = self._pick(self.semantic_caps)
            (q_en, q_zh, p_en, p_zh), values = SEMANTICS_GLOBAL[cap]
            v_en, v_zh = self._pick(values)
            c.add(_Question(cap, (root,), q_en.format(v=v_en), q_zh.format(v=v_zh)))
            c.phrases.append((p_en.format(v=v_en), p_zh.format(v=v_zh)))

    def concept(self, number: int) -> _Concept:
        profile = SOURCES[int(self.rng.choice(len(SOURCES), p=self.source_weights))]
        c = _Concept(f"c{number:05d}", profile.name)
        used: set[str] = set()
        if self.relation_caps and self.rng.random() < profile.p_scene:
            self._scene(c, used, profile)
        else:
            self._object(c, used, profile)
        for _ in range(self._choice(profile.extra_components)):
            kind = self._choice(profile.extra_kinds)
            if kind == 1 and self.semantic_caps:
                self._global(c, profile)
            elif kind == 2 and self.has_text and _n_targets(c) < MAX_TARGETS_PER_PROMPT:
                self._text_carrier(c, used)
            else:
                self._object(c, used, profile)
        return c


def _prompt_text(c: _Concept) -> tuple[str, str]:
    en = "; ".join(p for p, _ in c.phrases)
    zh = "；".join(p for _, p in c.phrases)
    return en[0].upper() + en[1:] + ".", zh + "。"
