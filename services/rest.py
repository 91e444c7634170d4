"""The HTTP/JSON face, derived from the proto's ``google.api.http`` annotations.

Routes, request decoding and the OpenAPI document all come from the service
descriptor, so the HTTP face cannot drift from the gRPC one: a new annotated RPC
appears here with no code.  Bodies use protobuf's JSON mapping (either field
spelling accepted; lowerCamelCase written).  Errors are the same as on gRPC:
``{"code": "FAILED_PRECONDITION", "reason": "NOT_YOUR_TURN", "message": …}`` with
the matching HTTP status.  The watch stream is served as Server-Sent Events.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
import re
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, TypeVar

import grpc
import structlog
from aiohttp import web
from aiohttp.http_exceptions import LineTooLong
from aiohttp.web_protocol import RequestHandler
from aiohttp.web_request import BaseRequest
from google.protobuf import descriptor as pb_descriptor
from google.protobuf import json_format, message_factory
from google.protobuf import message as pb_message
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from glintwick.convert import cursor_position
from glintwick.v1 import game_pb2 as pb
from services import metrics
from services.api import Caller, GameService, new_request_id
from services.config import Network
from services.errors import ServiceError, invalid, store_unavailable
from services.grpc_api import snake
from services.json_body import check_path_fields, unknown_field, unknown_field_error
from services.openapi import http_rules, openapi_document
from services.static import add_routes as add_static_routes
from services.store.base import StoreUnavailableError
from services.usecases.access import bearer_token
from services.usecases.limits import MAX_HTTP_BODY_BYTES
from services.usecases.moves import MAX_REQUEST_ID
from services.usecases.play import submit_request
from services.usecases.quotas import client_address

log = structlog.get_logger("glintwick.http")

T = TypeVar("T")

_VARIABLE = re.compile(r"\{(\w+)\}")


def _aiohttp_path(template: str) -> str:
    # a path variable never spans a '/' or the ':' that starts a custom verb
    return _VARIABLE.sub(lambda m: "{" + m.group(1) + ":[^/:]+}", template)


def _message_class(descriptor: pb_descriptor.Descriptor) -> type[pb_message.Message]:
    cls: type[pb_message.Message] = message_factory.GetMessageClass(descriptor)
    return cls


def _header(request: web.Request, name: str) -> str:
    """A header's text; bytes that are not UTF-8 (aiohttp keeps them as surrogates,
    which no encoder takes) become U+FFFD: such a token matches no seat."""
    value = request.headers.get(name, "")
    return value.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def _caller(request: web.Request) -> Caller:
    token = bearer_token(_header(request, "Authorization"))
    request_id = _header(request, "X-Request-Id")[:MAX_REQUEST_ID] or new_request_id()
    # the peer, or the client a trusted proxy forwarded for (services/usecases/quotas.py)
    trusted: tuple[Network, ...] = request.app[TRUSTED_PROXIES]
    forwarded = request.headers.getall("X-Forwarded-For", [])
    address = client_address(request.remote or "", forwarded, trusted)
    return Caller(token=token or None, request_id=request_id, address=address)


#: the app's trusted proxies (ServiceConfig.trusted_proxies)
TRUSTED_PROXIES = web.AppKey("trusted_proxies", tuple)


def _json(message: pb_message.Message) -> dict[str, Any]:
    # protobuf's JSON mapping (camelCase; an event's payload under its type's case)
    data: dict[str, Any] = json_format.MessageToDict(
        message, always_print_fields_with_no_presence=True
    )
    return data


#: the largest request body read (a larger one is answered 413, BODY_TOO_LARGE)
MAX_BODY_BYTES = MAX_HTTP_BODY_BYTES


def _error_body(code: grpc.StatusCode, reason: str, message: str) -> dict[str, str]:
    """The one shape of every HTTP error body (docs/API.md, "Errors")."""
    return {"code": code.name, "reason": reason, "message": message}


def _error_response(error: ServiceError, status: int | None = None) -> web.Response:
    body = _error_body(error.code, error.reason, error.message)
    # (Retry-After is whole seconds: rounded up, so that a retry then is admitted)
    retry = {} if error.retry_after is None else {"Retry-After": str(math.ceil(error.retry_after))}
    return web.json_response(body, status=status or error.http_status, headers=retry)


def _internal_response() -> web.Response:
    body = _error_body(grpc.StatusCode.INTERNAL, "INTERNAL", "internal error; it has been logged")
    return web.json_response(body, status=500)


def _too_large() -> web.Response:
    error = ServiceError(
        grpc.StatusCode.RESOURCE_EXHAUSTED,
        "BODY_TOO_LARGE",
        f"the request body is larger than {MAX_BODY_BYTES} bytes",
    )
    return _error_response(error, status=413)


#: what the router and the HTTP parser answer by themselves, as the API's errors
_HTTP_ERRORS: dict[int, tuple[grpc.StatusCode, str]] = {
    404: (grpc.StatusCode.NOT_FOUND, "UNKNOWN_PATH"),
    405: (grpc.StatusCode.UNIMPLEMENTED, "METHOD_NOT_ALLOWED"),
    413: (grpc.StatusCode.RESOURCE_EXHAUSTED, "BODY_TOO_LARGE"),
    414: (grpc.StatusCode.INVALID_ARGUMENT, "URL_TOO_LONG"),
    431: (grpc.StatusCode.INVALID_ARGUMENT, "HEADERS_TOO_LARGE"),
}


def _http_error(status: int) -> tuple[grpc.StatusCode, str]:
    if status in _HTTP_ERRORS:
        return _HTTP_ERRORS[status]
    if status >= 500:
        return grpc.StatusCode.INTERNAL, "INTERNAL"
    return grpc.StatusCode.INVALID_ARGUMENT, "BAD_HTTP_REQUEST"


def _over_long(exc: LineTooLong) -> tuple[int, str]:
    """The status and message of a line over aiohttp's limit: the URL (414) or a header
    (431); the parser names the line, whose start is the URL's path for the URL."""
    line = exc.args[0] if exc.args else b""
    raw = line.encode("latin-1", "replace") if isinstance(line, str) else bytes(line)
    limit = exc.args[1] if len(exc.args) > 1 else "the limit of"
    if raw.startswith(b"/"):
        return 414, f"the URL is longer than {limit} bytes"
    return 431, f"a header is longer than {limit} bytes"


