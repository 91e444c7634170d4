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
