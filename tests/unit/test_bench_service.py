"""The service benchmark's CPU accounting (Linux /proc)."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from bench.bench_service import cpu_seconds

pytestmark = pytest.mark.skipif(not os.path.exists("/proc/self/stat"), reason="needs /proc")


def test_cpu_seconds_counts_a_process_and_its_children() -> None:
    # a parent that starts a child burning about half a second of CPU, then waits
    burn = "import time\nend = time.process_time() + 0.5\nwhile time.process_time() < end: pass"
    parent = subprocess.Popen(
        [
            sys.executable,
            "-c",
            f"import subprocess, sys; subprocess.run([sys.executable, '-c', {burn!r}])",
        ]
    )
    try:
        seen = 0.0
        deadline = time.monotonic() + 20
        while parent.poll() is None and time.monotonic() < deadline:
            seen = max(seen, cpu_seconds(parent.pid) or 0.0)
            time.sleep(0.05)
    finally:
        parent.wait(20)
    assert seen >= 0.3  # the child's burning, counted under the parent
    assert cpu_seconds(parent.pid) is None  # gone: no figure rather than a wrong one