@web.middleware
async def _json_errors(
    request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
) -> web.StreamResponse:
    """The router's own refusals (no such path, a method the path has not), and any
    handler's failure, in the API's JSON error shape."""
    try:
        return await handler(request)
    except web.HTTPException as exc:
        if exc.status < 400:
            raise
        code, reason = _http_error(exc.status)
        message = f"{exc.reason}: {request.method} {request.path[:200]}"
        response = web.json_response(_error_body(code, reason, message), status=exc.status)
        if "Allow" in exc.headers:
            response.headers["Allow"] = exc.headers["Allow"]
        return response
    except Exception:
        log.exception("http_failed", path=request.path[:200])
        return _internal_response()


class _JsonErrorHandler(RequestHandler):
    """aiohttp's HTTP protocol, answering what it refuses by itself (a request it
    cannot parse: a URL or header over its limit, a bad request line) in the API's
    JSON error shape instead of plain text."""

    def handle_error(
        self,
        request: BaseRequest,
        status: int = 500,
        exc: BaseException | None = None,
        message: str | None = None,
    ) -> web.StreamResponse:
        if status >= 500:
            self.log_exception("Error handling request", exc_info=exc)
        else:  # a client's mistake, not the server's: no traceback in the logs
            log.debug("http_unparsable", status=status, error=str(message or exc)[:200])
        if request.writer.output_size > 0:
            raise ConnectionError("the response is on its way: no error can follow it")
        text = (message or "the request could not be handled")[:200]
        if isinstance(exc, LineTooLong):
            status, text = _over_long(exc)
        code, reason = _http_error(status)
        if status >= 500:
            text = "internal error; it has been logged"
        response = web.json_response(_error_body(code, reason, text), status=status)
        response.force_close()
        return response


class _JsonErrorServer(web.Server):
    def __call__(self) -> RequestHandler:
        return _JsonErrorHandler(self, loop=self._loop, **self._kwargs)


class HttpRunner(web.AppRunner):
    """``web.AppRunner`` whose connections answer protocol errors as JSON."""

    async def _make_server(self) -> web.Server:
        server = await super()._make_server()
        server.__class__ = _JsonErrorServer
        return server


