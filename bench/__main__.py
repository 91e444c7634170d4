"""`make bench`: every benchmark of the project, printed and saved as JSON.

Each module under bench/ exposes ``run() -> dict``; numbers are medians unless
named otherwise, measured in this one process so that ratios compare like with like.
"""

from __future__ import annotations

import importlib
import json
import platform
import sys
import time
from pathlib import Path
from typing import Any

SUITES = (
    "bench.bench_solver",
    "bench.bench_engine",
    "bench.bench_service",
    "bench.bench_floor",
    "bench.bench_claims",
    "bench.bench_tournament",
    "bench.bench_limits",
    "bench.bench_bots",
    "bench.bench_training",
)


def machine() -> dict[str, Any]:
    import os

    return {
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        "processor": platform.processor() or "unknown",
    }


def main(argv: list[str]) -> int:
    wanted = [s for s in SUITES if not argv or any(a in s for a in argv)]
    results: dict[str, Any] = {
        "machine": machine(),
        "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    for name in wanted:
        module = importlib.import_module(name)
        print(f"== {name}", flush=True)
        results[name] = module.run()
        print(json.dumps(results[name], indent=2), flush=True)
    out = Path(__file__).parent / "results" / "latest.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(results, indent=2) + "\n")
    print(f"saved {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
