"""API.md's event table, the payload messages' comments in game.proto and the secret
parts of the engine's events agree: every type, every field, and which fields are secret
(the secret keys as tests/support/wire.py lists them, which tests/unit/test_convert.py
checks against the engine's events)."""

from __future__ import annotations

import re
from pathlib import Path

from engine.events import EventType
from glintwick import convert
from tests.support.wire import SECRET_FIELDS

ROOT = Path(__file__).resolve().parents[2]
PROTO = (ROOT / "proto" / "glintwick" / "v1" / "game.proto").read_text()
API = (ROOT / "docs" / "API.md").read_text()


def _doc_rows() -> dict[str, str]:
    """The Events section's table: type -> its fields cell."""
    section = API[API.index("\n## Events\n") :]
    section = section[: section.index("\n## ", 1)]
    rows = re.findall(r"^\| `([a-z_]+)` \| [^|]+ \| (.+) \|$", section, re.MULTILINE)
    return dict(rows)


def _commented_fields(message: str) -> dict[str, str]:
    """Each field of ``message`` in game.proto and its comment (the lines above it
    and the end of its line)."""
    body = re.search(rf"\nmessage {message} {{\n(.*?)\n}}", PROTO, re.DOTALL)
    assert body, message
    out: dict[str, str] = {}
    above: list[str] = []
    for line in body.group(1).splitlines():
        line = line.strip()
        if line.startswith("//"):
            above.append(line)
            continue
        match = re.match(r"(?:repeated |optional )?\w+ (\w+) = \d+;(.*)", line)
        if match:
            out[match.group(1)] = " ".join([*above, match.group(2)]).strip()
        above = []
    return out


def test_every_event_type_is_in_the_table_with_every_field() -> None:
    rows = _doc_rows()
    assert set(rows) == {str(t) for t in EventType} == set(convert.EVENT_CASES)
    for kind, case in convert.EVENT_CASES.items():
        assert case.message_type is not None
        for field in case.message_type.fields:
            assert f"`{field.name}`" in rows[kind], (kind, field.name)


def test_every_payload_field_is_commented_and_the_secret_ones_say_so() -> None:
    rows = _doc_rows()
    for kind, case in convert.EVENT_CASES.items():
        assert case.message_type is not None
        commented = _commented_fields(case.message_type.name)
        assert set(commented) == {f.name for f in case.message_type.fields}, kind
        assert all(commented.values()), f"{kind}: a field without a comment"
        secret_in_proto = {n for n, c in commented.items() if "secret" in c.lower()}
        secret_in_engine = SECRET_FIELDS.get(kind, frozenset())
        assert secret_in_proto == secret_in_engine, kind
        assert ("**secret**" in rows[kind]) is bool(secret_in_engine), kind