async def _decode(
    request: web.Request, body_rule: str, descriptor: pb_descriptor.Descriptor
) -> pb_message.Message:
    message = _message_class(descriptor)()
    if body_rule == "*":
        raw = await request.read()
        if raw.strip():
            try:
                data = json.loads(raw)
            except RecursionError as exc:
                raise invalid("the body nests too deeply") from exc
            except ValueError as exc:
                raise invalid(f"the body is not JSON: {str(exc)[:200]}") from exc
            if not isinstance(data, dict):
                raise invalid("the body must be a JSON object")
            unknown = unknown_field(data, descriptor)
            if unknown is not None:
                raise unknown_field_error(unknown)
            try:
                json_format.ParseDict(data, message)
            except RecursionError as exc:
                raise invalid("the body nests too deeply") from exc
            except (json_format.ParseError, ValueError, TypeError) as exc:
                raise invalid(f"malformed body: {str(exc)[:200]}") from exc
    else:
        fields = descriptor.fields_by_name
        for key, value in request.query.items():
            name = key if key in fields else snake(key)
            field = fields.get(name)
            if field is None or field.type == field.TYPE_MESSAGE:
                raise invalid(f"unknown query parameter {key!r}")
            try:
                json_format.ParseDict({field.json_name: _scalar(field, value)}, message)
            except (json_format.ParseError, ValueError) as exc:
                raise invalid(f"bad query parameter {key!r}: {exc}") from exc
    check_path_fields(message, request.match_info)
    for name, value in request.match_info.items():
        setattr(message, name, value)
    return message


def _scalar(field: pb_descriptor.FieldDescriptor, value: str) -> Any:
    if field.type == field.TYPE_BOOL:
        return value.lower() in ("1", "true", "yes")
    if field.cpp_type in (
        field.CPPTYPE_INT32,
        field.CPPTYPE_INT64,
        field.CPPTYPE_UINT32,
        field.CPPTYPE_UINT64,
    ):
        return int(value)
    return value


Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def _route(service: GameService, method: pb_descriptor.MethodDescriptor, body_rule: str) -> Handler:
    core = getattr(service, snake(method.name))

    async def handle(request: web.Request) -> web.StreamResponse:
        started = time.perf_counter()
        code = "OK"
        caller = _caller(request)
        try:
            message = await _decode(request, body_rule, method.input_type)
            return web.json_response(_json(await core(message, caller)))
        except ServiceError as exc:
            code = exc.code.name
            return _error_response(exc)
        except StoreUnavailableError as exc:
            code = "UNAVAILABLE"
            return _error_response(store_unavailable(exc))
        except web.HTTPRequestEntityTooLarge:
            code = "RESOURCE_EXHAUSTED"
            return _too_large()
        except Exception:
            code = "INTERNAL"
            log.exception("http_failed", rpc=method.name, request_id=caller.request_id)
            return _internal_response()
        finally:
            metrics.observe(method.name, code, "http", time.perf_counter() - started)

    return handle


#: how often an idle SSE stream checks that its client is still there and the server running
SSE_CHECK_SECONDS = 1.0
#: an idle SSE stream writes a comment this often: proxies keep it open, and a client
#: that went away is noticed
SSE_KEEPALIVE_SECONDS = 15.0

_WATCH_PARAMETERS = {
    "from_version": "from_version",
    "fromVersion": "from_version",
    "after": "after_cursor",
    "after_cursor": "after_cursor",
    "afterCursor": "after_cursor",
}


def _watch_request(
    request: web.Request, allowed: dict[str, str] | None = None
) -> pb.WatchGameRequest:
    """The watch an SSE request asks for: ``?from_version=N`` or ``?after=CURSOR``; a
    ``Last-Event-ID`` header (what an EventSource sends when it reconnects, with the
    same URL) wins over both: a cursor, or a snapshot's id (a version)."""
    asked: dict[str, str] = {}
    for key, value in (request.query if allowed is None else allowed).items():
        name = _WATCH_PARAMETERS.get(key)
        if name is None:
            raise invalid(f"unknown query parameter {key[:40]!r}")
        asked[name] = value
    last = _header(request, "Last-Event-ID").strip()
    if last:
        asked = {"after_cursor": last} if cursor_position(last) else {"from_version": last}
    watch = pb.WatchGameRequest(
        game_id=request.match_info["game_id"], after_cursor=asked.get("after_cursor", "")
    )
    text = asked.get("from_version", "0").strip()
    if not (text.isascii() and text.isdigit()) or len(text) > 19:
        raise invalid(f"from_version must be a version (0 or more), not {text[:40]!r}")
    watch.from_version = int(text)
    return watch


