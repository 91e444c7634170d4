"""TLS on both faces and CORS on the HTTP face, through real sockets.

The TLS tests run ``glintwick serve --tls-cert/--tls-key`` with a self-signed
certificate for 127.0.0.1 and localhost that the test makes (openssl), play a move
through the SDK over TLS, read /healthz over HTTPS trusting that certificate, and
see a plaintext client refused.  The CORS tests call an in-process server's HTTP
face as a browser would (an Origin header, a preflight, the SSE watch).
"""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import ssl
import subprocess
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import aiohttp
import grpc
import pytest

from clients.sdk import CallError, GlintwickClient
from glintwick.v1 import game_pb2 as pb
from glintwick.v1 import game_pb2_grpc as pb_grpc
from loadtests.processes.child import glintwick_command
from loadtests.processes.server import ServerProcess
from tests.e2e.conftest import StartServer
from tests.e2e.support import read_sse

START_SECONDS = 30.0  # a serve process's start on a busy machine

ALLOWED = "https://table.example"
OTHER = "https://elsewhere.example"


def make_certificate(directory: Path) -> tuple[Path, Path]:
    """A self-signed certificate (its own CA) for 127.0.0.1 and localhost, and its key."""
    if shutil.which("openssl") is None:
        pytest.skip("openssl is not installed")
    cert, key = directory / "cert.pem", directory / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
         "-keyout", str(key), "-out", str(cert), "-subj", "/CN=localhost",
         "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"],
        check=True,
        capture_output=True,
    )  # fmt: skip
    return cert, key


