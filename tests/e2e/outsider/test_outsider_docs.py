"""docs/API.md says what the server does, checked from the outside: the default rate
limits and quotas are those ``glintwick serve --help`` states (the server's own
account of the constants it runs with), and a gRPC message over the size limit is
refused ``RESOURCE_EXHAUSTED`` without ``ErrorInfo``, as API.md's "Errors" says (a
client compiled from ``proto/`` at test time, tests/support/outsider.py)."""

from __future__ import annotations

import re
import subprocess
import sys

import grpc

from tests.support.outsider import TREE, OutsiderApi, OutsiderClient, Served

API_MD = TREE / "docs" / "API.md"


def _section(title: str) -> str:
    text = API_MD.read_text()
    section = text[text.index(f"\n## {title}\n") :]
    return section[: section.index("\n## ", 1)]


def _table(section: str, header: str) -> list[list[str]]:
    lines = section.splitlines()
    start = lines.index(header) + 2
    rows = []
    for line in lines[start:]:
        if not line.startswith("|"):
            break
        rows.append([cell.strip() for cell in line.strip().strip("|").split("|")])
    return rows


def _serve_help() -> str:
    """``glintwick serve --help`` of the tree, in one line."""
    done = subprocess.run(
        [sys.executable, "-m", "glintwick_cli", "serve", "--help"],
        cwd=TREE, capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    return " ".join(done.stdout.split())


def test_the_default_limits_are_those_serve_states() -> None:
    said = _serve_help().split(" options: ", 1)[1]  # (the options, not the usage line)
    limits = said.split("--limits LIMITS", 1)[1]
    defaults = dict(re.findall(r"(\w+)=(\d+(?:\.\d+)?/\d+)", limits.split("[env", 1)[0]))
    rate = re.search(r"--rate RATE .*?default: (\d+)\]", said)
    burst = re.search(r"--burst BURST .*?default: (\d+)\]", said)
    assert rate and burst and len(defaults) == 5, said
    defaults["act"] = f"{rate.group(1)}/{burst.group(1)}"
    rows = _table(
        _section("Rate limits and quotas"), "| class | calls | default rate/s | default burst |"
    )
    documented = {row[0]: f"{row[2].split()[0]}/{row[3].split()[0]}" for row in rows}
    assert documented == defaults
    quotas = dict(
        re.findall(r"(\w+)=(\d+)", said.split("--quotas QUOTAS", 1)[1].split("[env", 1)[0])
    )
    rows = _table(_section("Rate limits and quotas"), "| quota | default | reason | notes |")
    assert {row[0].split("`")[1]: row[1] for row in rows} == quotas


def test_a_message_over_the_size_limit_is_refused_as_the_docs_say(
    api: OutsiderApi, server: Served
) -> None:
    errors = " ".join(_section("Errors").split())
    claim = re.search(r"\*\*A message over the size limit\*\*(.*?)\(Over HTTP", errors)
    assert claim is not None, "API.md's Errors section says how an oversized message is refused"
    assert "RESOURCE_EXHAUSTED" in claim.group(1) and "without `ErrorInfo`" in errors
    with OutsiderClient(api, server.grpc_target) as client:
        limits = client.call("GetLimits")
        size = int(limits.grpc_message_bytes)  # type: ignore[attr-defined]
        assert f"{size // 2**20} MiB" in claim.group(1)
        refusal = client.refused("JoinGame", {"gameId": "g", "name": "x" * (size + 1)})
        assert refusal.code is grpc.StatusCode.RESOURCE_EXHAUSTED
        assert refusal.status is None and refusal.reason == ""  # gRPC's own: no ErrorInfo
        # (the next call on the channel is served: the refusal is the message's alone)
        assert client.call("Ping") is not None
