"""The CPU time of the load test's processes, sampled every second (``psutil``)."""

from __future__ import annotations

import contextlib
import threading
import time
from typing import Any

import psutil


def _note_tree_cpu(pid: int, seen: dict[int, float]) -> None:
    """Note the CPU seconds (user + system) of each process of a tree in ``seen``.

    ``seen`` keeps every process ever sampled at its last sighting, so one that has
    ended (a locust worker process at the end of the run) still counts what it used.
    """
    try:
        root = psutil.Process(pid)
        family = [root, *root.children(recursive=True)]
    except psutil.NoSuchProcess:
        family = []
    for process in family:
        with contextlib.suppress(psutil.NoSuchProcess):
            times = process.cpu_times()
            seen[process.pid] = times.user + times.system


class CpuSampler:
    """Samples the CPU seconds of named process trees (and the machine) every second.

    The figures are taken over a window that leaves out the first seconds (starting,
    spawning users) and the last (stopping).
    """

    def __init__(self, groups: dict[str, list[int]]) -> None:
        self.groups = groups
        self.samples: list[tuple[float, dict[str, float], float]] = []
        self._seen: dict[str, dict[int, float]] = {name: {} for name in groups}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _sample(self) -> None:
        per_group = {}
        for name, pids in self.groups.items():
            for pid in pids:
                _note_tree_cpu(pid, self._seen[name])
            per_group[name] = sum(self._seen[name].values())
        machine = psutil.cpu_times()
        busy = machine.user + machine.system + machine.nice + machine.irq + machine.softirq
        self.samples.append((time.monotonic(), per_group, busy))

    def _run(self) -> None:
        while not self._stop.wait(1.0):
            self._sample()

    def start(self) -> None:
        self._sample()
        self._thread.start()

    def stop(self) -> dict[str, Any]:
        self._stop.set()
        self._thread.join()
        if len(self.samples) < 3:
            return {}
        # drop the first seconds (start-up, spawning) and the last (shutting down)
        first, last = self.samples[min(5, len(self.samples) // 4)], self.samples[-2]
        wall = last[0] - first[0]
        cores = psutil.cpu_count() or 1
        split = {
            name: round(100 * (last[1][name] - first[1][name]) / wall, 1) for name in self.groups
        }
        machine = 100 * (last[2] - first[2]) / wall
        split["everything else on the machine"] = round(machine - sum(split.values()), 1)
        return {
            "window_seconds": round(wall, 1),
            "cores": cores,
            "percent_of_one_core": split,
            "machine_busy_percent_of_all_cores": round(machine / cores, 1),
        }
