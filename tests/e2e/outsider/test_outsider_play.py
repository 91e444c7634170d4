"""The Play stream as an outsider meets it (a client compiled from ``proto/`` at test
time, tests/support/outsider.py, against ``glintwick serve``): a stream the client
half-closes ends with OK once every session it opened is over, as every gRPC client
waits for; and an act of no session is answered as docs/API.md and the proto say."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest

from tests.support.outsider import TREE, OutsiderClient, Served, served

API_MD = TREE / "docs" / "API.md"
GAME_PROTO = TREE / "proto" / "glintwick" / "v1" / "game.proto"
#: seconds after its last move that a game ends abandoned (the server's --abandon-after)
ABANDON_AFTER = 3


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    options = ("--no-bots", "--abandon-after", str(ABANDON_AFTER))
    with served(tmp_path_factory.mktemp("server"), *options) as running:
        yield running


def _table(client: OutsiderClient) -> tuple[str, dict[int, str]]:
    """A whiskertrail table of two, both seats joined: its id and tokens by seat."""
    game = client.call("CreateGame", {"ruleSetName": "whiskertrail", "seats": 2})
    game_id = str(game.game_id)  # type: ignore[attr-defined]
    tokens = {}
    for name in ("ann", "bob"):
        joined = client.call("JoinGame", {"gameId": game_id, "name": name})
        tokens[int(joined.seat)] = str(joined.token)  # type: ignore[attr-defined]
    return game_id, tokens


def _subscribe(game_id: str, seat: int, token: str) -> dict[str, object]:
    return {"subscribe": {"gameId": game_id, "seat": seat, "token": token, "promptsOnly": True}}


# ------------------------------------------------------------------ half-closing


async def test_a_half_closed_stream_ends_ok_once_its_sessions_are_over(
    client: OutsiderClient,
) -> None:
    game_id, tokens = _table(client)
    async with client.play() as play:
        for seat, token in tokens.items():
            await play.send(_subscribe(game_id, seat, token))
            await play.receive_until("snapshot")
        for seat in tokens:
            await play.send({"unsubscribe": {"gameId": game_id, "seat": seat}})
        await play.half_close()
        closed = 0
        while (message := await play.receive()) is not None:
            closed += message.WhichOneof("kind") == "closed"
        assert closed == 2
        assert await play.status(timeout=5) is grpc.StatusCode.OK


async def test_a_stream_half_closed_with_nothing_open_ends_ok(client: OutsiderClient) -> None:
    async with client.play() as play:
        await play.half_close()
        assert await play.receive() is None
        assert await play.status(timeout=5) is grpc.StatusCode.OK


async def test_a_half_closed_stream_serves_its_open_sessions_to_their_end(
    client: OutsiderClient,
) -> None:
    """Half-closing ends nothing still open: the session keeps getting what happens in
    its game, and the stream ends (OK) when the session does, with its game (here
    abandoned: nobody moved for the server's ``--abandon-after``)."""
    game_id, tokens = _table(client)
    async with client.play() as play:
        await play.send({"subscribe": {"gameId": game_id, "seat": 0, "token": tokens[0]}})
        await play.receive_until("snapshot")
        await play.half_close()
        view = client.call("GetView", {"gameId": game_id}, token=tokens[0])
        mover = int(view.current)  # type: ignore[attr-defined]
        draw = {"gameId": game_id, "expectedVersion": 0, "action": {"draw": {}}}
        client.call("SubmitAction", draw, token=tokens[mover])
        while (message := await play.receive()) is not None:  # the move reaches the session
            if message.WhichOneof("kind") == "event" and message.event.version == 1:  # type: ignore[attr-defined]
                break
        assert message is not None, "the stream ended before the move's event"
        closed = (await play.receive_until("closed", timeout=ABANDON_AFTER * 4))[-1]
        assert closed.closed.final_view.abandoned  # type: ignore[attr-defined]
        assert await play.receive() is None
        assert await play.status(timeout=5) is grpc.StatusCode.OK


async def test_a_stream_ends_ok_after_its_last_session_closes_by_itself(
    client: OutsiderClient,
) -> None:
    """The stream half-closed while a session is open ends when that session's
    ``closed`` comes (here: a refused subscribe, closed at once by the server)."""
    game_id, _ = _table(client)
    async with client.play() as play:
        await play.send(_subscribe(game_id, 0, "not-a-token"))
        await play.half_close()
        kinds = []
        while (message := await play.receive()) is not None:
            kinds.append(message.WhichOneof("kind"))
        assert kinds == ["closed"]
        assert await play.status(timeout=5) is grpc.StatusCode.OK


# ------------------------------------------------------------------ an act of no session


def _api_md_bullet(kind: str) -> str:
    """The bullet of docs/API.md's Play section that describes the server's ``kind``."""
    section = API_MD.read_text().split("## Playing: the Play stream", 1)[1].split("\n## ", 1)[0]
    match = re.search(rf"^- `{kind}[`{{].*?(?=^\S|^- |\Z)", section, re.M | re.S)
    assert match is not None, f"API.md's Play section has no bullet for {kind}"
    return " ".join(match.group(0).split())


def _proto_comment(message: str, field: str) -> str:
    """The comment above ``field`` of ``message`` in proto/glintwick/v1/game.proto."""
    text = GAME_PROTO.read_text()
    body = text.split(f"\nmessage {message} {{", 1)[1].split("\n}", 1)[0]
    match = re.search(rf"((?:^\s*//.*\n)+)\s*\w+ {field} = \d+;", body, re.M)
    assert match is not None, f"{message}.{field} has no comment"
    return " ".join(line.strip().removeprefix("//").strip() for line in match.group(1).splitlines())


def test_the_docs_say_an_act_of_no_session_is_answered_by_its_result() -> None:
    assert "no session" in _api_md_bullet("result")
    assert "no session" not in _api_md_bullet("error")
    assert "no session" in _proto_comment("PlayResponse", "result")
    assert "no session" not in _proto_comment("PlayResponse", "error")


async def test_an_act_of_no_session_is_answered_as_the_docs_say(client: OutsiderClient) -> None:
    game_id, tokens = _table(client)
    async with client.play(token=tokens[0]) as play:
        act = {"gameId": game_id, "seat": 0, "expectedVersion": 0, "requestId": "orphan",
               "action": {"draw": {}}}  # fmt: skip
        await play.send({"act": act})
        message = await play.receive()
        assert message is not None
        # the docs' claim (the test above) and the server's answer agree
        said = "result" if "no session" in _api_md_bullet("result") else "error"
        assert message.WhichOneof("kind") == said
        answer = message.result  # type: ignore[attr-defined]
        assert answer.request_id == "orphan"
        assert (answer.error.code, answer.error.reason) == ("INVALID_ARGUMENT", "INVALID_ARGUMENT")
        assert message.game_id == game_id  # type: ignore[attr-defined]


def test_api_md_is_where_the_tests_read_it() -> None:
    assert Path(API_MD).is_file() and Path(GAME_PROTO).is_file()
