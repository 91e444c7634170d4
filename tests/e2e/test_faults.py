"""The fault campaign (loadtests/faults/, `make faults`) in small, on one Redis and on a
Redis Cluster: a dozen tables through every fault step, then every game checked (no
acknowledged move lost or applied twice, the stored state its log's replay, every
stream's events once, every game over).
Marked slow: `make soak` runs it (`pytest -m slow tests/e2e/test_faults.py` alone)."""

from __future__ import annotations

import shutil

import pytest

from loadtests.faults.run import main


@pytest.mark.slow  # (about a minute on an idle machine, minutes on a busy one)
@pytest.mark.skipif(shutil.which("redis-server") is None, reason="redis-server is not installed")
@pytest.mark.parametrize("topology", ["standalone", "cluster"])
def test_a_short_campaign_loses_nothing(topology: str, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["--topology", topology, "--games", "12", "--warmup", "3", "--settle", "3",
            "--think", "0.1", "--fault-seconds", "3", "--finish", "120"]  # fmt: skip
    status = main(argv)
    printed = capsys.readouterr().out
    assert status == 0, printed
    assert '"moves_lost": 0' in printed and "faults: OK" in printed
