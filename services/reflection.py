"""Server reflection: every file of the API, and nothing but the API.

A client with no proto files (grpcurl, Postman, a reflection client in any language)
learns the contract from reflection alone, so it must serve every file a caller needs:
the service, the reasons its errors carry (``glintwick.v1.ErrorReason``, in a file the
service's file does not import: ErrorInfo's reason is a string) and the google.rpc
messages of the error details in the trailers (``Status``, ``ErrorInfo``,
``RetryInfo``).  Reflection answers from a pool of its own, built from those files and
what they import, rather than from the process's default pool, which also holds the
store's private messages (``glintwick.storage.v1``) and whatever else was imported.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import cast

import grpc
from google.protobuf import descriptor_pb2, descriptor_pool
from google.protobuf.descriptor import FileDescriptor
from google.rpc import error_details_pb2, status_pb2
from grpc_health.v1 import health_pb2
from grpc_reflection.v1alpha import reflection, reflection_pb2

from glintwick.v1 import errors_pb2, game_pb2

#: the files reflection serves (with their imports): the API, its errors' reasons and
#: details, and the two services beside it (health, reflection itself)
REFLECTED_FILES: tuple[FileDescriptor, ...] = (
    game_pb2.DESCRIPTOR,
    errors_pb2.DESCRIPTOR,
    status_pb2.DESCRIPTOR,
    error_details_pb2.DESCRIPTOR,
    # (their stubs type the same runtime class as upb's own FileDescriptor)
    cast(FileDescriptor, health_pb2.DESCRIPTOR),
    cast(FileDescriptor, reflection_pb2.DESCRIPTOR),
)


def reflection_pool(
    files: Iterable[FileDescriptor] = REFLECTED_FILES,
) -> descriptor_pool.DescriptorPool:
    """A descriptor pool of ``files`` and every file they import, transitively."""
    pool = descriptor_pool.DescriptorPool()
    added: set[str] = set()

    def add(file: FileDescriptor) -> None:
        if file.name in added:
            return
        for dependency in file.dependencies:  # (a pool takes a file after its imports)
            add(dependency)
        pool.Add(descriptor_pb2.FileDescriptorProto.FromString(file.serialized_pb))
        added.add(file.name)

    for file in files:
        add(file)
    return pool


def enable(server: grpc.aio.Server, service_names: Iterable[str]) -> None:
    """Serve reflection on ``server``: ``service_names`` listed, the API's files described."""
    reflection.enable_server_reflection(
        (*service_names, reflection.SERVICE_NAME), server, pool=reflection_pool()
    )