async def _next_or_gone(
    stream: AsyncIterator[T],
    request: web.Request,
    response: web.StreamResponse,
    stopping: asyncio.Event,
) -> T | None:
    """The stream's next item; None when it ends, its client has gone or the server stops.

    A watch of an idle game waits for events without writing, so it would never notice
    a client that went away (aiohttp does not cancel handlers), and a graceful shutdown
    would wait for it until its timeout: check both every SSE_CHECK_SECONDS.
    """
    step = asyncio.ensure_future(anext(stream, None))
    idle = 0.0
    try:
        while True:
            done, _ = await asyncio.wait({step}, timeout=SSE_CHECK_SECONDS)
            if done:
                return step.result()
            transport = request.transport
            if stopping.is_set() or transport is None or transport.is_closing():
                return None
            idle += SSE_CHECK_SECONDS
            if idle >= SSE_KEEPALIVE_SECONDS:
                idle = 0.0
                await response.write(b": keep-alive\n\n")
    finally:
        if not step.done():
            step.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await step


def _sse_chunk(item: pb.WatchGameResponse) -> bytes:
    """One SSE event: a snapshot's id is its version (from_version resumes after it),
    an event's its cursor (after_cursor resumes after it)."""
    if item.HasField("snapshot"):
        kind, ident, payload = "snapshot", str(item.snapshot.version), _json(item.snapshot)
    else:
        kind, ident, payload = "event", item.event.cursor, _json(item.event)
    return f"event: {kind}\nid: {ident}\ndata: {json.dumps(payload)}\n\n".encode()


async def _serve_sse(
    request: web.Request,
    items: AsyncIterator[T],
    stopping: asyncio.Event,
    greeting: bytes,
    chunk: Callable[[T], bytes],
    last: Callable[[T], bool],
    request_id: str,
) -> web.StreamResponse:
    """Send ``items`` as Server-Sent Events until ``last(item)``, the client goes away or
    the server stops; the headers (and ``greeting``, a comment line) leave at once,
    before the first item, which may be far off."""
    response = web.StreamResponse(
        headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"}
    )
    await response.prepare(request)
    metrics.WATCHERS.inc()
    try:
        await response.write(greeting)
        item = await _next_or_gone(items, request, response, stopping)
        while item is not None:
            await response.write(chunk(item))
            if last(item):
                break
            item = await _next_or_gone(items, request, response, stopping)
    except (ConnectionResetError, ServiceError, StoreUnavailableError):
        pass  # the client went away, or the server stops (the client reconnects)
    except Exception:  # the headers are sent: no error response can follow them
        log.exception("sse_failed", request_id=request_id)
    finally:
        metrics.WATCHERS.dec()
    return response


def _watch(service: GameService, stopping: asyncio.Event) -> Handler:
    async def handle(request: web.Request) -> web.StreamResponse:
        caller = _caller(request)
        try:
            stream = await service.watch_game(_watch_request(request), caller)
        except ServiceError as exc:
            return _error_response(exc)
        except StoreUnavailableError as exc:
            return _error_response(store_unavailable(exc))
        try:
            return await _serve_sse(
                request, stream, stopping, b": watching\n\n", _sse_chunk, _never, caller.request_id
            )
        finally:
            aclose = getattr(stream, "aclose", None)
            if aclose is not None:
                await aclose()

    return handle


def _never(_: object) -> bool:
    return False


# ------------------------------------------------------------------ play sessions
# A browser's play session: GET .../{game_id}:play is one seat's session as
# Server-Sent Events (the Play stream's messages in protobuf's JSON mapping; the SSE
# event is the message's kind, an event's SSE id its cursor, a snapshot's its
# version), and each act is POSTed to the same path (a PlayAct), answered by its
# PlayResult (a refusal: the usual error body and status).

