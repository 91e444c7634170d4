"""Errors from ``proto/`` and reflection alone: a client in another language reads a
refusal's ``google.rpc.Status``, ``ErrorInfo`` and ``RetryInfo`` with the vendored
google.rpc messages (nothing declared by hand), and a grpcurl user discovers every
message, enum and reason of the API through server reflection (tests/support/outsider.py:
the client is compiled from proto/ at test time; the server is ``glintwick serve``)."""

from __future__ import annotations

from collections.abc import Iterator

import grpc
import pytest
from google.protobuf import descriptor_pb2, descriptor_pool
from google.protobuf.descriptor import Descriptor, EnumDescriptor, FileDescriptor
from grpc_reflection.v1alpha.proto_reflection_descriptor_database import (
    ProtoReflectionDescriptorDatabase,
)

from tests.support.outsider import (
    DOMAIN,
    SERVICE,
    TREE,
    OutsiderApi,
    OutsiderClient,
    Served,
    proto_files,
    served,
)

#: what a client needs to read the API's errors, and where proto/ has it
ERROR_TYPES = {
    "google.rpc.Status": "google/rpc/status.proto",
    "google.rpc.ErrorInfo": "google/rpc/error_details.proto",
    "google.rpc.RetryInfo": "google/rpc/error_details.proto",
}
REASONS = "glintwick.v1.ErrorReason"
#: the folders of proto/ with the API's files (glintwick/storage is the store's own)
API_FOLDERS = ("glintwick/v1/", "google/api/", "google/rpc/")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    # (AnalyseHand once a client, then refused for 100 s: a RetryInfo to read)
    logs = tmp_path_factory.mktemp("server")
    with served(logs, "--limits", "analyse=0.01/1") as running:
        yield running


def test_proto_declares_the_error_details_a_client_reads(api: OutsiderApi) -> None:
    for name, file in ERROR_TYPES.items():
        assert api.descriptor(name).file.name == file
    assert api.enum(REASONS).file.name == "glintwick/v1/errors.proto"


def _reason_names(api: OutsiderApi) -> set[str]:
    return {value.name.removeprefix("ERROR_REASON_") for value in api.enum(REASONS).values}


def test_a_refusal_reads_with_the_vendored_messages(client: OutsiderClient) -> None:
    api = client.api
    game = client.call("CreateGame", {"ruleSetName": "whiskertrail", "seats": 2})
    game_id = str(game.game_id)  # type: ignore[attr-defined]
    tokens = {}
    for name in ("ann", "bob"):
        joined = client.call("JoinGame", {"gameId": game_id, "name": name})
        tokens[joined.seat] = joined.token  # type: ignore[attr-defined]
    view = client.call("GetView", {"gameId": game_id}, token=tokens[0])
    current = view.current  # type: ignore[attr-defined]
    draw = {"gameId": game_id, "expectedVersion": 0, "action": {"draw": {}}}
    refusals = {
        "BAD_TOKEN": client.refused("SubmitAction", draw, token="not-a-token"),
        "NOT_YOUR_TURN": client.refused("SubmitAction", draw, token=tokens[1 - current]),
        "STALE_VERSION": client.refused(
            "SubmitAction", {**draw, "expectedVersion": 7}, token=tokens[current]
        ),
        "GAME_NOT_FOUND": client.refused("GetGame", {"gameId": "no-such-game"}),
    }
    codes = {
        "BAD_TOKEN": grpc.StatusCode.UNAUTHENTICATED,
        "NOT_YOUR_TURN": grpc.StatusCode.FAILED_PRECONDITION,
        "STALE_VERSION": grpc.StatusCode.ABORTED,
        "GAME_NOT_FOUND": grpc.StatusCode.NOT_FOUND,
    }
    for reason, refusal in refusals.items():
        assert refusal.code is codes[reason], refusal
        status = refusal.status
        assert status is not None, f"{reason}: no google.rpc.Status in the trailers"
        assert status.code == refusal.code.value[0]  # type: ignore[attr-defined]
        assert status.message == refusal.message  # type: ignore[attr-defined]
        info = refusal.detail("google.rpc.ErrorInfo")
        assert info is not None, refusal
        assert (info.domain, info.reason) == (DOMAIN, reason)  # type: ignore[attr-defined]
        assert reason in _reason_names(api)  # a value of ErrorReason, less its prefix


