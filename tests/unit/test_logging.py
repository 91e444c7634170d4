"""Server logs: one JSON line per event, written whole."""

from __future__ import annotations

import io
import json
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import structlog

from services.server import configure_logging


class RecordingStream(io.StringIO):
    """A stderr that remembers each write() call."""

    def __init__(self) -> None:
        super().__init__()
        self.writes: list[str] = []

    def write(self, text: str) -> int:
        self.writes.append(text)
        return super().write(text)

    def isatty(self) -> bool:
        return False


def test_each_log_line_is_one_write(monkeypatch: pytest.MonkeyPatch) -> None:
    """The processes of ``--workers N`` share stderr: a line written in two parts
    (print() writes the text, then the newline) can be spliced with another
    process's line, breaking both JSON lines for a log collector."""
    stream = RecordingStream()
    monkeypatch.setattr(sys, "stderr", stream)
    saved = structlog.get_config()
    try:
        configure_logging("auto")  # not a terminal: JSON lines
        log = structlog.get_logger("glintwick.test")
        log.info("first_event", game_id="g1", seat=0, request_id="r1")
        log.warning("second_event", game_id="g2")
    finally:
        structlog.configure(**saved)
    assert len(stream.writes) == 2, stream.writes
    for text, event in zip(stream.writes, ("first_event", "second_event"), strict=True):
        assert text.endswith("\n") and text.count("\n") == 1
        record = json.loads(text)
        assert record["event"] == event
    assert json.loads(stream.writes[0])["game_id"] == "g1"


class RecordingBuffer(io.BytesIO):
    """stderr's binary buffer, remembering each write() call."""

    def __init__(self) -> None:
        super().__init__()
        self.writes: list[bytes] = []

    def write(self, data: bytes) -> int:  # type: ignore[override]
        self.writes.append(bytes(data))
        return super().write(data)


class BinaryStderr(RecordingStream):
    """A stderr as a process's: text over a binary buffer, which the JSON lines take."""

    def __init__(self) -> None:
        super().__init__()
        self.recorded = RecordingBuffer()

    @property
    def buffer(self) -> RecordingBuffer:
        return self.recorded


def test_json_lines_go_whole_to_the_binary_buffer(monkeypatch: pytest.MonkeyPatch) -> None:
    """In production each line is orjson's bytes written once to stderr's buffer,
    with its timestamp (ISO 8601, UTC, microseconds) and level."""
    stream = BinaryStderr()
    monkeypatch.setattr(sys, "stderr", stream)
    saved = structlog.get_config()
    try:
        configure_logging("auto")
        log = structlog.get_logger("glintwick.test")
        log.info("first_event", game_id="g1", seat=0, request_id="r1")
        log.bind().warning("second_event", game_id="g2", scores={0: 5})
    finally:
        structlog.configure(**saved)
    assert stream.writes == []
    assert len(stream.recorded.writes) == 2, stream.recorded.writes
    first, second = (json.loads(data) for data in stream.recorded.writes)
    assert all(data.endswith(b"}\n") for data in stream.recorded.writes)
    assert (first["event"], first["game_id"], first["seat"], first["request_id"]) == (
        "first_event", "g1", 0, "r1"
    )  # fmt: skip
    assert (first["level"], second["level"], second["scores"]) == ("info", "warning", {"0": 5})
    stamp = datetime.strptime(first["timestamp"], "%Y-%m-%dT%H:%M:%S.%fZ")
    assert abs(stamp.replace(tzinfo=UTC) - datetime.now(UTC)) < timedelta(minutes=1)


def test_any_logged_value_renders(monkeypatch: pytest.MonkeyPatch) -> None:
    """A log call never fails on its values: dicts keyed by seat numbers and objects
    JSON does not know are written too (a failing log call would fail the RPC)."""
    stream = RecordingStream()
    monkeypatch.setattr(sys, "stderr", stream)
    saved = structlog.get_config()
    try:
        configure_logging("json")
        structlog.get_logger("glintwick.test").info(
            "odd_values", scores={0: 5, 1: -3}, where=Path("/tmp")
        )
    finally:
        structlog.configure(**saved)
    (text,) = stream.writes
    record = json.loads(text)
    assert record["scores"] == {"0": 5, "1": -3}
    assert "/tmp" in record["where"]  # as its repr, as the standard renderer did