_PLAY_PARAMETERS = {**_WATCH_PARAMETERS, "seat": "seat"}
#: the session's own parameters (not the watch's start points)
_PLAY_OWN = ("seat", "prompts_only", "promptsOnly")
_FLAGS = {"true": True, "1": True, "false": False, "0": False}


def _play_subscribe(request: web.Request) -> pb.PlaySubscribe:
    """The session an SSE request asks for: the watch's start points (``?from_version``,
    ``?after``, ``Last-Event-ID``), ``?seat=N`` (a house-bot seat, for the operator) and
    ``?prompts_only=true`` (no events)."""
    query = {k: v for k, v in request.query.items() if k not in _PLAY_OWN}
    for key in query:
        if key not in _PLAY_PARAMETERS:
            raise invalid(f"unknown query parameter {key[:40]!r}")
    watch = _watch_request(request, allowed={k: v for k, v in query.items()})
    subscribe = pb.PlaySubscribe(
        game_id=watch.game_id, from_version=watch.from_version, after_cursor=watch.after_cursor
    )
    seat = request.query.get("seat")
    if seat is not None:
        text = seat.strip()
        if not (text.isascii() and text.isdigit()) or len(text) > 9:
            raise invalid(f"seat must be a seat number, not {text[:40]!r}", "NO_SUCH_SEAT")
        subscribe.seat = int(text)
    for name in ("prompts_only", "promptsOnly"):
        flag = request.query.get(name)
        if flag is not None:
            value = _FLAGS.get(flag.strip().lower())
            if value is None:
                raise invalid(f"{name} must be true or false, not {flag[:40]!r}")
            subscribe.prompts_only = value
    return subscribe


def _play_chunk(item: pb.PlayResponse) -> bytes:
    kind = item.WhichOneof("kind") or "message"
    ident = ""
    if kind == "event":
        ident = f"id: {item.event.cursor}\n"
    elif kind == "snapshot":
        ident = f"id: {item.snapshot.version}\n"
    elif kind == "prompt":
        # (every event of its version came before it: resuming after the whole version
        # is exact, and it is how a prompts-only session resumes)
        ident = f"id: {item.prompt.version}\n"
    return f"event: {kind}\n{ident}data: {json.dumps(_json(item))}\n\n".encode()


def _play_events(service: GameService, stopping: asyncio.Event) -> Handler:
    async def handle(request: web.Request) -> web.StreamResponse:
        caller = _caller(request)
        try:
            subscribe = _play_subscribe(request)
            # refused at once (as a watch is): the session's first message is its
            # snapshot, its first event, or its refusal
            await service.check_play(subscribe, caller)
        except ServiceError as exc:
            return _error_response(exc)
        except StoreUnavailableError as exc:
            return _error_response(store_unavailable(exc))
        stream = service.play(caller)
        # (charged to the stream limit by check_play already)
        await stream.receive(pb.PlayRequest(subscribe=subscribe), admitted=True)
        try:
            return await _serve_sse(
                request,
                stream.responses(),
                stopping,
                b": playing\n\n",
                _play_chunk,
                lambda item: item.HasField("closed"),
                caller.request_id,
            )
        finally:
            await stream.close()

    return handle


def _play_act(service: GameService) -> Handler:
    async def handle(request: web.Request) -> web.StreamResponse:
        started = time.perf_counter()
        code = "OK"
        caller = _caller(request)
        try:
            act = await _decode(request, "*", pb.PlayAct.DESCRIPTOR)
            assert isinstance(act, pb.PlayAct)
            act.game_id = request.match_info["game_id"]
            submit = submit_request(act, act.seat if act.HasField("seat") else None)
            answer = await service.submit_action(submit, caller)
            result = pb.PlayResult(request_id=act.request_id, version=answer.version)
            return web.json_response(_json(result))
        except ServiceError as exc:
            code = exc.code.name
            return _error_response(exc)
        except StoreUnavailableError as exc:
            code = "UNAVAILABLE"
            return _error_response(store_unavailable(exc))
        except web.HTTPRequestEntityTooLarge:
            code = "RESOURCE_EXHAUSTED"
            return _too_large()
        finally:
            metrics.observe("Play", code, "http", time.perf_counter() - started)

    return handle


