"""What the load test prints after each run, and which server code it measured."""

from __future__ import annotations

import subprocess
from pathlib import Path

from loadtests.run.runs import RunResult


def print_summary(result: RunResult, title: str) -> None:
    print(f"\n== {title}: locust exit code {result.exit_code}")
    print(f"{'type':6} {'name':28} {'reqs':>8} {'fails':>6} {'req/s':>8} {'p50':>6} {'p99':>6}")
    for row in result.stats:
        p50 = "" if row["p50_ms"] is None else f"{row['p50_ms']:.0f}"
        p99 = "" if row["p99_ms"] is None else f"{row['p99_ms']:.0f}"
        print(
            f"{row['type']:6} {row['name'][:28]:28} {row['requests']:8} {row['failures']:6} "
            f"{row['rps']:8.1f} {p50:>6} {p99:>6}"
        )
    if result.cpu:
        print(f"CPU over {result.cpu['window_seconds']} s ({result.cpu['cores']} cores):")
        for name, percent in result.cpu["percent_of_one_core"].items():
            print(f"  {name:32} {percent:6.1f}% of a core")
    if result.probe:
        print(
            f"probe ({result.probe['tables']} {result.probe['transport']} tables, outside locust):"
        )
        for name, row in result.probe["samples"].items():
            if row["count"]:
                print(
                    f"  {name:8} {row['count']:6} moves"
                    f"  p50 {row['p50']:.0f}  p99 {row['p99']:.0f} ms"
                )
        for failure in result.probe["failures"]:
            print(f"  failed: {failure}")
    if result.profile:
        print("server profile (top):")
        print("\n".join(result.profile.splitlines()[:15]))


#: the sample of one move per metric and table transport: ``call``, the request that


def server_code(root: Path) -> str:
    """The checkout's commit, marked when its server code has uncommitted changes."""
    try:
        head = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=root, capture_output=True, text=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--", "engine", "services", "glintwick"],
            cwd=root,
            capture_output=True,
            text=True,
        ).stdout.strip()
    except OSError:
        return ""
    return head + ("+uncommitted changes" if dirty else "")
