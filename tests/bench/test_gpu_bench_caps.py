"""What `bench.gpu_bench_run.run_bench` hands each job as its cap: a share of the time *left*,
on a fake clock (no child process, no model)."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from bench import gpu_bench_run


@dataclass
class FakeBudget:
    """A budget on a clock the fake jobs move: `used` seconds have passed."""

    total_s: float
    used: float = 0.0

    def elapsed(self) -> float:
        return self.used

    def left(self) -> float:
        return self.total_s - self.used


def test_run_bench_caps_each_job_from_the_time_left(monkeypatch, tmp_path):
    """Guards against caps computed from the whole budget, which add up to more than the run
    has once the plan or an earlier job has used time. Planted bug it catches (issue 36):
    `cap_share(budget.left(), ...)` in run_bench turned into `cap_share(budget.total_s, ...)`.
    By hand: 100 s; the plan uses 10 s; estimates 10, 30, 60 s (more than the 90 s left, so a
    job gets its estimate while the time lasts). Job 1: its 10 s (a share would be 9; it uses
    2 s: 88 s left); job 2: its 30 s (share 29.33; uses all: 58 s left); job 3: the 58 s left.
    With the planted bug job 2 would get 100 x 30/90 = 33.3 s."""
    budgets, caps = [], []
    used_by_job = {"a": 2.0, "b": None, "c": None}  # None: all of its cap

    def fake_budget(total_s):
        budgets.append(FakeBudget(total_s))
        return budgets[-1]

    def start_children(document, budget, only, dry_run, arch_dir, faults):
        budget.used += 10.0  # the plan's child
        estimates = {"a": 10.0, "b": 30.0, "c": 60.0}
        document |= {"generators": [], "judge": {"status": "ok"}}
        return None, [gpu_bench_run.Job(name, "x:y", (), s) for name, s in estimates.items()]

    def run_job(context, job, cap_s, document):
        caps.append(cap_s)
        taken = used_by_job[job.name]
        budgets[-1].used += cap_s if taken is None else taken

    monkeypatch.setattr(gpu_bench_run, "Budget", fake_budget)
    monkeypatch.setattr(gpu_bench_run, "start_children", start_children)
    monkeypatch.setattr(gpu_bench_run, "run_job", run_job)
    assert gpu_bench_run.run_bench(tmp_path, budget_s=100.0, dry_run=True) == 0
    assert caps == pytest.approx([10.0, 30.0, 58.0])