# ------------------------------------------------------------------ CORS
# A browser page on another origin may call the HTTP face when its origin is allowed
# (--cors-origin): every response to it names the origin (on_response_prepare, so
# that the SSE stream, which sends its headers itself, carries them too), and a
# preflight is answered here, before routing.  Another origin gets no CORS header,
# so the browser keeps the response from its page.

CORS_METHODS = "GET, POST, PUT, PATCH, DELETE, OPTIONS"
CORS_HEADERS = "Authorization, Content-Type, X-Request-Id, Last-Event-ID"
CORS_EXPOSED = "X-Request-Id, Retry-After"
CORS_MAX_AGE = "600"  # seconds a browser may keep a preflight's answer


def _allowed_origin(request: web.BaseRequest, origins: frozenset[str]) -> str | None:
    origin = request.headers.get("Origin")
    if origin is None or not origins:
        return None
    if origin in origins:
        return origin
    return "*" if "*" in origins else None


def _cors(app: web.Application, origins: frozenset[str]) -> None:
    """Answer preflights and name the allowed origin on every response to it."""

    @web.middleware
    async def preflight(request: web.Request, handler: Handler) -> web.StreamResponse:
        if (
            request.method == "OPTIONS"
            and "Access-Control-Request-Method" in request.headers
            and _allowed_origin(request, origins) is not None
        ):
            return web.Response(
                status=204,
                headers={
                    "Access-Control-Allow-Methods": CORS_METHODS,
                    "Access-Control-Allow-Headers": CORS_HEADERS,
                    "Access-Control-Max-Age": CORS_MAX_AGE,
                },
            )
        return await handler(request)

    async def name_origin(request: web.Request, response: web.StreamResponse) -> None:
        origin = _allowed_origin(request, origins)
        if origin is None:
            return
        response.headers["Access-Control-Allow-Origin"] = origin
        response.headers["Access-Control-Expose-Headers"] = CORS_EXPOSED
        if origin != "*":
            response.headers.add("Vary", "Origin")  # the answer depends on the origin

    app.middlewares.insert(0, preflight)
    app.on_response_prepare.append(name_origin)


def build_app(
    service: GameService, *, cors_origins: frozenset[str] = frozenset()
) -> web.Application:
    app = web.Application(client_max_size=MAX_BODY_BYTES, middlewares=[_json_errors])
    app[TRUSTED_PROXIES] = service.config.trusted_proxies
    if cors_origins:
        _cors(app, cors_origins)
    for verb, template, body_rule, method in http_rules():
        app.router.add_route(verb, _aiohttp_path(template), _route(service, method, body_rule))
    stopping = asyncio.Event()
    app.router.add_get("/v1/games/{game_id:[^/:]+}:watch", _watch(service, stopping))
    app.router.add_get("/v1/games/{game_id:[^/:]+}:play", _play_events(service, stopping))
    app.router.add_post("/v1/games/{game_id:[^/:]+}:play", _play_act(service))

    async def end_watches(_: web.Application) -> None:
        stopping.set()  # open SSE streams end within SSE_CHECK_SECONDS

    app.on_shutdown.append(end_watches)
    document = openapi_document()

    async def openapi(_: web.Request) -> web.Response:
        return web.json_response(document)

    async def metrics_endpoint(_: web.Request) -> web.Response:
        with contextlib.suppress(StoreUnavailableError):  # (the gauge keeps its last value)
            metrics.GAMES_IN_PLAY.set(await service.store.games_in_play())
        return web.Response(body=generate_latest(), headers={"Content-Type": CONTENT_TYPE_LATEST})

    async def healthz(_: web.Request) -> web.Response:
        # (the server's store is monitored: its ping is the monitor's judgement)
        try:
            ok = await service.store.ping()
        except StoreUnavailableError:
            ok = False
        if ok:
            down = sorted(await service.store.ping_parts())
            if down:  # (a cluster's primaries down, not all: the others' games go on)
                return web.json_response({"status": "SERVING", "storeNodesDown": down})
            return web.json_response({"status": "SERVING"})
        return _error_response(store_unavailable(StoreUnavailableError("down")))

    app.router.add_get("/openapi.json", openapi)
    app.router.add_get("/metrics", metrics_endpoint)
    app.router.add_get("/healthz", healthz)
    add_static_routes(app)  # the browser table (docs/WEB.md)
    return app
