"""Every reason the service can give is listed in proto/glintwick/v1/errors.proto
(ErrorReason), and every reason API.md names is one of them."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import grpc

from engine.errors import Reason
from glintwick.v1 import errors_pb2

ROOT = Path(__file__).resolve().parents[2]
PREFIX = "ERROR_REASON_"
LISTED = {
    value.name.removeprefix(PREFIX)
    for value in errors_pb2.DESCRIPTOR.enum_types_by_name["ErrorReason"].values
    if value.number != 0
}
SHAPE = re.compile(r"[A-Z][A-Z0-9_]{2,}")
# upper-case strings in services/ that are no reason: environment variables, the
# health status, the status-code labels of the request metrics, an HTTP method, a
# flag's metavar and a Redis command
NOT_REASONS = {"SERVING", "UNAVAILABLE", "RESOURCE_EXHAUSTED", "OPTIONS", "ORIGIN", "PING"}


def _reason_shaped_strings() -> set[str]:
    found: set[str] = set()
    for path in (ROOT / "services").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if (
                isinstance(node, ast.Constant)
                and isinstance(node.value, str)
                and SHAPE.fullmatch(node.value)
                and not node.value.startswith("GLINTWICK_")
            ):
                found.add(node.value)
    return found - NOT_REASONS


def test_every_engine_reason_is_listed() -> None:
    assert {r.value for r in Reason} - LISTED == set()


def test_every_reason_the_service_gives_is_listed() -> None:
    shaped = _reason_shaped_strings()
    assert len(shaped) > 20, "the scan finds the service's reasons"
    assert shaped - LISTED == set()


def test_every_reason_api_md_names_exists() -> None:
    text = (ROOT / "docs" / "API.md").read_text()
    assert "errors.proto" in text
    errors = text[text.index("## Errors") : text.index("## Limits")]
    named = {n for n in re.findall(r"`([A-Z][A-Z0-9_]{2,})`", errors) if not n.startswith(PREFIX)}
    assert len(named) > 20
    statuses = {code.name for code in grpc.StatusCode}  # gRPC's codes, named beside reasons
    assert named - LISTED - statuses == set()


def test_reason_numbers_are_stable() -> None:
    """Values keep their numbers (buf breaking checks the released ones as well)."""
    assert errors_pb2.ErrorReason.Value("ERROR_REASON_NOT_YOUR_TURN") == 21
    assert errors_pb2.ErrorReason.Value("ERROR_REASON_STORE_UNAVAILABLE") == 110
