"""The load test's command (``python -m loadtests.run``): what it starts, the run or
the steps, the summary."""

from __future__ import annotations

import json
import os
import signal
import sys
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from loadtests.run.arguments import build_parser, seconds
from loadtests.run.report import print_summary, server_code
from loadtests.run.runs import run_locust
from loadtests.run.served import service
from loadtests.run.steps import run_steps


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    seconds(args.time)  # fail early on a malformed run time
    steps = [int(s) for s in args.steps.split(",") if s.strip()] if args.steps else []
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # run the finally blocks
    summary: dict[str, Any] = {
        "config": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()},
        "load_average_before": os.getloadavg(),
        "server_code": server_code(args.server_root),
    }
    with service(args) as served:
        if not steps:
            result = run_locust(
                args,
                args.tables,
                args.out / "stats",
                served.grpc_target,
                served.http_url,
                served.watch,
            )
            print_summary(result, f"{args.tables} tables")
            summary["run"] = asdict(result)
            code = result.exit_code
        else:
            code = run_steps(args, steps, served, summary)
    summary["load_average_after"] = os.getloadavg()
    (args.out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    print(f"reports: {args.out}/ (CSV, HTML, summary.json)")
    return code
