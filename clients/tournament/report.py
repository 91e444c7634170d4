"""The tournament's outputs: a terminal table, JSON, CSV and a PNG chart of ratings."""

from __future__ import annotations

import csv
import json
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from matplotlib.figure import Figure


#: schedules whose games are a reference's own and one bot substituted into them
SUBSTITUTIONS = ("substitution", "mutual-substitution")


def pair_label(summary: Mapping[str, Any], pair: Mapping[str, Any]) -> str:
    """What a pair's difference is, in words: at the same tables, A in B's seats among Bs,
    two candidates through the reference, or both ways."""
    a, b, design = pair["a"], pair["b"], pair.get("design", "tables")
    if design == "substitution":
        return f"{a} - {b} ({a} in each seat among {b}s)"
    if design == "via-reference":
        return f"{a} - {b} (each among {summary['bots'][0]}s)"
    if design == "mutual":
        return f"{a} - {b} (each among the other's, both ways)"
    return f"{a} - {b}"


def counted(pair: Mapping[str, Any]) -> str:
    """How many deal sets a pair's difference is over (a substitution's: deals)."""
    unit = "deal sets" if pair.get("design", "tables") == "tables" else "deals"
    return f"{pair['deal_sets']} {unit}"


def shares(pair: Mapping[str, Any]) -> str:
    return (
        f"{pair['a']} better in {pair['better_share']:.0%}, tied {pair['tied_share']:.0%},"
        f" worse {pair['worse_share']:.0%}"
    )


def table(summary: Mapping[str, Any]) -> str:
    lines = [
        f"rule set {summary['ruleset']} ({summary['ruleset_hash'][:12]}), seed {summary['seed']},"
        f" {summary['schedule']}, {summary['games']} games of"
        f" {summary.get('deal_sets', '?')} deal sets, mode {summary['mode']}",
        f"{'bot':<10} {'role':<9} {'games':>6} {'seats':>6} {'deals':>6} {'mean pen.':>10}"
        f" {'95% CI':>17} {'win share':>10} {'mu':>7} {'sigma':>6} {'ordinal':>8}",
    ]
    ratings = {r["bot"]: r for r in summary["ratings"]}
    for s in summary["stats"]:
        r = ratings.get(s["bot"], {"mu": 0.0, "sigma": 0.0, "ordinal": 0.0})
        ci = f"[{s['ci_low']:.1f}, {s['ci_high']:.1f}]"
        lines.append(
            f"{s['bot']:<10} {s.get('role') or '-':<9} {s['games']:>6} {s['seat_games']:>6}"
            f" {s['deal_sets']:>6} {s['mean_penalty']:>10.1f} {ci:>17} {s['win_share']:>10.3f}"
            f" {r['mu']:>7.2f} {r['sigma']:>6.2f} {r['ordinal']:>8.2f}"
        )
    if summary["schedule"] in SUBSTITUTIONS:
        lines.append(
            "(a reference's row: its own games, every seat; a candidate's: its one seat among"
            " references; a reference's seats beside a candidate are in neither)"
        )
    for p in summary.get("pairs", []):
        lines.append(
            f"{pair_label(summary, p)}: {p['mean_difference']:+.1f} per game"
            f" [{p['ci_low']:+.1f}, {p['ci_high']:+.1f}] over {counted(p)}, {shares(p)}"
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
            f" {test['deal_sets']} deals played both ways ({summary['schedule']}),"
            f" mean {a} - {b} {test['mean_difference']:+.1f}"
            f" (sd {test['sd']:.1f}), LLR {test['llr']:.2f} in [{test['lower']:.2f},"
            f" {test['upper']:.2f}]"
        )
    return "\n".join(lines)


#: pairs.csv's columns: A - B per game (below 0: A better), its 95% interval, and the
#: shares of deal sets (substitution: deals) where A did better, the same, worse
PAIRS_COLUMNS = (
    "a",
    "b",
    "design",
    "deal_sets",
    "mean_difference",
    "ci_low",
    "ci_high",
    "better_share",
    "tied_share",
    "worse_share",
)


def seat_role(row: Mapping[str, Any], seat: int) -> str:
    """A seat of a substitution design's game: ``reference`` (the reference's own game),
    ``candidate`` (the bot substituted into it) or ``beside`` (a reference next to a
    candidate, in no bot's mean)."""
    if row.get("reference"):
        return "reference"
    return "candidate" if seat == row["rotation"] else "beside"


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
                "reference",
                "role",
                "seed",
                "seat",
                "bot",
                "score",
                "won",
                "ruleset_hash",
                "tournament_seed",
            ]
        )
        substitution = summary["schedule"] in SUBSTITUTIONS
        for row in rows:
            for seat, bot in enumerate(row["seats"]):
                writer.writerow(
                    [
                        row["index"],
                        row["deal"],
                        row.get("order", 0),
                        row["rotation"],
                        int(row.get("reference", False)),
                        seat_role(row, seat) if substitution else "",
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
        writer.writerow(PAIRS_COLUMNS)
        for p in summary.get("pairs", []):
            writer.writerow([p.get(c, "tables") if c == "design" else p[c] for c in PAIRS_COLUMNS])
    pairs_chart(summary, paths[3])
    chart(summary, paths[4])
    return paths


def pairs_chart(summary: Mapping[str, Any], path: Path) -> None:
    import matplotlib.pyplot as plt

    fig = pairs_figure(summary)
    fig.savefig(path)
    plt.close(fig)


def pairs_figure(summary: Mapping[str, Any]) -> Figure:
    """Each pair's difference per game, A - B (left of 0: A better), with its 95%
    interval, what it compares and over how many deal sets, and the shares better,
    tied, worse; a lineup played in several seat orders adds each order's (crosses)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    pairs = summary.get("pairs", [])
    spreads = {(o["a"], o["b"]): o for o in summary.get("order_spreads", [])}
    fig, ax = plt.subplots(figsize=(10, 0.8 * max(1, len(pairs)) + 2.0))
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
    ax.set_yticks(range(len(pairs)), [pair_tick(summary, p) for p in pairs])
    ax.invert_yaxis()
    ax.set_xlabel(pairs_xlabel(bool(spreads), widest > 300))
    test = summary.get("sprt")
    ax.set_title(
        f"{summary['ruleset']} seed {summary['seed']} ({summary['ruleset_hash'][:8]}),"
        f" {summary['schedule']}"
        + (f"; SPRT: {test['decision']} after {test['deal_sets']} deals" if test else "")
    )
    fig.tight_layout()
    return fig


def pair_tick(summary: Mapping[str, Any], pair: Mapping[str, Any]) -> str:
    """A pair's label on the chart: what it compares; its count; better, tied, worse."""
    return (
        f"{pair_label(summary, pair)}\n{counted(pair)}: better {pair['better_share']:.0%},"
        f" tied {pair['tied_share']:.0%}, worse {pair['worse_share']:.0%}"
    )


def pairs_xlabel(seat_orders: bool, symlog: bool) -> str:
    return (
        "A - B, penalty points per game: below 0, A better\n(dot: mean, bar: 95% interval"
        + ("; x: each seat order" if seat_orders else "")
        + ("; symlog scale" if symlog else "")
        + ")"
    )


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
