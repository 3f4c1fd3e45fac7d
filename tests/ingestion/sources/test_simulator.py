"""The simulator's interface: scales, the files and summary it writes, determinism, JSONL and
Parquet alike, the console entry point, overriding generators and rates, and a taxonomy and
generators read from other seeds.
"""

from __future__ import annotations

import csv
import json
from collections import defaultdict

import pytest

from ingestion.bundle.format import TABLES
from ingestion.paths import SEEDS_DIR
from ingestion.sources import simulator
from ingestion.sources.simulator import (
    DEMO_CONCEPTS,
    PAPER_CONCEPTS,
    SimulationConfig,
    SimulationSummary,
    parse_scale,
    simulate,
)
from tests.ingestion.sources.simulated import paper_table2, read_table


@pytest.fixture(scope="module")
def small(tmp_path_factory) -> SimulationSummary:
    """Every generator, 50 concepts."""
    return simulate(tmp_path_factory.mktemp("small"), SimulationConfig(concepts=50, seed=0))


# ---------------------------------------------------------------------------------------------
# API
# ---------------------------------------------------------------------------------------------


def test_parse_scale():
    assert parse_scale("paper") == PAPER_CONCEPTS == 6573
    assert parse_scale("demo") == DEMO_CONCEPTS
    assert parse_scale("120") == 120
    assert parse_scale(7) == 7
    for bad in ("0", "-3", "lots", "1.5"):
        with pytest.raises(ValueError):
            parse_scale(bad)


def test_summary_and_files(small):
    # every table but the human ratings and a converter's report, which a simulation has none of
    assert set(small.paths) == set(TABLES) - {"ratings", "conversion_report"}
    for name, path in small.paths.items():
        assert path == small.out_dir / f"{name}.jsonl"
        rows = read_table(small.out_dir, name)
        assert len(rows) == small.row_counts[name]
        # the contract's columns in order; optional trailing ones (the judge's) may be left out
        assert all(list(r) == list(TABLES[name].column_names)[: len(r)] for r in rows[:50])
    assert small.planted_path.exists()
    n_models = len(small.models)
    assert n_models == 13
    assert small.row_counts["prompts"] == 2 * 50
    assert small.row_counts["images"] == n_models * 2 * 50
    assert small.row_counts["judgments"] == n_models * small.row_counts["questions"]


def test_deterministic(small, tmp_path):
    again = simulate(tmp_path / "again", SimulationConfig(concepts=50, seed=0))
    for name, path in small.paths.items():
        assert path.read_bytes() == again.paths[name].read_bytes(), name
    assert small.planted_path.read_bytes() == again.planted_path.read_bytes()
    other = simulate(tmp_path / "other", SimulationConfig(concepts=50, seed=1))
    assert other.paths["judgments"].read_bytes() != small.paths["judgments"].read_bytes()


def test_judgment_lines_are_plain_json(small):
    lines = small.paths["judgments"].read_text(encoding="utf-8").splitlines()
    for line in lines[:2000]:
        record = json.loads(line)
        assert line == json.dumps(record, ensure_ascii=False)


def test_parquet_holds_the_same_rows(tmp_path):
    a = simulate(tmp_path / "j", SimulationConfig(concepts=20, models=["lens"], fmt="jsonl"))
    b = simulate(tmp_path / "p", SimulationConfig(concepts=20, models=["lens"], fmt="parquet"))
    assert all(p.suffix == ".parquet" for p in b.paths.values())
    for name in a.paths:
        ja, pb = read_table(a.out_dir, name), read_table(b.out_dir, name)
        for row in pb:
            if "blocks" in row:
                row["blocks"] = list(row["blocks"])
        assert ja == pb, name


def test_cli(tmp_path, capsys):
    assert simulator.main(["--out", str(tmp_path), "--concepts", "5", "--format", "parquet"]) == 0
    assert (tmp_path / "judgments.parquet").exists()
    assert "judgments" in capsys.readouterr().out