def test_a_rate_limited_call_says_when_to_retry(client: OutsiderClient) -> None:
    hand = {"ruleSetName": "contract", "round": 1, "hand": ["7H", "7S", "7D"], "bestOnly": True}
    client.call("AnalyseHand", hand)
    refusal = client.refused("AnalyseHand", hand)
    assert refusal.code is grpc.StatusCode.RESOURCE_EXHAUSTED
    assert refusal.reason == "RATE_LIMITED" and refusal.reason in _reason_names(client.api)
    retry = refusal.detail("google.rpc.RetryInfo")
    assert retry is not None, refusal
    delay = retry.retry_delay  # type: ignore[attr-defined]
    assert 1 <= delay.seconds + delay.nanos / 1e9 <= 101


# ------------------------------------------------------------------ reflection


def _reflected(target: str) -> tuple[set[str], descriptor_pool.DescriptorPool]:
    channel = grpc.insecure_channel(target)
    database = ProtoReflectionDescriptorDatabase(channel)
    return set(database.get_services()), descriptor_pool.DescriptorPool(database)


def _shape(file: FileDescriptor) -> descriptor_pb2.FileDescriptorProto:
    """A file's declarations (what a client generates code from), without comments."""
    proto = descriptor_pb2.FileDescriptorProto()
    file.CopyToProto(proto)
    proto.ClearField("source_code_info")
    for extension in proto.extension:
        extension.ClearField("json_name")
    for message in proto.message_type:
        _drop_json_names(message)
    return proto


def _drop_json_names(message: descriptor_pb2.DescriptorProto) -> None:
    # (protoc writes every field's json_name; generated Python keeps only non-default ones)
    for field in message.field:
        field.ClearField("json_name")
    for nested in message.nested_type:
        _drop_json_names(nested)


def _reachable(descriptor: Descriptor, seen: dict[str, Descriptor | EnumDescriptor]) -> None:
    if descriptor.full_name in seen:
        return
    seen[descriptor.full_name] = descriptor
    for field in descriptor.fields:
        if field.message_type is not None:
            _reachable(field.message_type, seen)
        if field.enum_type is not None:
            seen[field.enum_type.full_name] = field.enum_type


def test_reflection_serves_every_file_the_api_uses(api: OutsiderApi, server: Served) -> None:
    services, pool = _reflected(server.grpc_target)
    assert SERVICE in services
    # what a grpcurl user asks for by name: the reasons and the error details
    reasons = pool.FindEnumTypeByName(REASONS)
    assert {v.name for v in reasons.values} == {v.name for v in api.enum(REASONS).values}
    for name, file in ERROR_TYPES.items():
        assert pool.FindMessageTypeByName(name).file.name == file
    # every message and enum reachable from the service resolves, and every file of
    # proto/ is served as proto/ declares it
    service = pool.FindServiceByName(SERVICE)
    seen: dict[str, Descriptor | EnumDescriptor] = {}
    for method in service.methods:
        _reachable(method.input_type, seen)
        _reachable(method.output_type, seen)
    for name, found in seen.items():
        served_file = pool.FindFileContainingSymbol(name)
        assert served_file.name == found.file.name
    assert {"glintwick.v1.Event", "glintwick.v1.Phase", "glintwick.v1.EventType"} <= set(seen)
    api_files = [f.name for f in api.files.file if f.name.startswith(API_FOLDERS)]
    assert "glintwick/v1/errors.proto" in api_files
    for name in api_files:
        assert _shape(pool.FindFileByName(name)) == _shape(api.file(name)), name
    # and nothing but the API: the store's private messages are not described
    with pytest.raises(KeyError):
        pool.FindMessageTypeByName("glintwick.storage.v1.StoredGame")


def test_the_outsider_is_compiled_from_proto_alone(api: OutsiderApi) -> None:
    """The client's pool holds proto/'s files and protoc's well-known types only."""
    names = {file.name for file in api.files.file}
    ours = set(proto_files(TREE / "proto"))
    assert ours <= names
    assert all(name.startswith("google/protobuf/") for name in names - ours)
