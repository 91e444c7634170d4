"""Locust's gRPC pattern: gevent-compatible grpc, a reporting interceptor, a base user.

Importing this module patches grpc for gevent (``grpc.experimental.gevent.init_gevent``),
so it must be imported before any channel is created and only in a locust process
(locust has already monkey-patched the standard library by then).

:class:`LocustInterceptor` reports every call to locust's statistics through
``environment.events.request`` (request type ``grpc``, the RPC's name) and gives a
call without a deadline the default one, so no call can hang a simulated user:

* a unary call: one sample, its latency and the response's size, or the failure;
* a server stream (``WatchGame``): ``<RPC> (open)`` is the time to the first message
  (a watch's snapshot), each later message is a ``<RPC> (event)`` sample whose time is
  what ``message_latency`` says (for a watch: the delay from the move's submission to
  its event reaching the watcher; no sample when it cannot tell), and a stream that
  breaks is a failure of ``<RPC> (stream)``.  A stream that reaches its deadline after
  it opened has simply been held for as long as it was asked to: not a failure.
"""

from __future__ import annotations

import itertools
import os
import time
from collections.abc import Callable, Iterator
from typing import Any, NamedTuple, TypeVar, cast

import gevent
import grpc
import grpc.experimental.gevent as grpc_gevent
from google.protobuf.message import Message
from locust import User
from locust.env import Environment

from glintwick.v1 import game_pb2_grpc as pb_grpc

grpc_gevent.init_gevent()

#: seconds: the deadline of a call made without one
DEFAULT_DEADLINE = 10.0

Req = TypeVar("Req")
MessageLatency = Callable[[str, Any], float | None]


class RpcFailure(Exception):
    """A failed call as locust's failure table shows it: ``CODE: details``."""

    def __init__(self, code: grpc.StatusCode, details: str) -> None:
        super().__init__(f"{code.name}: {details}")
        self.code = code


def rpc_name(method: str | bytes) -> str:
    """``/glintwick.v1.GameService/SubmitAction`` → ``SubmitAction``."""
    text = method.decode() if isinstance(method, bytes) else method
    return text.rsplit("/", 1)[-1]


def failure_of(error: grpc.RpcError) -> RpcFailure:
    call = cast(grpc.Call, error)
    return RpcFailure(call.code(), call.details() or "")


class _Details(NamedTuple):
    method: str
    timeout: float | None
    metadata: Any
    credentials: grpc.CallCredentials | None
    wait_for_ready: bool | None
    compression: grpc.Compression | None


class _CallDetails(_Details, grpc.ClientCallDetails):
    """grpc.ClientCallDetails is abstract: the usual named-tuple implementation."""


_clients = itertools.count(1)


def simulated_client_address() -> str:
    """A client address of its own for one simulated user (10.P.H.L: P this load
    generator process, H.L a counter).  The server, started with ``--trusted-proxy``
    the load generator's own address, takes it from ``x-forwarded-for`` as it would
    from an ingress: each table is its own client for the per-client limits and
    quotas, as the many players it stands for would be (docs/LOADTEST.md)."""
    number = next(_clients)
    return f"10.{os.getpid() % 250 + 1}.{number >> 8 & 255}.{number & 255}"


def _with_deadline(
    details: grpc.ClientCallDetails, default: float, forwarded_for: str | None = None
) -> grpc.ClientCallDetails:
    if details.timeout is not None and forwarded_for is None:
        return details
    metadata = details.metadata
    if forwarded_for is not None:
        metadata = (*(metadata or ()), ("x-forwarded-for", forwarded_for))
    return _CallDetails(
        details.method,
        default if details.timeout is None else details.timeout,
        metadata,
        details.credentials,
        getattr(details, "wait_for_ready", None),
        getattr(details, "compression", None),
    )


class _ReportingStream:
    """A server stream's call, passed through message by message while reporting them."""

    def __init__(
        self,
        call: Any,
        name: str,
        started: float,
        fire: Callable[..., None],
        latency: MessageLatency | None,
    ) -> None:
        self._call = call
        self._name = name
        self._started = started
        self._fire = fire
        self._latency = latency
        self._opened = False

    def __getattr__(self, attribute: str) -> Any:  # code(), cancel(), … of the call
        return getattr(self._call, attribute)

    def __iter__(self) -> Iterator[Any]:
        return self

    def __next__(self) -> Any:
        try:
            message = next(self._call)
        except grpc.RpcError as error:
            code = cast(grpc.Call, error).code()
            held = self._opened and code is grpc.StatusCode.DEADLINE_EXCEEDED
            if not held and code is not grpc.StatusCode.CANCELLED:
                which = "stream" if self._opened else "open"
                self._report(which, self._elapsed(), 0, failure_of(error))
            raise
        size = message.ByteSize() if isinstance(message, Message) else 0
        if not self._opened:
            self._opened = True
            self._report("open", self._elapsed(), size, None)
        elif self._latency is not None:
            latency = self._latency(self._name, message)
            if latency is not None:
                self._report("event", latency, size, None)
        return message

    def _elapsed(self) -> float:
        return (time.perf_counter() - self._started) * 1000

    def _report(self, what: str, ms: float, size: int, exception: Exception | None) -> None:
        self._fire(
            request_type="grpc",
            name=f"{self._name} ({what})",
            response_time=ms,
            response_length=size,
            response=None,
            context={},
            exception=exception,
        )