def test_models_and_rates_override(tmp_path, small):
    rates = {("lens", "en", "color"): 0.5, ("lens", "zh", "text_rendering"): 1.0}
    config = SimulationConfig(concepts=50, models=["flux1-dev", "lens"], rates=rates)
    sub = simulate(tmp_path, config)
    planted = json.loads(sub.planted_path.read_text(encoding="utf-8"))
    assert planted["models"] == ["flux1-dev", "lens"]
    assert planted["rates"]["lens"]["en"]["capabilities"]["color"] == 0.5
    assert planted["text_char_accuracy"]["lens"]["zh"] == 1.0
    # A perfect renderer reproduces every target in an ok transcription.
    targets = defaultdict(set)
    for q in read_table(sub.out_dir, "questions"):
        if q["text_target"]:
            targets[q["prompt_id"]].add(q["text_target"])
    for t in read_table(sub.out_dir, "transcriptions"):
        if t["model_id"] == "lens" and t["prompt_id"].endswith("-zh") and t["status"] == "ok":
            assert targets[t["prompt_id"]] <= set(t["blocks"])

    # Restricting the generators leaves the others' draws unchanged.
    def of(folder, table, model):
        return [j for j in read_table(folder, table) if j["model_id"] == model]

    for table in ("judgments", "images", "transcriptions"):
        assert of(sub.out_dir, table, "flux1-dev") == of(small.out_dir, table, "flux1-dev")
    with pytest.raises(ValueError, match="unknown"):
        simulate(tmp_path / "x", SimulationConfig(concepts=5, models=["no-such-model"]))
    with pytest.raises(ValueError, match="unknown language or capability"):
        colour = {("lens", "en", "colour"): 1}
        simulate(tmp_path / "z", SimulationConfig(concepts=5, models=["lens"], rates=colour))
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        over_one = {("lens", "en", "color"): 2}
        simulate(tmp_path / "y", SimulationConfig(concepts=5, models=["lens"], rates=over_one))


def test_taxonomy_and_generators_come_from_the_seeds(tmp_path):
    """Another taxonomy (no `lighting`, a new `weather`) and a generator absent from Table 2."""
    seeds = tmp_path / "seeds"
    seeds.mkdir()
    for name in ("generators.csv", "paper_table2.csv"):
        (seeds / name).write_text((SEEDS_DIR / name).read_text(encoding="utf-8"), encoding="utf-8")
    with (SEEDS_DIR / "capabilities.csv").open(encoding="utf-8") as f:
        rows = [r for r in csv.DictReader(f) if r["capability"] != "lighting"]
    weather = {"capability": "weather", "capability_name": "Weather", "capability_order": "99"}
    rows.append(rows[-1] | weather)
    with (seeds / "capabilities.csv").open("w", encoding="utf-8", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    with (seeds / "generators.csv").open("a", encoding="utf-8") as f:
        f.write("toy,Toy,none/toy,DiffusionPipeline,4,1.0,512,512,2,1.0,assumed\n")

    out = simulate(tmp_path / "a", SimulationConfig(concepts=30, models=["lens"], seeds_dir=seeds))
    planted = json.loads(out.planted_path.read_text(encoding="utf-8"))
    counts = planted["questions_per_capability"]
    assert "lighting" not in counts and counts["weather"] == 0 and counts["color"] > 0
    lens = planted["rates"]["lens"]["en"]
    assert lens["groups"]["semantics"] == pytest.approx(
        paper_table2()["lens", "en", "semantics"] / 100
    )
    assert "weather" in lens["capabilities"]
    assert "lighting" not in {q["capability"] for q in read_table(out.out_dir, "questions")}

    with pytest.raises(ValueError, match="no rate"):
        simulate(tmp_path / "b", SimulationConfig(concepts=5, models=["toy"], seeds_dir=seeds))
    rates = {("toy", lang, r["capability"]): 0.5 for lang in ("en", "zh") for r in rows}
    toy_config = SimulationConfig(concepts=5, models=["toy"], rates=rates, seeds_dir=seeds)
    toy = simulate(tmp_path / "c", toy_config)
    images = read_table(toy.out_dir, "images")
    assert {(i["width"], i["gpus"]) for i in images} == {(512, 2)}
