"""Benchmark of the contract solver over the conformance hands.

Every hand of tests/data/{solver-cases,solver-edge-cases,missing-cases}.jsonl is
timed on its own with time.perf_counter_ns, several times; a hand's time is the
median of its repetitions, and the report gives the median and the 99th
percentile of those per-hand times, per rule set and over all hands.

    python bench/bench_solver.py [--repeats N]

or ``from bench.bench_solver import run; run()``.  The numbers depend on the
machine and on what else runs on it: ``calibration_us`` (a fixed pure-Python
loop timed the same way) says how fast the interpreter ran meanwhile.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run as a script from anywhere
    sys.path.insert(0, str(ROOT))

from engine import solver  # noqa: E402
from engine.cards import Card, cards_from_codes  # noqa: E402
from engine.rulesets import RuleSet, ruleset  # noqa: E402
from engine.solver import analyse, best_selection, can_lay, missing_cards  # noqa: E402
from engine.solver.loading import load_source_form, unload_source_form  # noqa: E402

DATA = ROOT / "tests" / "data"
FILES = ("solver-cases.jsonl", "solver-edge-cases.jsonl", "missing-cases.jsonl")
FUNCTIONS: dict[str, Callable[[Sequence[Card], RuleSet, int], object]] = {
    "best_selection": best_selection,
    "can_lay": can_lay,
    "missing_cards": missing_cards,
    "analyse": analyse,
}


def load_hands() -> list[tuple[str, RuleSet, list[Card], int]]:
    hands = []
    for name in FILES:
        with open(DATA / name, encoding="utf-8") as fh:
            for line in fh:
                if not line.strip():
                    continue
                row = json.loads(line)
                rules = ruleset(row["ruleset"])
                cards = cards_from_codes(row["hand"], rules.decks, rules.jokers)
                hands.append((rules.name, rules, cards, row["round"]))
    return hands


def _time_one(fn: Callable[[], object], repeats: int) -> float:
    """Median wall time of one call, in microseconds."""
    samples = []
    for _ in range(repeats):
        t0 = time.perf_counter_ns()
        fn()
        samples.append(time.perf_counter_ns() - t0)
    return statistics.median(samples) / 1000


def _bind(
    fn: Callable[[Sequence[Card], RuleSet, int], object],
    cards: list[Card],
    rules: RuleSet,
    rnd: int,
) -> Callable[[], object]:
    def call() -> object:
        return fn(cards, rules, rnd)

    return call


def _p99(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[max(0, math.ceil(0.99 * len(ordered)) - 1)]


def _summary(values: list[float]) -> dict[str, float]:
    return {
        "n": len(values),
        "median_us": round(statistics.median(values), 1),
        "p99_us": round(_p99(values), 1),
        "max_us": round(max(values), 1),
    }


def _calibration(repeats: int) -> float:
    def loop() -> int:
        x = 0
        for i in range(1000):
            x += i * i
        return x

    return round(_time_one(loop, repeats * 5), 1)


def run(repeats: int = 7, functions: Sequence[str] = tuple(FUNCTIONS)) -> dict[str, Any]:
    """Time every hand with every function; returns the summary as plain data."""
    hands = load_hands()
    for _, rules, cards, rnd in hands:  # warm up: rule tables, imports, caches of Python
        for name in functions:
            FUNCTIONS[name](cards, rules, rnd)
    calibration_before = _calibration(repeats)
    report: dict[str, Any] = {
        "python": sys.version.split()[0],
        "repeats": repeats,
        "hands": len(hands),
    }
    for name in functions:
        fn = FUNCTIONS[name]
        per_set: dict[str, list[float]] = {}
        every: list[float] = []
        for set_name, rules, cards, rnd in hands:
            t = _time_one(_bind(fn, cards, rules, rnd), repeats)
            per_set.setdefault(set_name, []).append(t)
            every.append(t)
        summary = {"all": _summary(every)}
        summary.update({k: _summary(v) for k, v in sorted(per_set.items())})
        report[name] = summary
    report["throughput"] = _throughput(hands)
    report["calibration_us"] = round((calibration_before + _calibration(repeats)) / 2, 1)
    return report


def _throughput(
    hands: list[tuple[str, RuleSet, list[Card], int]], passes: int = 7
) -> dict[str, Any]:
    """Mean µs per call over the whole corpus, the hands in turn (as a server meets
    them, each cold), best of ``passes`` passes: the figure throughput follows,
    where the per-hand medians above describe single calls.  For the running
    solver (compiled where setup.py could build it) and its interpreted source,
    interleaved, with their ratio."""
    forms: dict[str, ModuleType] = {"running": solver}
    source_name = "engine._solver_source_bench"
    if solver.COMPILED:
        forms["source"] = load_source_form(source_name)
    out: dict[str, Any] = {"compiled": solver.COMPILED, "form": solver.SOLVER_FORM}
    for fname in ("best_selection", "analyse"):
        best = dict.fromkeys(forms, math.inf)
        for _ in range(passes):
            for form, module in forms.items():
                fn = getattr(module, fname)
                t0 = time.perf_counter_ns()
                for _, rules, cards, rnd in hands:
                    fn(cards, rules, rnd)
                mean = (time.perf_counter_ns() - t0) / len(hands) / 1000
                best[form] = min(best[form], mean)
        entry: dict[str, Any] = {f"{form}_mean_us": round(v, 1) for form, v in best.items()}
        if "source" in best:
            entry["source_over_running"] = round(best["source"] / best["running"], 2)
        out[fname] = entry
    unload_source_form(source_name)
    return out


def _print(report: dict[str, Any]) -> None:
    print(
        f"Python {report['python']}, {report['hands']} hands, median of {report['repeats']} runs "
        f"per hand; calibration loop {report['calibration_us']} us"
    )
    print(f"solver form: {report['throughput']['form']}")
    print(f"{'function':<16}{'rules':<14}{'n':>5}{'median us':>12}{'p99 us':>12}{'max us':>12}")
    for name in FUNCTIONS:
        if name not in report:
            continue
        for key, s in report[name].items():
            print(
                f"{name:<16}{key:<14}{s['n']:>5}{s['median_us']:>12.1f}{s['p99_us']:>12.1f}"
                f"{s['max_us']:>12.1f}"
            )
    for name in ("best_selection", "analyse"):
        print(f"{name}: mean over the corpus in turn {report['throughput'][name]}")


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7, help="timed calls per hand")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument(
        "--only", choices=tuple(FUNCTIONS), action="append", help="time only these functions"
    )
    args = parser.parse_args(argv)
    report = run(args.repeats, args.only or tuple(FUNCTIONS))
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        _print(report)


if __name__ == "__main__":
    main()
