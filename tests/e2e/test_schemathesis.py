"""Schemathesis against ``/openapi.json``: the real server on the memory store, every
operation fuzzed (positive and negative data, its coverage phase's boundary values, and
its stateful phase, which follows the links it infers: a created game's id into the
calls that take one), with a bounded number of examples per operation and no
randomness (the same cases every run).  It fails on any HTTP 5xx, any response whose
body does not match its schema (SSE events included) or whose content type is not the
documented one (issue 14: "0 server errors and 0 schema mismatches")."""

from __future__ import annotations

import asyncio
import re
import sys
import time
from pathlib import Path

from services.config import ServerOptions
from tests.e2e.support import OPERATOR_TOKEN, open_env

SCHEMATHESIS = Path(sys.executable).parent / "schemathesis"
EXAMPLES = 20  # per operation and phase
#: an SSE watch of a real game stays open: schemathesis reads its events until this
#: timeout (a non-stream answer takes milliseconds here)
REQUEST_TIMEOUT = "1"


async def test_schemathesis_finds_no_server_error_and_no_schema_mismatch(tmp_path: Path) -> None:
    env = await open_env(ServerOptions(store="memory"), "memory")
    try:
        started = time.monotonic()
        process = await asyncio.create_subprocess_exec(
            str(SCHEMATHESIS),
            "run",
            f"{env.http}/openapi.json",
            "--checks",
            "not_a_server_error,response_schema_conformance,content_type_conformance",
            "--max-examples",
            str(EXAMPLES),
            "--generation-deterministic",
            "--workers",
            "1",
            "--request-timeout",
            REQUEST_TIMEOUT,
            # the operator credential reaches CreateGameFromDeck and the bot-seat calls
            "--header",
            f"Authorization: Bearer {OPERATOR_TOKEN}",
            "--no-color",
            cwd=tmp_path,  # (its own files, if any, land there)
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
        )
        output, _ = await asyncio.wait_for(process.communicate(), timeout=240)
        elapsed = time.monotonic() - started
    finally:
        await env.close()
    text = output.decode(errors="replace")
    assert process.returncode == 0, text[-20000:]
    tested = re.search(r"Tested: (\d+)", text)
    generated = re.search(r"(\d+) generated, (\d+) passed", text)
    assert tested and generated, text[-5000:]
    # every operation of the document was run (16 annotated RPCs and the SSE watch)
    assert int(tested[1]) >= 17, text[-5000:]
    assert generated[1] == generated[2] and int(generated[1]) > 1000, text[-5000:]
    print(f"schemathesis: {tested[1]} operations, {generated[1]} cases, {elapsed:.1f} s")
