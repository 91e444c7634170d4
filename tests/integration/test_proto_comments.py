"""Every element of the public API's proto files has a comment: the comments are the
integrator's documentation (they become the descriptions of /openapi.json)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

from google.protobuf import descriptor_pb2

from services.openapi import comments_of

ROOT = Path(__file__).parents[2]


def _elements(file: descriptor_pb2.FileDescriptorProto) -> Iterator[str]:
    """The full name of every element a comment should document, as comments_of names
    them; elements protoc makes up (a map's entry type, a proto3 `optional`'s oneof)
    have no source to comment and are left out."""
    prefix = f"{file.package}."

    def enum(e: descriptor_pb2.EnumDescriptorProto, scope: str) -> Iterator[str]:
        yield scope + e.name
        for value in e.value:
            yield f"{scope}{e.name}.{value.name}"

    def message(m: descriptor_pb2.DescriptorProto, scope: str) -> Iterator[str]:
        if m.options.map_entry:
            return
        name = scope + m.name
        yield name
        for field in m.field:
            yield f"{name}.{field.name}"
        synthetic = {f.oneof_index for f in m.field if f.proto3_optional}
        for i, oneof in enumerate(m.oneof_decl):
            if i not in synthetic:
                yield f"{name}.{oneof.name}"
        for nested in m.nested_type:
            yield from message(nested, f"{name}.")
        for nested_enum in m.enum_type:
            yield from enum(nested_enum, f"{name}.")

    for m in file.message_type:
        yield from message(m, prefix)
    for e in file.enum_type:
        yield from enum(e, prefix)
    for s in file.service:
        yield prefix + s.name
        for method in s.method:
            yield f"{prefix}{s.name}.{method.name}"


def test_every_element_of_the_public_protos_has_a_comment(tmp_path: Path) -> None:
    protos = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "proto/glintwick/v1").glob("*.proto"))
    assert protos, "no proto files found"
    out = tmp_path / "descriptors.binpb"
    subprocess.run(
        [sys.executable, "-m", "grpc_tools.protoc", "-Iproto", "--include_source_info",
         f"--descriptor_set_out={out}", *protos],
        cwd=ROOT,
        check=True,
    )  # fmt: skip
    data = out.read_bytes()
    files = descriptor_pb2.FileDescriptorSet.FromString(data).file
    elements = [name for file in files for name in _elements(file)]
    # the walk must see the whole API (guards against walking nothing)
    assert len(elements) > 500
    assert "glintwick.v1.GameService.SubmitAction" in elements
    assert "glintwick.v1.ErrorReason.ERROR_REASON_NOT_YOUR_TURN" in elements
    commented = comments_of(data)
    missing = [name for name in elements if name not in commented]
    assert not missing, f"{len(missing)} elements have no comment: {missing}"
