"""The test hook's import failures (`QCT2I_GPU_BENCH_FAULT`, bench/gpu_bench_run.py `FAULTS`),
imported by bench/gpu_bench_child.py before torch, transformers and diffusers, so a forced
failure costs no library import (tests/bench/test_gpu_bench_dry_run.py). Only the child module
imports it: the parent, also a process without a multiprocessing parent, must never fail here.

"import-error" fails the child module's import in every process, as a missing library would (the
forkserver ignores an ImportError in its preload; the plan's child then fails with it);
"forkserver-crash" fails it with another error in the forkserver only, the one process that
imports the child module without a multiprocessing parent: the server dies, and the parent's
`process.start()` raises."""

from __future__ import annotations

import multiprocessing

from bench.gpu_bench_run import FAULT_ENV, injected_faults

_faults = injected_faults()
# the crash first: with both, the server dies and the spawned children then miss an import
if "forkserver-crash" in _faults and multiprocessing.parent_process() is None:
    raise RuntimeError(f"injected: forkserver-crash ({FAULT_ENV})")
if "import-error" in _faults:
    raise ImportError(f"injected: import-error ({FAULT_ENV})")
