"""The registry's real architectures at their real sizes (issue 23), for a borrowed GPU.

`bench/arch_configs/<model_id>.json` writes down, for each registry row that diffusers 0.42.1 /
transformers can build, every component's class, its real config and where the values come from,
with the expected parameter count and its source (`judge.json` is the default judge). Nothing is
downloaded: a component is built from its config with random (or, on the meta device, no) weights.

`python -m bench.gpu_bench --check-configs` builds every component on the meta device, counts its
parameters and prints them beside the expected counts; it exits 1 when a count whose source is
verified is more than 3% away (a source starting with "unverified:" is printed, never judged).
Registry rows with no config are printed with the reason.

`python -m bench.gpu_bench --out DIR` is the timed run (bench/gpu_bench_run.py: every row's real
pipeline class built on the GPU with random weights and timed; `--dry-run`: the same on CPU at
each config's `tiny` sizes); it builds with `load_arch`, `tiny_spec` and `build_component`.

This module runs on the GPU machine with only a carried diffusers wheel beside torch and
transformers: it imports nothing but the standard library, torch, transformers, accelerate,
safetensors, numpy, pillow and diffusers, never the project's warehouse packages (they pull in
Dagster, pydantic and DuckDB); the registry is read with the csv module.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import importlib
import json
import sys
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

BENCH_DIR = Path(__file__).resolve().parent
ARCH_DIR = BENCH_DIR / "arch_configs"
REGISTRY_CSV = BENCH_DIR.parent / "seeds" / "generators.csv"
JUDGE_ID = "judge"
TOLERANCE = 0.03
UNVERIFIED = "unverified:"
BF16_BYTES = 2
# the only modules a config may name: a config file must not make the check import anything else
COMPONENT_LIBRARIES = ("diffusers", "transformers")


# ---------------------------------------------------------------------------------- configs


def registry_rows(path: Path = REGISTRY_CSV) -> list[dict[str, str]]:
    with open(path, newline="") as handle:
        return list(csv.DictReader(handle))


def load_arch(model_id: str, arch_dir: Path = ARCH_DIR) -> dict:
    """The architecture written down for one registry row (or the judge)."""
    return json.loads((arch_dir / f"{model_id}.json").read_text())


def arch_ids(arch_dir: Path = ARCH_DIR) -> list[str]:
    return sorted(path.stem for path in arch_dir.glob("*.json"))


def no_pipeline_reason(row: dict[str, str]) -> str | None:
    """Why a registry row has no diffusers pipeline class, or None when it names one."""
    if not row["pipeline_class"]:
        return f"no diffusers pipeline class (backend {row['backend']!r} brings its own code)"
    return None


def why_unbuildable(row: dict[str, str]) -> str | None:
    """Why a registry row has no architecture that diffusers can build, or None when it has one."""
    if reason := no_pipeline_reason(row):
        return reason
    pipeline = row["pipeline_class"]
    import diffusers

    if not hasattr(diffusers, pipeline):
        return f"diffusers {diffusers.__version__} has no {pipeline}"
    return None


# ------------------------------------------------------------------------------- components


def component_class(spec: dict):
    library = spec["library"]
    if library not in COMPONENT_LIBRARIES:
        raise ValueError(f"component library must be one of {COMPONENT_LIBRARIES}, not {library!r}")
    return getattr(importlib.import_module(library), spec["class"])


def merge_config(base: dict, override: dict) -> dict:
    """`base` with `override` merged in: nested dicts key by key, anything else replaced."""
    merged = dict(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            value = merge_config(merged[key], value)
        merged[key] = value
    return merged


def tiny_spec(spec: dict) -> dict:
    """The component as the dry run builds it: its `tiny` sizes merged over its real config (the
    same class; the sizes of ingestion/backends/tiny/pipelines.py)."""
    return {**spec, "config": merge_config(spec["config"], spec.get("tiny", {}))}


@contextlib.contextmanager
def default_dtype(dtype):
    """Parameters made inside are `dtype` from the start (as from_pretrained's `dtype=`): a
    FLUX.2-dev built in float32 and cast would need twice its 113 GB, the judge 124 GB."""
    import torch

    before = torch.get_default_dtype()
    torch.set_default_dtype(dtype)
    try:
        yield
    finally:
        torch.set_default_dtype(before)


def build_component(spec: dict, device: str = "meta"):
    """One component from its written-down config, on `device`: on "meta" no memory is taken, which
    is enough to count; elsewhere the weights are random."""
    import torch

    cls = component_class(spec)
    with torch.device(device):
        if spec["library"] == "diffusers":
            return cls.from_config(spec["config"])
        return cls(cls.config_class(**spec["config"]))


def count_params(model, scope: Iterable[str] | None = None) -> int:
    """Parameters of `model`, or of its submodules named in `scope`; tied weights count once."""
    modules = [model.get_submodule(name) for name in scope] if scope else [model]
    unique = {id(p): p for module in modules for p in module.parameters()}
    return sum(p.numel() for p in unique.values())


# ------------------------------------------------------------------------------------ check


@dataclass(frozen=True)
class Count:
    row: str
    component: str
    actual: int  # over the expected count's scope, when it has one
    expected: int | None
    source: str
    whole: int  # every parameter of the component, whatever the scope

    @property
    def is_verified(self) -> bool:
        return self.expected is not None and not self.source.startswith(UNVERIFIED)

    @property
    def ratio(self) -> float | None:
        return self.actual / self.expected if self.expected else None

    @property
    def is_within(self) -> bool:
        return not self.is_verified or abs(self.ratio - 1) <= TOLERANCE


def count_component(row: str, name: str, spec: dict) -> Count:
    expected = spec["expected"]
    model = build_component(spec)
    scope = expected.get("scope")
    component = f"{name} [{'+'.join(scope)}]" if scope else name
    actual, whole = count_params(model, scope), count_params(model)
    return Count(row, component, actual, expected["params"], expected["source"], whole)


def row_total(row: str, counts: list[Count]) -> Count:
    """The row's verified part: the components whose counts have a verified source, summed,
    against the sum of their expected counts (the rest is named in the source column)."""
    whole = sum(c.whole for c in counts)
    verified = [c for c in counts if c.is_verified]
    if not verified:
        return Count(
            row, "TOTAL", whole, None, f"{UNVERIFIED} no component count is verified", whole
        )
    left_out = whole - sum(c.actual for c in verified)
    source = f"sum of the {len(verified)} verified of {len(counts)} components"
    if left_out:
        source += f"; {format_params(left_out)} without a verified count left out of both columns"
    actual = sum(c.actual for c in verified)
    return Count(row, "TOTAL", actual, sum(c.expected for c in verified), source, whole)


def check_arch(model_id: str, arch_dir: Path = ARCH_DIR) -> list[Count]:
    """Every component of one config counted, then the row's total."""
    arch = load_arch(model_id, arch_dir)
    counts = [count_component(model_id, n, s) for n, s in arch["components"].items()]
    return [*counts, row_total(model_id, counts)]


def format_params(n: int | None) -> str:
    return "-" if n is None else f"{n / 1e9:.3f}B"


def format_count(c: Count) -> str:
    ratio = "-" if c.ratio is None else f"{c.ratio:.3f}"
    flag = "" if c.is_within else "  <-- beyond 3%"
    return (
        f"{c.row:15} {c.component:44} {format_params(c.actual):>9} {format_params(c.expected):>9}"
        f" {ratio:>6}  {c.source}{flag}"
    )


def weights_line(total: Count, min_gpu_gb: str | None) -> str:
    """What the row's weights take in bf16, beside the registry's memory floor for the row (which
    also has to hold activations, so it should not be below the weights unless the row offloads)."""
    gb = total.whole * BF16_BYTES / 1e9
    floor = (
        f"registry min_gpu_gb {min_gpu_gb or '(empty)'}"
        if min_gpu_gb is not None
        else "not in the registry"
    )
    return f"{total.row:15} {'weights in bf16':44} {gb:8.1f}GB  ({floor})"


def check_configs(
    model_ids: Iterable[str] | None = None,
    arch_dir: Path = ARCH_DIR,
    registry: Path = REGISTRY_CSV,
    out: TextIO = sys.stdout,
) -> tuple[int, list[Count]]:
    """(exit status, counts) for the configs named (all of `arch_dir` by default); with no names
    the registry rows that have no config are listed with the reason."""
    started = time.perf_counter()
    ids = list(model_ids) if model_ids is not None else arch_ids(arch_dir)
    header = f"{'row':15} {'component':44} {'actual':>9} {'expected':>9} {'ratio':>6}  source"
    print(header, file=out)
    rows = registry_rows(registry)
    min_gpu_gb = {row["model_id"]: row["min_gpu_gb"] for row in rows}
    counts, failures = [], []
    for model_id in ids:
        try:
            row_counts = check_arch(model_id, arch_dir)
        except Exception as error:  # a config that does not build is a failure, not a crash
            failures.append(model_id)
            print(f"{model_id:15} could not be built: {type(error).__name__}: {error}", file=out)
            continue
        counts += row_counts
        for c in row_counts:
            print(format_count(c), file=out)
        print(weights_line(row_counts[-1], min_gpu_gb.get(model_id)), file=out)
    if model_ids is None:
        print_unbuildable(rows, set(ids), out)
    failures += [f"{c.row}/{c.component}" for c in counts if not c.is_within]
    seconds = time.perf_counter() - started
    print(f"{len(ids)} configs in {seconds:.1f} s; beyond 3%: {failures or 'none'}", file=out)
    return (1 if failures else 0), counts


def print_unbuildable(rows: list[dict[str, str]], built: set[str], out: TextIO) -> None:
    for row in rows:
        if row["model_id"] in built:
            continue
        reason = why_unbuildable(row) or "buildable, but no config in bench/arch_configs"
        print(f"{row['model_id']:15} not built: {reason}", file=out)


# -------------------------------------------------------------------------------------- cli


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.gpu_bench", description=__doc__.split("\n")[0]
    )
    parser.add_argument(
        "--check-configs", action="store_true", help="count parameters on the meta device"
    )
    parser.add_argument("--out", type=Path, metavar="DIR", help="time the rows: DIR/gpu_bench.json")
    parser.add_argument(
        "--dry-run", action="store_true", help="the timed run on CPU with each config's tiny sizes"
    )
    parser.add_argument(
        "--budget-s", type=float, help="seconds for the whole timed run (default 480)"
    )
    parser.add_argument(
        "--start-method",
        choices=("forkserver", "spawn"),
        default="forkserver",
        help="how row processes start (spawn: each imports the libraries itself; forkserver falls"
        " back to it by itself when its server dies or its children see no GPU)",
    )
    parser.add_argument(
        "--only",
        nargs="+",
        metavar="MODEL_ID",
        help="these configs only (the timed run: judge too)",
    )
    parser.add_argument(
        "--batch",
        type=_positive_int,
        default=1,
        help="images a call (default 1; a row's max_batch_size caps it): how memory grows with"
        " the batch; `qct2i calibrate` takes batch-1 figures only",
    )
    parser.add_argument("--arch-dir", type=Path, default=ARCH_DIR, help="where the configs are")
    args = parser.parse_args(argv)
    if args.check_configs:
        status, _ = check_configs(args.only, args.arch_dir)
        return status
    if args.out is None:
        parser.error("nothing to do: pass --check-configs or --out DIR")
    from bench import gpu_bench_run

    budget_s = args.budget_s or gpu_bench_run.DEFAULT_BUDGET_S
    return gpu_bench_run.run_bench(
        args.out, args.only, budget_s, args.dry_run, args.arch_dir, args.start_method, args.batch
    )


def _positive_int(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of at least 1")
    return int(text)


if __name__ == "__main__":
    sys.exit(main())
