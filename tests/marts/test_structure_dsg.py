"""On real structure: the DSG-1k annotations give an atlas that networkx confirms."""

from __future__ import annotations

from collections import Counter

import networkx as nx
import pytest

from tests.helpers import build_structure_warehouse, query, warehouse_in
from tests.worlds.dsg import load_dsg, write_dsg_bundle

pytestmark = [
    pytest.mark.usefixtures("dsg_1k_path"),  # tests/conftest.py: a skip, or a failure under CI
]


@pytest.fixture(scope="module")
def dsg():
    return load_dsg()


@pytest.fixture(scope="module")
def warehouse(dsg, tmp_path_factory):
    root = tmp_path_factory.mktemp("dsg")
    return build_structure_warehouse(
        write_dsg_bundle(root / "bundle", dsg), warehouse_in(root / "dsg-wh")
    )


def brute_force_components(dsg) -> dict[str, list[set[str]]]:
    """Weakly connected components per prompt, by networkx, from the loader's questions."""
    graphs: dict[str, nx.DiGraph] = {}
    for q in dsg.questions:
        graphs.setdefault(q["prompt_id"], nx.DiGraph()).add_node(q["question_id"])
    for prompt, parent, child in dsg.edges():
        graphs[prompt].add_edge(parent, child)
    return {p: [set(c) for c in nx.weakly_connected_components(g)] for p, g in graphs.items()}


def test_loader_repairs_the_dirty_rows_into_dags(dsg):
    # The file has word-valued dependencies, self-loops, missing parents and cycles.
    assert dsg.repairs["non_numeric_parent"] > 0
    assert sum(dsg.repairs.values()) > dsg.repairs["non_numeric_parent"]
    graphs: dict[str, nx.DiGraph] = {}
    for prompt, parent, child in dsg.edges():
        graphs.setdefault(prompt, nx.DiGraph()).add_edge(parent, child)
    assert all(nx.is_directed_acyclic_graph(g) for g in graphs.values())
    assert len(dsg.prompts) == 1060


def test_atlas_matches_networkx(dsg, warehouse):
    components = brute_force_components(dsg)
    capability = {(q["prompt_id"], q["question_id"]): q["capability"] for q in dsg.questions}
    tag_sets = Counter()
    n_multi, prompts_multi = 0, 0
    for prompt, comps in components.items():
        sets = ["+".join(sorted({capability[prompt, q] for q in comp})) for comp in comps]
        tag_sets.update(sets)
        multi = sum(1 for s in sets if "+" in s)
        n_multi += multi
        prompts_multi += multi > 0
    n_components = sum(len(c) for c in components.values())

    (row,) = query(
        warehouse,
        "select n_prompts, n_questions, n_components, n_multi_tag_components, "
        "n_prompts_with_multi_tag_component from marts.agg_dsg_atlas where language = 'en'",
    )
    assert row == (len(components), len(dsg.questions), n_components, n_multi, prompts_multi)
    got = dict(query(warehouse, "select tag_set, n_components from marts.agg_tag_set_frequencies"))
    assert got == dict(tag_sets)


def test_component_membership_matches_networkx(dsg, warehouse):
    components = brute_force_components(dsg)
    got: dict[str, dict[str, set[str]]] = {}
    for prompt, question, component in query(
        warehouse,
        "select prompt_id, question_id, component_id from intermediate.int_question_graph",
    ):
        got.setdefault(prompt, {}).setdefault(component, set()).add(question)
    for prompt, comps in components.items():
        assert sorted(map(sorted, got[prompt].values())) == sorted(map(sorted, comps)), prompt
