"""The gRPC face: the servicer that hands each RPC to the core, and error mapping.

Each RPC of the service descriptor maps to the core coroutine of the same name in
snake case (``SubmitAction`` → ``GameService.submit_action``): one mechanism for
every unary call, so a new RPC needs no code here.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import re
import time
import urllib.parse
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import grpc
import structlog
from google.protobuf import message as pb_message
from google.rpc import code_pb2, error_details_pb2, status_pb2
from grpc_status import rpc_status

from glintwick.v1 import game_pb2 as pb
from glintwick.v1 import game_pb2_grpc as pb_grpc
from services import metrics
from services.api import Caller, GameService, new_request_id
from services.config import Network
from services.errors import DOMAIN, ServiceError, internal, invalid, store_unavailable
from services.store.base import StoreUnavailableError
from services.usecases.access import bearer_token
from services.usecases.moves import MAX_REQUEST_ID
from services.usecases.quotas import client_address

log = structlog.get_logger("glintwick.grpc")

SERVICE = pb.DESCRIPTOR.services_by_name["GameService"]


def snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def caller_from_metadata(
    metadata: Any, peer: str = "", trusted: tuple[Network, ...] = ()
) -> Caller:
    """The caller of a call with this metadata from ``peer`` (gRPC's ``peer()``: the
    client's address unless ``trusted`` says it is a proxy of ours, then the one its
    ``x-forwarded-for`` names)."""
    token = None
    request_id = ""
    forwarded: list[str] = []
    for key, value in metadata or ():
        if key == "authorization":
            token = bearer_token(value if isinstance(value, str) else value.decode())
        elif key == "x-request-id":
            request_id = (value if isinstance(value, str) else value.decode())[:MAX_REQUEST_ID]
        elif key == "x-forwarded-for":
            forwarded.append(value if isinstance(value, str) else value.decode("latin-1"))
    address = client_address(peer_address(peer), forwarded, trusted)
    return Caller(token=token, request_id=request_id or new_request_id(), address=address)


def peer_address(peer: str) -> str:
    """The address of a gRPC peer: ``ipv4:1.2.3.4:5``, ``ipv6:[::1]:5`` → its IP;
    another (a Unix socket's) as it is."""
    kind, _, rest = urllib.parse.unquote(peer).partition(":")
    if kind in ("ipv4", "ipv6"):
        host = rest.rpartition(":")[0] if rest.count(":") and not rest.endswith("]") else rest
        return host.strip("[]")
    return peer


def _caller(context: grpc.aio.ServicerContext[Any, Any], trusted: tuple[Network, ...]) -> Caller:
    return caller_from_metadata(context.invocation_metadata(), context.peer() or "", trusted)


def status_of(error: ServiceError) -> status_pb2.Status:
    info = error_details_pb2.ErrorInfo(reason=error.reason, domain=DOMAIN)
    status = status_pb2.Status(code=error.code.value[0], message=error.message)
    status.details.add().Pack(info)
    if error.retry_after is not None:
        retry = error_details_pb2.RetryInfo()
        retry.retry_delay.FromTimedelta(datetime.timedelta(seconds=error.retry_after))
        status.details.add().Pack(retry)
    return status


async def _abort(context: grpc.aio.ServicerContext[Any, Any], error: ServiceError) -> None:
    await context.abort_with_status(rpc_status.to_status(status_of(error)))


class Undecodable:
    """A request whose bytes do not parse as its message: the handler answers
    INVALID_ARGUMENT (grpc.aio itself would answer UNKNOWN)."""

    def __init__(self, type_name: str, error: str) -> None:
        self.error = invalid(f"the request is not a valid {type_name}: {error}")


def _lenient(cls: type[pb_message.Message]) -> Callable[[bytes], Any]:
    def deserialize(data: bytes) -> Any:
        try:
            return cls.FromString(data)
        except pb_message.DecodeError as exc:
            return Undecodable(cls.DESCRIPTOR.full_name, str(exc))

    return deserialize


def add_to_server(servicer: Servicer, server: grpc.aio.Server) -> None:
    """Like the generated ``add_GameServiceServicer_to_server``, with lenient request
    decoding (see :class:`Undecodable`)."""
    handlers: dict[str, grpc.RpcMethodHandler[Any, Any]] = {}
    for method in SERVICE.methods:
        request = getattr(pb, method.input_type.name)
        response = getattr(pb, method.output_type.name)
        if method.client_streaming:
            make: Any = grpc.stream_stream_rpc_method_handler
        elif method.server_streaming:
            make = grpc.unary_stream_rpc_method_handler
        else:
            make = grpc.unary_unary_rpc_method_handler
        handlers[method.name] = make(
            getattr(servicer, method.name),
            request_deserializer=_lenient(request),
            response_serializer=response.SerializeToString,
        )
    server.add_generic_rpc_handlers(
        (grpc.method_handlers_generic_handler(SERVICE.full_name, handlers),)
    )
    server.add_registered_method_handlers(SERVICE.full_name, handlers)


def _unary(
    name: str,
    core: Callable[[Any, Caller], Awaitable[pb_message.Message]],
    trusted: tuple[Network, ...],
) -> Any:
    async def handler(request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
        caller = _caller(context, trusted)
        started = time.perf_counter()
        code = "OK"
        try:
            if isinstance(request, Undecodable):
                raise request.error
            return await core(request, caller)
        except ServiceError as exc:
            code = exc.code.name
            if exc.code is grpc.StatusCode.ABORTED:
                metrics.CAS_CONFLICTS.inc()
            await _abort(context, exc)
        except StoreUnavailableError as exc:
            # (no log line: the store-health monitor logs the outage once)
            code = grpc.StatusCode.UNAVAILABLE.name
            await _abort(context, store_unavailable(exc))
        except Exception:
            code = "INTERNAL"
            log.exception("rpc_failed", rpc=name, request_id=caller.request_id)
            await _abort(context, internal())
        finally:
            metrics.observe(name, code, "grpc", time.perf_counter() - started)
        raise AssertionError("unreachable: abort raises")

    handler.__name__ = name
    return handler


class Servicer(pb_grpc.GameServiceServicer):
    """Built from the descriptor: every unary RPC delegates to the core."""

    def __init__(self, service: GameService) -> None:
        self.service = service
        self.trusted = service.config.trusted_proxies
        for method in SERVICE.methods:
            if not method.server_streaming:
                core = getattr(service, snake(method.name))
                setattr(self, method.name, _unary(method.name, core, self.trusted))

    async def WatchGame(
        self, request: pb.WatchGameRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> AsyncIterator[pb.WatchGameResponse]:
        caller = _caller(context, self.trusted)
        metrics.WATCHERS.inc()
        stream: AsyncIterator[pb.WatchGameResponse] | None = None
        try:
            if isinstance(request, Undecodable):
                raise request.error
            stream = await self.service.watch_game(request, caller)
            async for item in stream:
                yield item
        except ServiceError as exc:
            await _abort(context, exc)
        except StoreUnavailableError as exc:
            await _abort(context, store_unavailable(exc))
        except Exception:
            log.exception("rpc_failed", rpc="WatchGame", request_id=caller.request_id)
            await _abort(context, internal())
        finally:
            metrics.WATCHERS.dec()
            aclose = getattr(stream, "aclose", None)
            if aclose is not None:  # (its leases: services/usecases/quotas.py)
                await aclose()

    async def Play(
        self, request_iterator: AsyncIterator[Any], context: grpc.aio.ServicerContext[Any, Any]
    ) -> AsyncIterator[pb.PlayResponse]:
        # (an async generator itself: grpc.aio tells streaming handlers apart by that)
        async for item in _play(self.service, request_iterator, context, self.trusted):
            yield item


_ = code_pb2


async def _play(
    service: GameService,
    requests: AsyncIterator[Any],
    context: grpc.aio.ServicerContext[Any, Any],
    trusted: tuple[Network, ...],
) -> AsyncIterator[pb.PlayResponse]:
    """The Play stream: client messages are read by a task of their own (an act can
    arrive while the server is sending), and what the sessions send is yielded until
    the server stops or the client, having half-closed, has no session left (OK)."""
    caller = _caller(context, trusted)
    try:
        await service.admit_stream(caller)
    except ServiceError as exc:
        await _abort(context, exc)
    stream = service.play(caller)

    async def read() -> None:
        async for request in requests:
            await stream.receive(request.error if isinstance(request, Undecodable) else request)
        # the client half-closed: the stream ends (OK) once its sessions are over
        await stream.half_closed()

    reader = asyncio.create_task(read())
    metrics.WATCHERS.inc()
    try:
        async for item in stream.responses():
            yield item
    except ServiceError as exc:
        await _abort(context, exc)
    except StoreUnavailableError as exc:
        await _abort(context, store_unavailable(exc))
    except Exception:
        log.exception("rpc_failed", rpc="Play", request_id=caller.request_id)
        await _abort(context, internal())
    finally:
        metrics.WATCHERS.dec()
        reader.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await reader
        await stream.close()
        log.debug(
            "play_stream_ended",
            request_id=caller.request_id,
            received=stream.received,
            sent=stream.sent,
        )
