"""Hostile HTTP: whatever a client sends, the answer is never a server error, and every
answer is JSON — an error in the API's one shape ``{"code", "reason", "message"}``,
whether the service, the router (404, 405) or the HTTP parser (an over-long URL or
header, bytes that are not HTTP) refuses it.  Requests go over raw sockets, so that
nothing a well-behaved client library would refuse to send is left out.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from tests.e2e.support import Env

ERROR_FIELDS = {"code", "reason", "message"}


@dataclass
class Answer:
    status: int
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


async def raw_http(base: str, head: bytes, body: bytes = b"") -> Answer:
    """Send ``head`` (request line and headers, without the blank line) and ``body`` as
    they are; the answer as the server wrote it (the connection is closed after it)."""
    address = urlsplit(base)
    reader, writer = await asyncio.open_connection(address.hostname, address.port)
    try:
        lines = head.rstrip(b"\r\n") + b"\r\nHost: test\r\nConnection: close\r\n"
        if body and b"content-length" not in head.lower():
            lines += b"Content-Length: %d\r\n" % len(body)
        writer.write(lines + b"\r\n" + body)
        await writer.drain()
        async with asyncio.timeout(10):
            data = await reader.read()
    finally:
        writer.close()
        await writer.wait_closed()
    header_text, _, rest = data.partition(b"\r\n\r\n")
    status_line, *header_lines = header_text.decode("latin-1").split("\r\n")
    headers = {}
    for line in header_lines:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    if headers.get("transfer-encoding") == "chunked":
        rest = dechunk(rest)
    return Answer(int(status_line.split()[1]), headers, rest)


def dechunk(data: bytes) -> bytes:
    out = b""
    while data:
        size_text, _, data = data.partition(b"\r\n")
        size = int(size_text.split(b";")[0], 16)
        if size == 0:
            break
        out, data = out + data[:size], data[size + 2 :]
    return out


def request(method: str, target: bytes | str, **headers: str) -> bytes:
    path = target.encode() if isinstance(target, str) else target
    head = method.encode() + b" " + path + b" HTTP/1.1\r\n"
    for name, value in headers.items():
        head += f"{name.replace('_', '-')}: {value}\r\n".encode("latin-1")
    return head


JSON = {"Content_Type": "application/json"}


async def test_no_hostile_request_gets_a_server_error_or_a_body_that_is_not_json(
    server: Env,
) -> None:
    game, joined = await server.new_game("whiskertrail", 2, b"hostile")
    g = game.game_id
    token = joined[0].token
    deep = b"[" * 10_000 + b"]" * 10_000
    deep_object = b'{"a":' * 5_000 + b"1" + b"}" * 5_000
    huge = b'{"ruleSetName": "' + b"x" * (2 << 20) + b'"}'
    cases: list[tuple[str, bytes, bytes, int | None]] = [
        # (what, head, body, the status wanted; None: any 4xx)
        ("nested arrays", request("POST", "/v1/games", **JSON), deep, 400),
        ("nested objects", request("POST", "/v1/games", **JSON), deep_object, 400),
        ("nested submit", request("POST", f"/v1/games/{g}:submit", **JSON), deep, 400),
        (
            "nested in a field",
            request("POST", "/v1/games", **JSON),
            b'{"customRuleSet": {"contracts": ' + deep + b"}}",
            400,
        ),
        ("over the size limit", request("POST", "/v1/games", **JSON), huge, 413),
        ("negative from_version", request("GET", f"/v1/games/{g}:watch?from_version=-1"), b"", 400),
        (
            "huge from_version",
            request("GET", f"/v1/games/{g}:watch?fromVersion=1" + "0" * 40),
            b"",
            400,
        ),
        ("unknown watch parameter", request("GET", f"/v1/games/{g}:watch?x=1"), b"", 400),
        (
            "bad cursor header",
            request("GET", f"/v1/games/{g}:watch", Last_Event_ID="\x7f"),
            b"",
            400,
        ),
        ("unknown field", request("POST", "/v1/games", **JSON), b'{"nope": 1}', 400),
        ("wrong type", request("POST", "/v1/games", **JSON), b'{"seats": "many"}', 400),
        ("negative count", request("POST", "/v1/games", **JSON), b'{"seats": -1}', 400),
        ("infinite count", request("POST", "/v1/games", **JSON), b'{"seats": 1e400}', 400),
        ("NaN", request("POST", "/v1/games", **JSON), b'{"seats": NaN}', 400),
        (
            "huge integer",
            request("POST", "/v1/games", **JSON),
            b'{"seats": ' + b"9" * 5000 + b"}",
            400,
        ),
        ("seed not a string", request("POST", "/v1/games", **JSON), b'{"seed": 5}', 400),
        ("bots of strings", request("POST", "/v1/games", **JSON), b'{"bots": {"x": 1}}', 400),
        ("list body", request("POST", "/v1/games", **JSON), b"[1, 2]", 400),
        ("string body", request("POST", "/v1/games", **JSON), b'"x"', 400),
        ("not JSON", request("POST", "/v1/games", **JSON), b"{nope", 400),
        (
            "not UTF-8 body",
            request("POST", "/v1/games", **JSON),
            b'{"ruleSetName": "\xff\xfe"}',
            400,
        ),
        ("UTF-16 body", request("POST", "/v1/games", **JSON), '{"nope": 2}'.encode("utf-16"), 400),
        (
            "negative version",
            request("POST", f"/v1/games/{g}:submit", **JSON),
            b'{"expectedVersion": -1}',
            400,
        ),
        (
            "bad action",
            request("POST", f"/v1/games/{g}:submit", **JSON),
            b'{"action": {"draw": 5}}',
            400,
        ),
        ("negative seat", request("GET", f"/v1/games/{g}/legalActions?seat=-1"), b"", 400),
        ("huge seat", request("GET", f"/v1/games/{g}/view?seat=99999999999"), b"", 400),
        ("unknown query", request("GET", f"/v1/games/{g}/view?x=1"), b"", 400),
        ("message query", request("GET", "/v1/botTurns?turns=1"), b"", None),
        (
            "not UTF-8 query",
            request("GET", b"/v1/games/" + g.encode() + b"/view?seat=%ff"),
            b"",
            400,
        ),
        ("not UTF-8 path", request("GET", b"/v1/games/\xff\xfe/view"), b"", None),
        ("escaped bad path", request("GET", "/v1/games/%ff%00/view"), b"", None),
        ("long game id", request("GET", "/v1/games/" + "a" * 5000), b"", 400),
        ("bad token", request("GET", f"/v1/games/{g}/view", Authorization="Bearer \xff"), b"", 401),
        (
            "not Bearer",
            request("GET", f"/v1/games/{g}/legalActions", Authorization="Basic x"),
            b"",
            None,
        ),
        ("no such path", request("GET", "/nope"), b"", 404),
        ("no such game path", request("GET", "/v1/games/x/y/z"), b"", 404),
        ("no such game", request("GET", "/v1/games/nope"), b"", 404),
        ("DELETE", request("DELETE", "/v1/games"), b"", 405),
        ("PUT", request("PUT", f"/v1/games/{g}:submit", **JSON), b"{}", 405),
        ("PATCH ping", request("PATCH", "/v1/ping"), b"", 405),
        ("over-long URL", request("GET", "/v1/games/" + "a" * 20_000), b"", 414),
        ("over-long header", request("GET", "/v1/ping", X_Junk="a" * 20_000), b"", 431),
        ("bad request line", b"GET\r\n", b"", None),
        ("not HTTP", b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03", b"", None),
        ("bad method", request("G\x01T", "/v1/ping"), b"", None),
        ("bad content length", request("POST", "/v1/games", Content_Length="-5"), b"{}", None),
        ("bad chunked", request("POST", "/v1/games", Transfer_Encoding="chunked"), b"zz\r\n", None),
    ]
    seen: list[str] = []
    for what, head, body, wanted in cases:
        if "token" in what:
            head = head.replace(b"Bearer \xff", b"Bearer \xff" + token.encode())
        answer = await raw_http(server.http, head, body)
        seen.append(f"{what}: {answer.status}")
        assert answer.status < 500, (what, answer)
        if wanted is not None:
            assert answer.status == wanted, (what, answer)
        else:
            assert 400 <= answer.status < 500, (what, answer)
        assert answer.headers.get("content-type", "").startswith("application/json"), (
            what,
            answer,
        )
        error = answer.json()
        assert set(error) == ERROR_FIELDS, (what, error)
        assert all(isinstance(error[k], str) and error[k] for k in ERROR_FIELDS), (what, error)
        assert error["code"] not in ("INTERNAL", "UNKNOWN"), (what, error)
        assert len(answer.body) < 2000, (what, "an error quotes bounded excerpts")
    # the server is still fine
    answer = await raw_http(server.http, request("GET", "/v1/ping"))
    assert answer.status == 200 and answer.json() == {}, seen


async def test_router_and_size_errors_name_the_right_code(server: Env) -> None:
    cases = [
        (request("GET", "/nope"), b"", 404, "NOT_FOUND", "UNKNOWN_PATH"),
        (request("DELETE", "/v1/games"), b"", 405, "UNIMPLEMENTED", "METHOD_NOT_ALLOWED"),
        (
            request("POST", "/v1/games", **JSON),
            b'{"ruleSetName": "' + b"x" * (2 << 20) + b'"}',
            413,
            "RESOURCE_EXHAUSTED",
            "BODY_TOO_LARGE",
        ),
        (
            request("POST", "/v1/games", **JSON),
            b"[" * 10_000 + b"]" * 10_000,
            400,
            "INVALID_ARGUMENT",
            "INVALID_ARGUMENT",
        ),
    ]
    cases += [
        (request("GET", "/v1/" + "a" * 20_000), b"", 414, "INVALID_ARGUMENT", "URL_TOO_LONG"),
        (
            request("GET", "/v1/ping", X_Junk="a" * 20_000),
            b"",
            431,
            "INVALID_ARGUMENT",
            "HEADERS_TOO_LARGE",
        ),
        (b"GET\r\n", b"", 400, "INVALID_ARGUMENT", "BAD_HTTP_REQUEST"),
    ]
    for head, body, status, code, reason in cases:
        answer = await raw_http(server.http, head, body)
        assert answer.status == status, answer
        error = answer.json()
        assert (error["code"], error["reason"]) == (code, reason), error
    answer = await raw_http(server.http, request("DELETE", "/v1/games"))
    assert "POST" in answer.headers.get("allow", ""), answer.headers
