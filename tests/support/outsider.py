"""An outsider's client: the API as an integrator in another language meets it.

This module imports nothing of the API's code (no ``glintwick``, ``clients``,
``engine`` or ``services``), nor does it use its generated code: the client is built
at test time from ``proto/`` alone, as a grpc-js or Go client is.  protoc (grpcio-tools)
compiles every file of ``proto/`` into a ``FileDescriptorSet`` in a temporary
folder; the messages are classes of a descriptor pool of their own
(:class:`OutsiderApi`), and calls are generic ``unary_unary`` / ``stream_stream``
calls with those classes' serializers (:class:`OutsiderClient`).  A refusal is read
as any client reads it: the ``google.rpc.Status`` of the ``grpc-status-details-bin``
trailer, its details unpacked with the vendored google.rpc messages
(:meth:`OutsiderApi.refusal`).  The server is ``glintwick serve`` in a process of its
own (:func:`served`, ``loadtests.processes``' server), talked to over its ports only.

``GLINTWICK_OUTSIDER_TREE`` names another checkout (e.g. an older release's) whose
``proto/`` the client is compiled from and whose ``glintwick serve`` it talks to (run
by this Python, that tree first on its path): how a test shows it fails on older code.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import subprocess
import sys
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import grpc
from google.protobuf import descriptor_pb2, descriptor_pool, json_format, message_factory
from google.protobuf.descriptor import Descriptor, EnumDescriptor, FileDescriptor
from google.protobuf.message import Message

from loadtests.processes.server import ServerProcess

#: the checkout the outsider reads ``proto/`` from and runs ``glintwick serve`` of
TREE = Path(os.environ.get("GLINTWICK_OUTSIDER_TREE") or Path(__file__).resolve().parents[2])
SERVICE = "glintwick.v1.GameService"
#: where a refusal's google.rpc.Status travels (the gRPC richer error model)
STATUS_TRAILER = "grpc-status-details-bin"
#: ErrorInfo's domain for every refusal of the service
DOMAIN = "glintwick.dev"


def proto_files(root: Path) -> list[str]:
    """Every ``.proto`` file under ``root`` (relative), the released images aside."""
    return sorted(
        str(path.relative_to(root))
        for path in root.rglob("*.proto")
        if "released" not in path.parts
    )


def compile_proto(root: Path, out: Path) -> descriptor_pb2.FileDescriptorSet:
    """protoc's FileDescriptorSet of every file under ``root`` and its imports (the
    well-known types come with protoc); AssertionError with protoc's complaint if the
    files do not compile alone."""
    target = out / "api.binpb"
    result = subprocess.run(
        [sys.executable, "-m", "grpc_tools.protoc", f"-I{root}", "--include_imports",
         f"--descriptor_set_out={target}", *proto_files(root)],
        cwd=root, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert result.returncode == 0, f"proto/ does not compile alone:\n{result.stderr}"
    return descriptor_pb2.FileDescriptorSet.FromString(target.read_bytes())


@dataclass(frozen=True)
class Refusal:
    """A refused call as a client reads it from the status and its trailer."""

    code: grpc.StatusCode
    message: str
    status: Message | None  # the google.rpc.Status of the trailer (None: none sent)
    details: list[Message] = field(default_factory=list)  # its details, unpacked

    def detail(self, name: str) -> Message | None:
        """The detail of the message type ``name`` (e.g. "google.rpc.ErrorInfo")."""
        return next((d for d in self.details if d.DESCRIPTOR.full_name == name), None)

    @property
    def reason(self) -> str:
        """ErrorInfo's reason ("" when the refusal carries no ErrorInfo)."""
        info = self.detail("google.rpc.ErrorInfo")
        return str(getattr(info, "reason", "")) if info is not None else ""


