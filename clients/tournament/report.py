"""The tournament's outputs: a terminal table, JSON, CSV and a PNG chart of ratings."""

from __future__ import annotations

import csv
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any


def table(summary: Mapping[str, Any]) -> str:
    lines = [
        f"rule set {summary['ruleset']} ({summary['ruleset_hash'][:12]}), seed {summary['seed']},"
        f" {summary['games']} games, mode {summary['mode']}",
        f"{'bot':<10} {'games':>6} {'mean pen.':>10} {'95% CI':>17} {'win share':>10}"
        f" {'mu':>7} {'sigma':>6} {'ordinal':>8}",
    ]
    ratings = {r["bot"]: r for r in summary["ratings"]}
    for s in summary["stats"]:
        r = ratings.get(s["bot"], {"mu": 0.0, "sigma": 0.0, "ordinal": 0.0})
        ci = f"[{s['ci_low']:.1f}, {s['ci_high']:.1f}]"
        lines.append(
            f"{s['bot']:<10} {s['games']:>6} {s['mean_penalty']:>10.1f} {ci:>17}"
            f" {s['win_share']:>10.3f} {r['mu']:>7.2f} {r['sigma']:>6.2f} {r['ordinal']:>8.2f}"
        )
    for p in summary.get("pairs", []):
        lines.append(
            f"{p['a']} - {p['b']}: {p['mean_difference']:+.1f} per game"
            f" [{p['ci_low']:+.1f}, {p['ci_high']:+.1f}] over {p['deal_sets']} deal sets,"
            f" {p['a']} better in {p['a_better_share']:.0%}"
        )
    for o in summary.get("order_spreads", []):
        by_order = ", ".join(
            f"{'-'.join(order)}: {d:+.1f}"
            for order, d in zip(o["orders"], o["mean_differences"], strict=True)
        )
        verdict = "significant" if o["significant"] else "not significant"
        lines.append(
            f"seat order, {o['a']} - {o['b']}: spread {o['spread']:.1f} ({verdict}); {by_order}"
        )
    endings = summary.get("round_ends")
    if endings and endings["rounds"]:
        lines.append(
            f"rounds: {endings['rounds']}, nobody out in {endings['nobody_out_share']:.0%}"
        )
        for row in endings["by_round"]:
            counts = ", ".join(f"{k} {v}" for k, v in row.items() if k != "round" and v)
            lines.append(f"  round {row['round']}: {counts}")
    if summary.get("sprt"):
        test = summary["sprt"]
        a, b = summary["sprt_pair"]
        lines.append(
            f"SPRT {a} vs {b} ({test['hypotheses']}): {test['decision']} after"
            f" {test['deal_sets']} deal sets, mean {a} - {b} {test['mean_difference']:+.1f}"
            f" (sd {test['sd']:.1f}), LLR {test['llr']:.2f} in [{test['lower']:.2f},"
            f" {test['upper']:.2f}]"
        )
    return "\n".join(lines)


def write(summary: Mapping[str, Any], rows: list[dict[str, Any]], out: Path) -> list[Path]:
    """tournament.json (summary + every game), games.csv, pairs.csv, pairs.png (the
    paired differences with their intervals, and each seat order's), ratings.png; the
    paths written."""
    out.mkdir(parents=True, exist_ok=True)
    paths = [
        out / "tournament.json",
        out / "games.csv",
        out / "pairs.csv",
        out / "pairs.png",
        out / "ratings.png",
    ]
    paths[0].write_text(json.dumps({**summary, "games_played": rows}, indent=2) + "\n")
    with paths[1].open("w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(
            [
                "index",
                "deal",
                "order",
                "rotation",
                "seed",
                "seat",
                "bot",
                "score",
                "won",
                "ruleset_hash",
                "tournament_seed",
            ]
        )
        for row in rows:
            for seat, bot in enumerate(row["seats"]):
                writer.writerow(
                    [
                        row["index"],
                        row["deal"],
                        row.get("order", 0),
                        row["rotation"],
                        row["seed"],
                        seat,
                        bot,
                        row["scores"][seat],
                        int(seat in row["winners"]),
                        row["ruleset_hash"],
                        row["tournament_seed"],
                    ]
                )
    with paths[2].open("w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["a", "b", "deal_sets", "mean_difference", "ci_low", "ci_high"])
        for p in summary.get("pairs", []):
            writer.writerow(
                [p["a"], p["b"], p["deal_sets"], p["mean_difference"], p["ci_low"], p["ci_high"]]
            )
    pairs_chart(summary, paths[3])
    chart(summary, paths[4])
    return paths


def pairs_chart(summary: Mapping[str, Any], path: Path) -> None:
    """Each pair's paired difference per game (A - B: left of 0, A is better) with its
    95% interval; a lineup played in several seat orders adds each order's (crosses)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    pairs = summary.get("pairs", [])
    spreads = {(o["a"], o["b"]): o for o in summary.get("order_spreads", [])}
    fig, ax = plt.subplots(figsize=(7, 0.6 * max(1, len(pairs)) + 1.6))
    for y, p in enumerate(pairs):
        mean = p["mean_difference"]
        ax.errorbar(
            [mean],
            [y],
            xerr=[[mean - p["ci_low"]], [p["ci_high"] - mean]],
            fmt="o",
            color="tab:blue",
            capsize=4,
        )
        spread = spreads.get((p["a"], p["b"]))
        sign = 1.0
        if spread is None:
            spread, sign = spreads.get((p["b"], p["a"])), -1.0
        if spread is not None:
            xs = [sign * d for d in spread["mean_differences"]]
            ax.plot(xs, [y] * len(xs), "x", color="tab:orange")
    ax.axvline(0, color="grey", linewidth=0.8)
    widest = max((max(abs(p["ci_low"]), abs(p["ci_high"])) for p in pairs), default=0.0)
    if widest > 300:
        # a random bot's hundreds of points would flatten every other pair: a scale
        # linear near 0 and logarithmic beyond keeps both readable
        ax.set_xscale("symlog", linthresh=20)
    ax.set_yticks(range(len(pairs)), [f"{p['a']} - {p['b']}" for p in pairs])
    ax.invert_yaxis()
    ax.set_xlabel(
        "paired difference, points per game (95% interval; x: each seat order)"
        + ("; symlog" if widest > 300 else "")
    )
    ax.set_title(f"{summary['ruleset']} seed {summary['seed']} ({summary['ruleset_hash'][:8]})")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def chart(summary: Mapping[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ratings = summary["ratings"]
    names = [r["bot"] for r in ratings]
    mus = [r["mu"] for r in ratings]
    errs = [3 * r["sigma"] for r in ratings]
    fig, ax = plt.subplots(figsize=(6, 0.6 * len(names) + 1.5))
    ax.errorbar(mus, range(len(names)), xerr=errs, fmt="o", capsize=4)
    ax.set_yticks(range(len(names)), names)
    ax.invert_yaxis()
    ax.set_xlabel("OpenSkill mu ± 3 sigma")
    ax.set_title(f"{summary['ruleset']} seed {summary['seed']} ({summary['ruleset_hash'][:8]})")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
