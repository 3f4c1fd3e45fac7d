"""The `qct2i` command as a user types it, for the figure scripts that build warehouses."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path


def qct2i(args: Sequence[str], warehouse: Path) -> str:
    """Run `qct2i ARGS` on `warehouse` (this interpreter's environment); its output, or the
    script stops with the command's output and errors."""
    env = {**os.environ, "QCT2I_WAREHOUSE": str(warehouse)}
    command = Path(sys.executable).parent / "qct2i"
    result = subprocess.run([str(command), *args], env=env, capture_output=True, text=True)
    if result.returncode != 0:
        raise SystemExit(f"qct2i {' '.join(args)} failed:\n{result.stdout}\n{result.stderr}")
    return result.stdout