class OutsiderApi:
    """The API's messages, compiled from a ``proto/`` folder into a pool of their own."""

    def __init__(self, files: descriptor_pb2.FileDescriptorSet) -> None:
        self.files = files
        self.pool = descriptor_pool.DescriptorPool()
        for file in files.file:  # (protoc writes a file after its imports)
            self.pool.Add(file)

    @classmethod
    def compiled(cls, out: Path, root: Path | None = None) -> OutsiderApi:
        return cls(compile_proto(root or TREE / "proto", out))

    def file(self, name: str) -> FileDescriptor:
        return self.pool.FindFileByName(name)

    def descriptor(self, name: str) -> Descriptor:
        return self.pool.FindMessageTypeByName(name)

    def enum(self, name: str) -> EnumDescriptor:
        return self.pool.FindEnumTypeByName(name)

    def message_class(self, name: str) -> type[Message]:
        return message_factory.GetMessageClass(self.descriptor(name))

    def new(self, name: str, values: Mapping[str, Any] | None = None) -> Message:
        """A message of type ``name`` from protobuf's JSON form (camelCase or proto
        names; enums by their value names)."""
        message = self.message_class(name)()
        json_format.ParseDict(dict(values or {}), message, descriptor_pool=self.pool)
        return message

    def plain(self, message: Message) -> dict[str, Any]:
        """A message's JSON form as the HTTP face writes it (every field)."""
        return json_format.MessageToDict(
            message, always_print_fields_with_no_presence=True, descriptor_pool=self.pool
        )

    def refusal(self, error: grpc.RpcError) -> Refusal:
        """What a refused call says: its code, message and the unpacked details."""
        call = cast(grpc.Call, error)  # (what a failed call raises is both)
        code = call.code()
        text = call.details() or ""
        blob = next((v for k, v in call.trailing_metadata() or () if k == STATUS_TRAILER), None)
        if blob is None:
            return Refusal(code, text, None)
        assert isinstance(blob, bytes), blob
        status = self.message_class("google.rpc.Status").FromString(blob)
        details = []
        for packed in status.details:  # type: ignore[attr-defined]
            name = packed.type_url.rpartition("/")[2]
            details.append(self.message_class(name).FromString(packed.value))
        return Refusal(code, text, status, details)

    def value_name(self, enum: str, number: int) -> str:
        return self.enum(enum).values_by_number[number].name


class OutsiderClient:
    """Calls of the service over a plain gRPC channel, with the outsider's messages."""

    def __init__(self, api: OutsiderApi, target: str) -> None:
        self.api = api
        self.channel = grpc.insecure_channel(target)
        self._target = target
        self.service = api.pool.FindServiceByName(SERVICE)

    def close(self) -> None:
        self.channel.close()

    def __enter__(self) -> OutsiderClient:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def _types(self, method: str) -> tuple[type[Message], type[Message]]:
        described = self.service.methods_by_name[method]
        return (
            message_factory.GetMessageClass(described.input_type),
            message_factory.GetMessageClass(described.output_type),
        )

    @staticmethod
    def _metadata(token: str | None) -> tuple[tuple[str, str], ...]:
        return (("authorization", f"Bearer {token}"),) if token else ()

    def call(
        self,
        method: str,
        request: Mapping[str, Any] | Message | None = None,
        *,
        token: str | None = None,
        timeout: float = 10.0,
    ) -> Message:
        """A unary call; ``request`` a message or its JSON form. Raises grpc.RpcError."""
        request_type, response_type = self._types(method)
        if not isinstance(request, Message):
            message = request_type()
            json_format.ParseDict(dict(request or {}), message, descriptor_pool=self.api.pool)
            request = message
        stub: grpc.UnaryUnaryMultiCallable[Message, Message] = self.channel.unary_unary(
            f"/{SERVICE}/{method}",
            request_serializer=lambda m: m.SerializeToString(),
            response_deserializer=response_type.FromString,
        )
        response: Message = stub(request, metadata=self._metadata(token), timeout=timeout)
        return response

    def refused(
        self, method: str, request: Mapping[str, Any] | Message | None = None, **options: Any
    ) -> Refusal:
        """The refusal of a call that must be refused (AssertionError if it is answered)."""
        try:
            answer = self.call(method, request, **options)
        except grpc.RpcError as error:
            return self.api.refusal(error)
        raise AssertionError(f"{method} was answered, not refused: {answer}")

    def stream(
        self,
        method: str,
        requests: Iterable[Mapping[str, Any] | Message],
        *,
        token: str | None = None,
        timeout: float | None = None,
    ) -> Iterator[Message]:
        """A bidirectional (or server) stream: ``requests`` sent in order, the answers
        yielded as they come (the Play stream: ``stream("Play", ...)``)."""
        request_type, response_type = self._types(method)

        def encoded() -> Iterator[Message]:
            for request in requests:
                if isinstance(request, Message):
                    yield request
                else:
                    message = request_type()
                    json_format.ParseDict(dict(request), message, descriptor_pool=self.api.pool)
                    yield message

        call: grpc.StreamStreamMultiCallable[Message, Message] = self.channel.stream_stream(
            f"/{SERVICE}/{method}",
            request_serializer=lambda m: m.SerializeToString(),
            response_deserializer=response_type.FromString,
        )
        yield from call(encoded(), metadata=self._metadata(token), timeout=timeout)

    def play(self, *, token: str | None = None) -> OutsiderPlay:
        """A Play stream driven message by message (grpc.aio: write, read, half-close
        and wait for the status, as a grpc-js client does); use as ``async with``."""
        return OutsiderPlay(self.api, self.channel_target, token)

    @property
    def channel_target(self) -> str:
        return self._target