class LocustInterceptor(grpc.UnaryUnaryClientInterceptor, grpc.UnaryStreamClientInterceptor):
    """Reports every call to locust and puts a deadline on every call."""

    def __init__(
        self,
        environment: Environment,
        default_deadline: float = DEFAULT_DEADLINE,
        message_latency: MessageLatency | None = None,
        forwarded_for: str | None = None,
    ) -> None:
        self.environment = environment
        self.default_deadline = default_deadline
        self.message_latency = message_latency
        self.forwarded_for = forwarded_for  # the simulated client's address, if any

    def _fire(self, **kwargs: Any) -> None:
        request: Any = self.environment.events.request  # locust's EventHook is untyped
        request.fire(**kwargs)

    def intercept_unary_unary(
        self,
        continuation: Callable[[grpc.ClientCallDetails, Req], Any],
        client_call_details: grpc.ClientCallDetails,
        request: Req,
    ) -> Any:
        details = _with_deadline(client_call_details, self.default_deadline, self.forwarded_for)
        started = time.perf_counter()
        outcome = continuation(details, request)
        exception: Exception | None = None
        size = 0
        try:
            response = outcome.result()
            size = response.ByteSize() if isinstance(response, Message) else 0
        except grpc.RpcError as error:
            exception = failure_of(error)
        self._fire(
            request_type="grpc",
            name=rpc_name(details.method),
            response_time=(time.perf_counter() - started) * 1000,
            response_length=size,
            response=None,
            context={},
            exception=exception,
        )
        return outcome

    def intercept_unary_stream(
        self,
        continuation: Callable[[grpc.ClientCallDetails, Req], Any],
        client_call_details: grpc.ClientCallDetails,
        request: Req,
    ) -> Any:
        details = _with_deadline(client_call_details, self.default_deadline, self.forwarded_for)
        started = time.perf_counter()
        call = continuation(details, request)
        return _ReportingStream(
            call, rpc_name(details.method), started, self._fire, self.message_latency
        )


def reserve_grpc_worker() -> int:
    """One more worker thread in gevent's hub threadpool; returns the pool's new size.

    Under gevent, grpc waits for every completion (a unary call's answer, a stream's
    next message) in a worker of the hub's threadpool (``grpc_gevent.pyx.pxi``), which
    has 10 workers unless told otherwise, and one of them is grpc's for good
    (``spawn_greenlets``).  An open watch stream holds a worker while it waits, so ten
    watchers left no worker for the other users' calls: every call queued behind the
    streams' two-second polls (docs/LOADTEST.md, "the first bottleneck").  Each gRPC
    user has at most one call or stream in flight, so one worker each keeps them apart.
    """
    pool = gevent.get_hub().threadpool
    pool.maxsize = pool.maxsize + 1
    size: int = pool.maxsize
    return size


class GrpcUser(User):
    """A locust user with its own channel (through the interceptor) and a GameService stub.

    ``host`` is the gRPC target, ``host:port`` (locust's ``--host``).  Each user has its
    own channel, so with ``glintwick serve --workers N`` the users' connections spread
    over the worker processes as real clients' would, and its own worker in the gevent
    threadpool that grpc waits in (:func:`reserve_grpc_worker`).
    """

    abstract = True

    def __init__(
        self, environment: Environment, default_deadline: float = DEFAULT_DEADLINE
    ) -> None:
        super().__init__(environment)
        target = (self.host or "").removeprefix("grpc://")
        if not target:
            raise ValueError("give the gRPC target as --host host:port")
        reserve_grpc_worker()
        self.client_address = simulated_client_address()
        interceptor = LocustInterceptor(
            environment,
            default_deadline,
            message_latency=self.message_latency,
            forwarded_for=self.client_address,
        )
        # a connection of its own, as each of the many players a user stands for has:
        # grpc otherwise shares one connection among every channel to the same target,
        # and a server of several processes (SO_REUSEPORT balances connections, not
        # calls) then served the whole load test from one of them (docs/LOADTEST.md)
        options = [("grpc.use_local_subchannel_pool", 1)]
        self._channel = grpc.insecure_channel(target, options=options)
        self.stub = pb_grpc.GameServiceStub(grpc.intercept_channel(self._channel, interceptor))

    def report(self, name: str, ms: float, size: int, failure: Exception | None) -> None:
        """One sample of locust's, by hand (what the interceptor does not see: a Play
        stream's messages, a table's whole move)."""
        self.environment.events.request.fire(
            request_type="grpc",
            name=name,
            response_time=ms,
            response_length=size,
            response=None,
            context={},
            exception=failure,
        )

    def message_latency(self, rpc: str, message: Any) -> float | None:
        """How late a stream's message is, in ms (None: no sample); the watch user says."""
        return None

    def on_stop(self) -> None:
        self._channel.close()
