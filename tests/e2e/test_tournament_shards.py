"""A tournament in shards (``--shards N --shard-index I``, then ``tournament merge``):
the same report as one process, a killed shard resuming without replaying a game, and
merges of results that cannot be one tournament refused."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from glintwick_cli import main
from loadtests.processes.child import glintwick_command

#: a small tournament: three bots at two seats, whiskertrail cut to its first contract
COMMON = [
    "tournament",
    "--in-process",
    "--no-progress",
    "--bots",
    "greedy,strong,random",
    "--seed",
    "4",
]


@pytest.fixture(scope="module")
def short_rules(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from engine.rulesets import WHISKERTRAIL

    data = WHISKERTRAIL.to_dict()
    data["contracts"] = data["contracts"][:1]
    data["name"] = "whiskertrail-short"
    path = tmp_path_factory.mktemp("rules") / "short.json"
    path.write_text(json.dumps(data))
    return path


def report(path: Path) -> dict[str, object]:
    data: dict[str, object] = json.loads((path / "tournament.json").read_text())
    return data


def shard(rules: Path, out: Path, index: int, count: int, deals: int, seed: int = 4) -> list[str]:
    return [
        *COMMON,
        "--seed",
        str(seed),
        "--ruleset",
        str(rules),
        "--deals",
        str(deals),
        "--shards",
        str(count),
        "--shard-index",
        str(index),
        "--out",
        str(out),
    ]


def test_shards_merge_into_the_report_of_one_process(short_rules: Path, tmp_path: Path) -> None:
    deals = 7
    one = [*COMMON, "--ruleset", str(short_rules), "--deals", str(deals)]
    assert main([*one, "--out", str(tmp_path / "one")]) == 0
    for index in range(3):
        assert main(shard(short_rules, tmp_path / "shards", index, 3, deals)) == 0
    files = sorted((tmp_path / "shards").glob("*.jsonl"))
    assert [f.name for f in files] == [f"shard-{i}-of-3.jsonl" for i in range(3)]
    # each shard holds whole deal sets: its deals only, every rotation of every lineup
    for index, file in enumerate(files):
        rows = [json.loads(line) for line in file.read_text().splitlines()[1:]]
        assert {r["deal"] % 3 for r in rows} == {index}
        assert len(rows) == 3 * 2 * len([d for d in range(deals) if d % 3 == index])
    merge = ["tournament", "merge", str(tmp_path / "shards"), "--out", str(tmp_path / "m")]
    assert main(merge) == 0
    assert report(tmp_path / "m") == report(tmp_path / "one")  # games, statistics, ratings
    # a shard run again finds nothing left to play and changes nothing
    before = files[1].read_text()
    assert main(shard(short_rules, tmp_path / "shards", 1, 3, deals)) == 0
    assert files[1].read_text() == before


def test_a_killed_shard_resumes_without_replaying_a_finished_game(
    short_rules: Path, tmp_path: Path
) -> None:
    out = tmp_path / "shards"
    command = [*glintwick_command(), *shard(short_rules, out, 0, 1, 12)]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    file = out / "shard-0-of-1.jsonl"
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and process.poll() is None:
            if file.exists() and len(file.read_text().splitlines()) >= 6:  # header + 5 games
                break
            time.sleep(0.05)
        assert process.poll() is None, "the shard finished before it could be killed"
        os.kill(process.pid, signal.SIGKILL)
    finally:
        process.wait(30)
    recorded = file.read_text()
    recorded = recorded[: recorded.rfind("\n") + 1]  # (the kill may have cut a line itself)
    games_before = len(recorded.splitlines()) - 1
    assert 5 <= games_before < 72
    with file.open("a") as cut:  # as if the kill had cut a line short
        cut.write('{"index": 71, "scores": [1')
    assert main(shard(short_rules, out, 0, 1, 12)) == 0
    after = file.read_text()
    assert after.startswith(recorded)  # what was recorded is kept, the cut line dropped
    rows = [json.loads(line) for line in after.splitlines()[1:]]
    indexes = [r["index"] for r in rows]
    assert sorted(indexes) == list(range(72))  # every game once: none replayed, none lost
    merged = tmp_path / "merged"
    assert main(["tournament", "merge", str(file), "--out", str(merged)]) == 0
    one = [*COMMON, "--ruleset", str(short_rules), "--deals", "12"]
    assert main([*one, "--out", str(tmp_path / "one")]) == 0
    assert report(merged)["stats"] == report(tmp_path / "one")["stats"]


def test_merges_that_cannot_be_one_tournament_are_refused(
    short_rules: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "shards"
    for index in range(2):
        assert main(shard(short_rules, out, index, 2, 3)) == 0
    capsys.readouterr()

    def refused(*paths: Path) -> str:
        assert main(["tournament", "merge", *map(str, paths)]) == 2
        return capsys.readouterr().err

    assert "not 0..n-1" in refused(out / "shard-0-of-2.jsonl")  # a shard missing
    other = tmp_path / "other"
    assert main(shard(short_rules, other, 1, 2, 3, seed=5)) == 0
    capsys.readouterr()
    assert "another tournament" in refused(out / "shard-0-of-2.jsonl", other)
    assert "twice" in refused(out, out / "shard-1-of-2.jsonl")
    stray = tmp_path / "stray"
    stray.mkdir()
    for index in range(2):
        name = f"shard-{index}-of-2.jsonl"
        (stray / name).write_text((out / name).read_text())
    with (stray / "shard-1-of-2.jsonl").open("a") as f:  # a game no schedule has
        f.write(json.dumps({"index": 9999, "seats": [], "seed": ""}) + "\n")
    assert "not one of the tournament's" in refused(stray)
    (tmp_path / "junk.jsonl").write_text("not json\n")
    assert "no tournament header" in refused(tmp_path / "junk.jsonl")
    # a shard's file of another tournament is not resumed into
    assert main([*shard(short_rules, out, 0, 2, 4)]) == 2
    assert "another tournament" in capsys.readouterr().err


def test_a_shard_of_cyclic_seating_merges_as_cyclic(short_rules: Path, tmp_path: Path) -> None:
    """The seating is part of the tournament a shard file names: its games are those."""
    bots = ["--bots", "strong,greedy,random", "--seats", "3", "--seating", "cyclic"]
    for index in range(2):
        assert main([*shard(short_rules, tmp_path / "s", index, 2, 2), *bots]) == 0
    merge = ["tournament", "merge", str(tmp_path / "s"), "--out", str(tmp_path / "m")]
    assert main(merge) == 0
    one = [*COMMON, "--ruleset", str(short_rules), "--deals", "2", *bots]
    assert main([*one, "--out", str(tmp_path / "one")]) == 0
    assert report(tmp_path / "m") == report(tmp_path / "one")
    assert report(tmp_path / "m")["seating"] == "cyclic"