class OutsiderPlay:
    """One Play stream over a grpc.aio channel of its own, with the outsider's messages."""

    def __init__(self, api: OutsiderApi, target: str, token: str | None) -> None:
        self.api = api
        self._target = target
        self._token = token
        self._channel: grpc.aio.Channel | None = None
        self.call: Any = None

    async def __aenter__(self) -> OutsiderPlay:
        self._channel = grpc.aio.insecure_channel(self._target)
        service = self.api.pool.FindServiceByName(SERVICE).methods_by_name["Play"]
        response_type = message_factory.GetMessageClass(service.output_type)
        method: Any = self._channel.stream_stream(
            f"/{SERVICE}/Play",
            request_serializer=lambda m: m.SerializeToString(),
            response_deserializer=response_type.FromString,
        )
        self.call = method(metadata=OutsiderClient._metadata(self._token))
        return self

    async def __aexit__(self, *_: object) -> None:
        if self.call is not None and not self.call.done():
            self.call.cancel()
        if self._channel is not None:
            await self._channel.close()

    async def send(self, request: Mapping[str, Any]) -> None:
        """A PlayRequest from its JSON form (``{"subscribe": {...}}``, ``{"act": ...}``)."""
        await self.call.write(self.api.new("glintwick.v1.PlayRequest", request))

    async def receive(self, timeout: float = 10.0) -> Message | None:
        """The next PlayResponse (None: the stream ended)."""
        message = await asyncio.wait_for(self.call.read(), timeout)
        return None if message is grpc.aio.EOF else cast(Message, message)

    async def receive_until(self, kind: str, timeout: float = 10.0) -> list[Message]:
        """Every PlayResponse up to and with the first of ``kind`` (a case of its oneof)."""
        received: list[Message] = []
        while True:
            message = await self.receive(timeout)
            assert message is not None, f"the stream ended before a {kind}: {received}"
            received.append(message)
            if message.WhichOneof("kind") == kind:
                return received

    async def half_close(self) -> None:
        await self.call.done_writing()

    async def status(self, timeout: float = 10.0) -> grpc.StatusCode:
        """The stream's status code, once the server ends it (TimeoutError: it did not
        within ``timeout`` seconds)."""
        code: grpc.StatusCode = await asyncio.wait_for(self.call.code(), timeout)
        return code


# --------------------------------------------------------------------------- the server


@dataclass(frozen=True)
class Served:
    """A ``glintwick serve`` process's addresses."""

    grpc_target: str  # host:port
    http: str  # http://host:port
    operator_token: str


OPERATOR_TOKEN = "outsider-operator"


@contextlib.contextmanager
def served(logs: Path, *options: str, tree: Path = TREE, store: str = "memory") -> Iterator[Served]:
    """``glintwick serve --store memory`` (or ``store``: a Redis URL) of ``tree`` on
    free ports, with an operator credential and ``options`` (more flags), until the
    block ends; its logs in the folder ``logs``."""
    flags = ("--operator-token", OPERATOR_TOKEN, *options)
    with ServerProcess(logs, *flags, store=store, http=True, root=tree) as server:
        yield Served(server.address, server.http_url, OPERATOR_TOKEN)
