"""The committed generated code is what protoc makes of proto/ today."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).parents[2]
BIN = Path(sys.executable).parent


def test_generated_code_is_current(tmp_path: Path) -> None:
    protos = sorted(
        str(p.relative_to(ROOT)) for p in (ROOT / "proto" / "glintwick").rglob("*.proto")
    )
    subprocess.run(
        [sys.executable, "-m", "grpc_tools.protoc", "-Iproto", f"--python_out={tmp_path}",
         f"--plugin=protoc-gen-mypy={BIN / 'protoc-gen-mypy'}",
         f"--plugin=protoc-gen-mypy_grpc={BIN / 'protoc-gen-mypy_grpc'}",
         f"--mypy_out={tmp_path}", f"--grpc_python_out={tmp_path}", f"--mypy_grpc_out={tmp_path}",
         *protos],
        cwd=ROOT,
        check=True,
    )  # fmt: skip
    generated = sorted(p for p in tmp_path.rglob("*") if p.is_file())
    assert generated, "protoc produced nothing"
    for fresh in generated:
        committed = ROOT / fresh.relative_to(tmp_path)
        assert committed.exists(), f"{committed} is missing: run `make proto`"
        assert committed.read_text() == fresh.read_text(), f"{committed} is stale: run `make proto`"


def test_the_descriptor_set_with_comments_is_current(tmp_path: Path) -> None:
    """glintwick/v1/descriptors.binpb (the OpenAPI document's descriptions) is what
    `make proto` makes of proto/glintwick/v1 today."""
    protos = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "proto/glintwick/v1").glob("*.proto"))
    fresh = tmp_path / "descriptors.binpb"
    subprocess.run(
        [sys.executable, "-m", "grpc_tools.protoc", "-Iproto", "--include_source_info",
         f"--descriptor_set_out={fresh}", *protos],
        cwd=ROOT,
        check=True,
    )  # fmt: skip
    committed = ROOT / "glintwick/v1/descriptors.binpb"
    assert committed.exists(), f"{committed} is missing: run `make proto`"
    assert committed.read_bytes() == fresh.read_bytes(), f"{committed} is stale: run `make proto`"
