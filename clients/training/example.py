"""The worked example: clone ``expert`` from recorded games, then play the clone in a
tournament against ``greedy`` and ``strong`` on deals it never saw (docs/TRAINING.md).

``python -m clients.training.example --games 300 --out /tmp/cloning`` records the games
(``expert`` in every seat of whiskertrail for two), converts them to ``expert.npz``,
trains :class:`~clients.training.cloning.FeaturePolicy` (``--model mlp``: the
:class:`~clients.training.cloning.MlpPolicy` over the raw observation) and writes
``cloned.npz``; then runs ``glintwick tournament --in-process`` with
``clients.training.cloning:ClonedBot`` against ``greedy`` and ``strong`` (seed 20261205:
deals no game it learnt from was dealt by).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from clients.training.cloning import POLICY_VARIABLE, train, train_features
from clients.training.dataset import simulate, write_npz
from engine.rulesets import ruleset


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=300, help="expert games to record")
    parser.add_argument("--model", choices=("features", "mlp"), default="features")
    parser.add_argument("--limit", type=int, default=40_000, help="features: decisions used")
    parser.add_argument("--epochs", type=int, default=3, help="mlp: epochs")
    parser.add_argument("--hidden", type=int, default=128, help="mlp: hidden units")
    parser.add_argument("--deals", type=int, default=150, help="tournament deal sets")
    parser.add_argument("--seed", type=int, default=20261205, help="the tournament's seed")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--out", default="cloning", help="directory for logs, data, model")
    args = parser.parse_args(argv)
    out = Path(args.out)
    started = time.perf_counter()
    logs = sorted((out / "logs").glob("game-*.json"))
    if len(logs) < args.games:
        logs = simulate(out / "logs", "whiskertrail", 2, args.games, ["expert"], seed=1)
    print(f"recorded {len(logs)} games in {time.perf_counter() - started:.0f} s", flush=True)
    started = time.perf_counter()
    data = write_npz(logs, out / "expert.npz")
    print(
        f"converted {len(data['action'])} decisions in {time.perf_counter() - started:.0f} s",
        flush=True,
    )
    started = time.perf_counter()
    loaded = dict(np.load(out / "expert.npz"))
    if args.model == "features":
        featured, kinds = train_features(loaded, ruleset("whiskertrail"), 2, 8, limit=args.limit)
        featured.save(out / "cloned.npz")
        print(f"trained in {time.perf_counter() - started:.0f} s; accuracy by expert's action:")
        for part, table in kinds.items():
            row = ", ".join(f"{k} {a:.3f} ({n})" for k, (n, a) in table.items())
            print(f"  {part}: {row}", flush=True)
    else:
        policy, report = train(loaded, hidden=args.hidden, epochs=args.epochs)
        policy.save(out / "cloned.npz")
        print(
            f"trained on {report.rows} decisions with a choice in"
            f" {time.perf_counter() - started:.0f} s: accuracy {report.train_accuracy:.3f}"
            f" (train), {report.test_accuracy:.3f} (held-out games)",
            flush=True,
        )
    os.environ[POLICY_VARIABLE] = str((out / "cloned.npz").resolve())
    from glintwick_cli import main as glintwick

    return glintwick(
        [
            "tournament",
            "--ruleset",
            "whiskertrail",
            "--bots",
            "clients.training.cloning:ClonedBot,greedy,strong",
            "--deals",
            str(args.deals),
            "--seed",
            str(args.seed),
            "--in-process",
            "--workers",
            str(args.workers),
            "--no-progress",
            "--out",
            str(out / "tournament"),
        ]
    )


if __name__ == "__main__":
    sys.exit(main())