@pytest.fixture(scope="module")
def certificate(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return make_certificate(tmp_path_factory.mktemp("tls"))


@contextlib.contextmanager
def tls_server(cert: Path, key: Path, logs: Path) -> Iterator[tuple[int, int]]:
    """``glintwick serve`` over TLS on free ports, once it serves: (gRPC, HTTP) ports."""
    tls = ["--tls-cert", str(cert), "--tls-key", str(key)]
    with ServerProcess(logs, *tls, http=True) as server:
        assert server.http_port is not None
        yield server.grpc_port, server.http_port


async def test_serve_over_tls_plays_a_move_and_answers_https(
    certificate: tuple[Path, Path], tmp_path: Path
) -> None:
    cert, key = certificate
    with tls_server(cert, key, tmp_path) as (grpc_port, http_port):
        async with GlintwickClient(
            f"127.0.0.1:{grpc_port}", root_certificates=cert.read_bytes()
        ) as client:
            game = await client.create_game("whiskertrail", seats=2, seed=b"tls")
            seats = [await client.join(game.game_id, name=name) for name in ("ann", "bob")]
            for seat in seats:
                legal = await seat.legal_actions()
                if legal:  # the seat to move
                    before = seat.version
                    response = await seat.act(legal[0])
                    assert response.version > before
                    break
            else:
                raise AssertionError("no seat may move")

            # the in-process house-bot pool plays behind TLS too
            bots = await client.create_game(
                "whiskertrail", seats=2, bots={0: "random", 1: "random"}
            )
            deadline = time.monotonic() + START_SECONDS
            while (await client.game(bots.game_id)).version < 5:
                assert time.monotonic() < deadline, "the house bots do not play"
                await asyncio.sleep(0.2)

        trusted = ssl.create_default_context(cafile=str(cert))
        async with (
            aiohttp.ClientSession() as session,
            session.get(f"https://127.0.0.1:{http_port}/healthz", ssl=trusted) as answer,
        ):
            assert answer.status == 200
            assert (await answer.json()) == {"status": "SERVING"}

        # plaintext is refused on both faces
        async with grpc.aio.insecure_channel(f"127.0.0.1:{grpc_port}") as channel:
            with pytest.raises(grpc.aio.AioRpcError) as refused:
                await pb_grpc.GameServiceStub(channel).Ping(pb.PingRequest(), timeout=5)
            assert refused.value.code() is grpc.StatusCode.UNAVAILABLE
        async with GlintwickClient(f"127.0.0.1:{grpc_port}", timeout=5) as plain:
            plain.retry.attempts = 1
            with pytest.raises(CallError):
                await plain.ping()
        async with aiohttp.ClientSession() as session:
            with pytest.raises(aiohttp.ClientError):
                async with session.get(f"http://127.0.0.1:{http_port}/healthz") as answer:
                    await answer.read()
            # and a client that does not trust the certificate refuses the server
            with pytest.raises(aiohttp.ClientConnectorCertificateError):
                async with session.get(f"https://127.0.0.1:{http_port}/healthz") as answer:
                    await answer.read()


def serve_status(*flags: str) -> subprocess.CompletedProcess[str]:
    command = [*glintwick_command(), "serve", "--grpc", "127.0.0.1:0", "--http", "", *flags]
    return subprocess.run(command, capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize(
    "case", ["missing cert", "no key", "not a certificate", "key of another certificate"]
)
def test_bad_tls_files_are_one_line_and_exit_2(
    case: str, certificate: tuple[Path, Path], tmp_path: Path
) -> None:
    cert, key = certificate
    if case == "missing cert":
        flags = ["--tls-cert", str(tmp_path / "absent.pem"), "--tls-key", str(key)]
        expected = "absent.pem: No such file"
    elif case == "no key":
        flags = ["--tls-cert", str(cert)]
        expected = "go together"
    elif case == "not a certificate":
        junk = tmp_path / "junk.pem"
        junk.write_text("not a certificate\n")
        flags = ["--tls-cert", str(junk), "--tls-key", str(key)]
        expected = "not a PEM certificate and its private key"
    else:
        other_cert, _ = make_certificate(tmp_path)
        flags = ["--tls-cert", str(other_cert), "--tls-key", str(key)]
        expected = "not a PEM certificate and its private key"
    result = serve_status(*flags)
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("glintwick serve: ") and expected in lines[0], lines[0]


# --------------------------------------------------------------------------- CORS


@contextlib.asynccontextmanager
async def preflight_of_a_post(
    session: aiohttp.ClientSession, path: str
) -> AsyncIterator[aiohttp.ClientResponse]:
    """A browser's preflight of a POST with credentials from the allowed origin: answered
    (204) for that origin, POST allowed."""
    async with session.options(
        path,
        headers={
            "Origin": ALLOWED,
            "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": "authorization, content-type",
        },
    ) as preflight:
        assert preflight.status == 204
        assert preflight.headers["Access-Control-Allow-Origin"] == ALLOWED
        assert "POST" in preflight.headers["Access-Control-Allow-Methods"]
        yield preflight


async def test_cors_answers_an_allowed_origin_only(start_server: StartServer) -> None:
    env = await start_server(cors_origins=frozenset({ALLOWED}))
    async with aiohttp.ClientSession(env.http) as session:
        async with preflight_of_a_post(session, "/v1/games") as preflight:
            allowed_headers = preflight.headers["Access-Control-Allow-Headers"].lower()
            for header in ("authorization", "content-type", "x-request-id", "last-event-id"):
                assert header in allowed_headers
            assert int(preflight.headers["Access-Control-Max-Age"]) > 0

        async with session.post(
            "/v1/games",
            json={"ruleSetName": "whiskertrail", "seats": 2},
            headers={"Origin": ALLOWED},
        ) as created:
            assert created.status == 200
            assert created.headers["Access-Control-Allow-Origin"] == ALLOWED
            assert "Origin" in created.headers.getall("Vary")
            game_id = (await created.json())["gameId"]

        # an error response carries them too (the page can read the error)
        async with session.get("/v1/games/nope", headers={"Origin": ALLOWED}) as missing:
            assert missing.status == 404
            assert missing.headers["Access-Control-Allow-Origin"] == ALLOWED

        # another origin: no CORS header at all, and its preflight is not answered
        async with session.get(f"/v1/games/{game_id}", headers={"Origin": OTHER}) as other:
            assert other.status == 200
            assert not [h for h in other.headers if h.lower().startswith("access-control-")]
        async with session.options(
            "/v1/games", headers={"Origin": OTHER, "Access-Control-Request-Method": "POST"}
        ) as refused:
            assert refused.status != 204
            assert "Access-Control-Allow-Origin" not in refused.headers

        # the SSE watch's headers, sent before its first event, carry them
        async with session.get(f"/v1/games/{game_id}:watch", headers={"Origin": ALLOWED}) as watch:
            assert watch.status == 200
            assert watch.headers["Content-Type"].startswith("text/event-stream")
            assert watch.headers["Access-Control-Allow-Origin"] == ALLOWED
            first = await asyncio.wait_for(watch.content.readline(), 10)
            assert first.startswith(b":")


async def test_no_cors_headers_by_default(server_without_cors: str) -> None:
    async with (
        aiohttp.ClientSession(server_without_cors) as session,
        session.get("/healthz", headers={"Origin": ALLOWED}) as answer,
    ):
        assert answer.status == 200
        assert "Access-Control-Allow-Origin" not in answer.headers


@pytest.fixture
async def server_without_cors(start_server: StartServer) -> str:
    return (await start_server()).http


def test_cors_origin_flag_and_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    import argparse

    from services.config import add_arguments, options_from

    def origins(*argv: str) -> frozenset[str]:
        parser = argparse.ArgumentParser()
        add_arguments(parser)
        return options_from(parser.parse_args(list(argv))).cors_origins

    assert origins() == frozenset()
    assert origins("--cors-origin", f"{ALLOWED}, {OTHER}/") == {ALLOWED, OTHER}
    assert origins("--cors-origin", ALLOWED, "--cors-origin", OTHER) == {ALLOWED, OTHER}
    monkeypatch.setenv("GLINTWICK_CORS_ORIGIN", OTHER)
    assert origins() == {OTHER}
    assert origins("--cors-origin", ALLOWED) == {ALLOWED}  # the flag replaces the variable


async def test_cors_covers_the_http_play_session(start_server: StartServer) -> None:
    """A page on an allowed origin can open a seat's SSE session and POST its acts: the
    preflight of the act is answered, and the stream's and the act's headers carry the
    origin (the stream's before its first message)."""
    env = await start_server(cors_origins=frozenset({ALLOWED}))
    game, joined = await env.new_game("whiskertrail", 2, b"cors play")
    view = await joined[0].view()
    seat = joined[view.to_act[0]]
    path = f"/v1/games/{game.game_id}:play"
    auth = {"Authorization": f"Bearer {seat.token}", "Origin": ALLOWED}
    async with aiohttp.ClientSession(env.http) as session:
        async with preflight_of_a_post(session, path):
            pass
        async with asyncio.timeout(20), session.get(path, headers=auth) as stream:
            assert stream.status == 200
            assert stream.headers["Access-Control-Allow-Origin"] == ALLOWED
            assert (await stream.content.readline()).startswith(b":")
            prompt: dict[str, object] = {}
            async for kind, _, data in read_sse(stream):
                if kind == "prompt":
                    prompt = data["prompt"]
                    break
            body = {
                "expectedVersion": prompt["version"],
                "requestId": "cors-act",
                "action": prompt["legalActions"][0],  # type: ignore[index]
            }
            async with session.post(path, json=body, headers=auth) as acted:
                assert acted.status == 200, await acted.text()
                assert acted.headers["Access-Control-Allow-Origin"] == ALLOWED
                assert (await acted.json())["requestId"] == "cors-act"
            async with session.post(path, json=body | {"requestId": "late"}, headers=auth) as late:
                assert late.status == 409  # a refusal a page can read
                assert late.headers["Access-Control-Allow-Origin"] == ALLOWED
        async with session.get(path, headers={**auth, "Origin": OTHER}) as other:
            assert other.status == 200
            assert "Access-Control-Allow-Origin" not in other.headers
