"""Running a fresh interpreter on a checkout, as the compiled builds' tests do
(tests/unit/test_solver_build.py, tests/unit/test_clients_build.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any


def run_python(script: str, cwd: Path, pure: bool, *args: str) -> Any:
    """What ``script`` prints (one JSON value), run by a fresh interpreter in ``cwd``
    (whose checkout it imports first); ``pure``: with ``GLINTWICK_PURE_PYTHON=1``."""
    env = {k: v for k, v in os.environ.items() if k != "GLINTWICK_PURE_PYTHON"}
    if pure:
        env["GLINTWICK_PURE_PYTHON"] = "1"
    done = subprocess.run(
        [sys.executable, "-c", script, *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        check=True,
        timeout=240,
    )
    return json.loads(done.stdout)
