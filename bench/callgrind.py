"""Instructions counted by callgrind: the measure of CPU cost that the other tenants of
a shared machine do not move (bench/scrub_cost.py, bench/detect_cost.py)."""

from __future__ import annotations

import os
import subprocess
import sys


def instructions(module: str, *args: str) -> int:
    """The instructions `python -m module args...` runs, start to end."""
    out = f"/tmp/{module}.{os.getpid()}.callgrind"
    subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}",
                    sys.executable, "-m", module, *args], check=True, capture_output=True)
    try:
        with open(out) as f:
            return next(int(line.split()[1]) for line in f if line.startswith("summary:"))
    finally:
        os.unlink(out)
