"""The server recorded with py-spy (``--profile``), and the top of what it recorded."""

from __future__ import annotations

import collections
import re
import shutil
import subprocess
import sys
from pathlib import Path


def profile_top(raw: Path, limit: int = 25) -> str:
    """The top of a py-spy raw (collapsed stacks) profile: self and inclusive shares."""
    own: collections.Counter[str] = collections.Counter()
    inclusive: collections.Counter[str] = collections.Counter()
    total = 0
    for line in raw.read_text(errors="replace").splitlines():
        stack, _, count_text = line.rpartition(" ")
        if not stack or not count_text.isdigit():
            continue
        count = int(count_text)
        frames = [re.sub(r":\d+\)$", ")", f) for f in stack.split(";") if "(" in f]
        if not frames:
            continue
        total += count
        own[frames[-1]] += count
        for frame in set(frames):
            inclusive[frame] += count
    if not total:
        return "no samples\n"
    lines = [f"{total} samples", "", "self (on-CPU in the function itself):"]
    lines += [f"  {100 * n / total:5.1f}%  {f}" for f, n in own.most_common(limit)]
    lines += ["", "inclusive (the function and what it calls):"]
    lines += [f"  {100 * n / total:5.1f}%  {f}" for f, n in inclusive.most_common(limit)]
    return "\n".join(lines) + "\n"


def start_profiler(
    pid: int, duration: float, out: Path, native: bool = False
) -> subprocess.Popen[bytes] | None:
    spy = shutil.which("py-spy", path=str(Path(sys.executable).parent)) or shutil.which("py-spy")
    if spy is None:
        print("py-spy is not installed: no profile", file=sys.stderr)
        return None
    command = [
        spy, "record", "--pid", str(pid), "--subprocesses", "--rate", "100",
        "--duration", str(max(1, int(duration))), "--format", "raw", "--output", str(out),
    ]  # fmt: skip
    if native:
        command.append("--native")
    return subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
