"""The OpenAPI 3.0 document of the HTTP face (``/openapi.json``), from the proto alone.

Everything is derived from the service descriptor and its ``google.api.http``
annotations, so a message or RPC added to the proto is documented with no edit here:

* descriptions are the proto's comments.  The generated ``_pb2`` modules carry no
  source info, so ``make proto`` also writes ``glintwick/v1/descriptors.binpb`` (a
  ``FileDescriptorSet`` with source info, committed; a test checks it is current);
* a ``oneof`` is an OpenAPI ``oneOf`` of "member i and none of the others", plus
  "none of them": at most one member, as protobuf's JSON mapping has it.  Each
  alternative names every member, its own required and the others as a schema nothing
  matches, which openapi-typescript writes as ``never``: a precise union in TypeScript
  (``{draw: Draw; discard?: never; …} | …``).  A message's enum field whose values name
  the oneof's members (``Event.type``: ``EVENT_TYPE_DREW`` for ``drew``, as
  ``glintwick.convert.engine_names`` reads them) is its discriminator: each alternative
  also fixes it;
* integers carry their range and their proto type as ``format`` (``int32``, ``uint32``);
  64-bit ones are strings of digits (protobuf's JSON mapping writes them so); enums are
  their value names; a string that holds a closed set of another kind (an error's
  reason: ``errors.proto``'s value names less their prefix; a gRPC status name; a
  run's suit) lists it as an ``enum`` too;
* a response schema lists as ``required`` the fields the server always writes (it
  prints every field without presence: scalars, enums, repeated and map fields), so a
  message used both ways has an input schema (nothing required) and an output one.
"""

from __future__ import annotations

import functools
import re
from importlib import resources
from typing import Any

import grpc
from google.api import annotations_pb2
from google.protobuf import descriptor as pb_descriptor
from google.protobuf import descriptor_pb2

from engine.cards import SUITS
from glintwick.convert import engine_names, enum_prefix
from glintwick.v1 import errors_pb2
from glintwick.v1 import game_pb2 as pb
from services.usecases.context import MAX_GAME_ID
from services.usecases.limits import STRING_LENGTHS

SERVICE = pb.DESCRIPTOR.services_by_name["GameService"]
#: the descriptor set with source info that ``make proto`` writes beside the _pb2 modules
DESCRIPTOR_SET = "descriptors.binpb"

_VARIABLE = re.compile(r"\{(\w+)\}")
_REF = "#/components/schemas/"
_FD = pb_descriptor.FieldDescriptor

INT32 = (-(2**31), 2**31 - 1)
UINT32 = (0, 2**32 - 1)


def _integer(fmt: str, bounds: tuple[int, int]) -> dict[str, Any]:
    return {"type": "integer", "format": fmt, "minimum": bounds[0], "maximum": bounds[1]}


def _digits(fmt: str, pattern: str, what: str) -> dict[str, Any]:
    # protobuf's JSON mapping writes 64-bit integers as strings of digits (it also reads
    # JSON numbers): the document promises what is written
    return {
        "type": "string",
        "format": fmt,
        "pattern": pattern,
        "description": f"{what} 64-bit integer as a string of digits (protobuf's JSON mapping)",
    }


_SCALARS: dict[int, dict[str, Any]] = {
    _FD.TYPE_BOOL: {"type": "boolean"},
    _FD.TYPE_STRING: {"type": "string"},
    _FD.TYPE_BYTES: {"type": "string", "format": "byte", "description": "base64"},
    _FD.TYPE_DOUBLE: {"type": "number", "format": "double"},
    _FD.TYPE_FLOAT: {"type": "number", "format": "float"},
    _FD.TYPE_INT32: _integer("int32", INT32),
    _FD.TYPE_SINT32: _integer("int32", INT32),
    _FD.TYPE_SFIXED32: _integer("int32", INT32),
    # (OpenAPI registers int32 and int64 only; a format is open-ended, so an unsigned
    # one says so rather than claim a 64-bit range its bounds deny)
    _FD.TYPE_UINT32: _integer("uint32", UINT32),
    _FD.TYPE_FIXED32: _integer("uint32", UINT32),
    _FD.TYPE_INT64: _digits("int64", r"^-?[0-9]{1,19}$", "a signed"),
    _FD.TYPE_SINT64: _digits("int64", r"^-?[0-9]{1,19}$", "a signed"),
    _FD.TYPE_SFIXED64: _digits("int64", r"^-?[0-9]{1,19}$", "a signed"),
    _FD.TYPE_UINT64: _digits("uint64", r"^[0-9]{1,20}$", "an unsigned"),
    _FD.TYPE_FIXED64: _digits("uint64", r"^[0-9]{1,20}$", "an unsigned"),
}

#: the well-known types' JSON forms (protobuf's JSON mapping), not their fields
_WELL_KNOWN: dict[str, dict[str, Any]] = {
    "google.protobuf.Struct": {"type": "object", "additionalProperties": True},
    "google.protobuf.Value": {},
    "google.protobuf.ListValue": {"type": "array", "items": {}},
    "google.protobuf.Timestamp": {"type": "string", "format": "date-time"},
    "google.protobuf.Duration": {"type": "string", "pattern": r"^-?[0-9]+(\.[0-9]+)?s$"},
    "google.protobuf.Empty": {"type": "object", "additionalProperties": False},
}

#: the reasons an error carries (ErrorInfo.reason, the HTTP body's and PlayError's
#: `reason`): errors.proto's ErrorReason value names less their prefix
REASONS: tuple[str, ...] = tuple(
    value.name.removeprefix(enum_prefix(errors_pb2.ErrorReason.DESCRIPTOR))
    for value in errors_pb2.ErrorReason.DESCRIPTOR.values
    if value.number != 0
)
#: the gRPC status names an error's `code` may be (never OK)
STATUS_CODES: tuple[str, ...] = tuple(
    c.name for c in grpc.StatusCode if c is not grpc.StatusCode.OK
)


def _reason_schema(description: str) -> dict[str, Any]:
    return {"type": "string", "enum": list(REASONS), "description": description}


def _status_schema(description: str) -> dict[str, Any]:
    return {"type": "string", "enum": list(STATUS_CODES), "description": description}


#: string fields that hold a closed set written as it is, not an enum's value names
#: (the same strings as the error body's; a meld's suit, a letter of its cards' codes)
_STRING_SETS: dict[str, list[str]] = {
    pb.PlayError.DESCRIPTOR.fields_by_name["code"].full_name: list(STATUS_CODES),
    pb.PlayError.DESCRIPTOR.fields_by_name["reason"].full_name: list(REASONS),
    # (empty when the action is legal)
    pb.ValidateActionResponse.DESCRIPTOR.fields_by_name["reason"].full_name: ["", *REASONS],
    pb.Meld.DESCRIPTOR.fields_by_name["suit"].full_name: ["", *SUITS],
}

ERROR_SCHEMA: dict[str, Any] = {
    "type": "object",
    "description": "Every HTTP error (docs/API.md, Errors): a gRPC status and its reason.",
    "properties": {
        "code": _status_schema("the gRPC status name (INVALID_ARGUMENT, ...)"),
        "reason": _reason_schema("machine-readable: an ErrorReason (errors.proto) less its prefix"),
        "message": {"type": "string", "description": "for people; input only as a short excerpt"},
    },
    "required": ["code", "reason", "message"],
    "additionalProperties": False,
}

#: a property that must be absent (another member of its oneof is set): `not {}` says
#: so; the two types nothing is both of say it to openapi-typescript, which ignores
#: `not` but writes their intersection as `never`
ABSENT: dict[str, Any] = {"not": {}, "allOf": [{"type": "string"}, {"type": "number"}]}


# ------------------------------------------------------------------ comments


def _clean(location: descriptor_pb2.SourceCodeInfo.Location) -> str:
    text = "\n".join(
        part for part in (location.leading_comments, location.trailing_comments) if part.strip()
    )
    lines = [line.strip() for line in text.strip().splitlines()]
    # paragraphs stay apart; the lines of one paragraph join
    return re.sub(r"(?<!\n)\n(?!\n)", " ", "\n".join(lines)).strip()


def _names(file: descriptor_pb2.FileDescriptorProto) -> dict[tuple[int, ...], str]:
    """The source path of every element of ``file`` → its full name (fields and enum
    values as ``Message.field``, ``Enum.VALUE``; methods as ``Service.Method``)."""
    named: dict[tuple[int, ...], str] = {}
    prefix = f"{file.package}." if file.package else ""

    def enum(e: descriptor_pb2.EnumDescriptorProto, path: tuple[int, ...], scope: str) -> None:
        name = scope + e.name
        named[path] = name
        for i, value in enumerate(e.value):
            named[(*path, 2, i)] = f"{name}.{value.name}"

    def message(m: descriptor_pb2.DescriptorProto, path: tuple[int, ...], scope: str) -> None:
        name = scope + m.name
        named[path] = name
        for i, field in enumerate(m.field):
            named[(*path, 2, i)] = f"{name}.{field.name}"
        for i, nested in enumerate(m.nested_type):
            message(nested, (*path, 3, i), f"{name}.")
        for i, nested_enum in enumerate(m.enum_type):
            enum(nested_enum, (*path, 4, i), f"{name}.")
        for i, oneof in enumerate(m.oneof_decl):
            named[(*path, 8, i)] = f"{name}.{oneof.name}"

    for i, m in enumerate(file.message_type):
        message(m, (4, i), prefix)
    for i, e in enumerate(file.enum_type):
        enum(e, (5, i), prefix)
    for i, s in enumerate(file.service):
        named[(6, i)] = prefix + s.name
        for j, method in enumerate(s.method):
            named[(6, i, 2, j)] = f"{prefix}{s.name}.{method.name}"
    return named


def comments_of(descriptor_set: bytes) -> dict[str, str]:
    """Every commented element's full name → its comment, from a FileDescriptorSet."""
    files = descriptor_pb2.FileDescriptorSet.FromString(descriptor_set)
    found: dict[str, str] = {}
    for file in files.file:
        named = _names(file)
        for location in file.source_code_info.location:
            name = named.get(tuple(location.path))
            text = _clean(location)
            if name is not None and text:
                found[name] = text
    return found


@functools.cache
def comments() -> dict[str, str]:
    data = resources.files("glintwick.v1").joinpath(DESCRIPTOR_SET).read_bytes()
    return comments_of(data)


def _described(schema: dict[str, Any], name: str) -> dict[str, Any]:
    text = comments().get(name)
    if text:
        known = schema.get("description")
        schema["description"] = f"{text}\n\n({known})" if known else text
    return schema


# ------------------------------------------------------------------ schemas


class _Schemas:
    """The component schemas, each message once per direction (see the module doc)."""

    def __init__(self, outputs: set[str]) -> None:
        self.schemas: dict[str, Any] = {}
        self.outputs = outputs  # the messages reachable from a response

    def name(self, descriptor: pb_descriptor.Descriptor, output: bool) -> str:
        both = descriptor.full_name in self.outputs
        return descriptor.full_name if output or not both else f"{descriptor.full_name}.Input"

    def ref(self, descriptor: pb_descriptor.Descriptor, output: bool) -> dict[str, Any]:
        if descriptor.full_name in _WELL_KNOWN:
            return dict(_WELL_KNOWN[descriptor.full_name])
        name = self.name(descriptor, output)
        if name not in self.schemas:
            self.schemas[name] = {}  # a placeholder first: messages may refer to themselves
            self.schemas[name] = self._message(descriptor, output)
        return {"$ref": _REF + name}

    def _message(self, descriptor: pb_descriptor.Descriptor, output: bool) -> dict[str, Any]:
        properties = {f.json_name: self._property(f, output) for f in descriptor.fields}
        schema: dict[str, Any] = {
            "type": "object",
            "properties": properties,
            # protobuf's JSON parser refuses unknown fields; the server writes none
            "additionalProperties": False,
        }
        if output:
            # printed always (always_print_fields_with_no_presence): fields without presence
            required = [f.json_name for f in descriptor.fields if not f.has_presence]
            if required:
                schema["required"] = required
        alternatives = [self._oneof(o, output) for o in descriptor.oneofs if len(o.fields) > 1]
        if len(alternatives) == 1:
            schema["oneOf"] = alternatives[0]
        elif alternatives:
            schema["allOf"] = [{"oneOf": a} for a in alternatives]
        notes = [
            f"`{o.name}`: at most one of {', '.join(f.json_name for f in o.fields)}"
            + (f" ({comments()[o.full_name]})" if o.full_name in comments() else "")
            for o in descriptor.oneofs
            if not _synthetic(o)
        ]
        described = _described(schema, descriptor.full_name)
        if notes:
            text = described.get("description", "")
            described["description"] = "\n\n".join([text, *notes]).strip()
        return described

    def _property(self, field: pb_descriptor.FieldDescriptor, output: bool) -> dict[str, Any]:
        schema = self.field(field, output)
        if "$ref" in schema and field.full_name in comments():
            # (OpenAPI 3.0 ignores the siblings of a $ref: the description wraps it)
            schema = {"allOf": [schema]}
        return _described(schema, field.full_name)

    def _oneof(self, oneof: pb_descriptor.OneofDescriptor, output: bool) -> list[dict[str, Any]]:
        """At most one member: "member i and none of the others" for each i, and "none"
        (with the discriminator's value of each, where the message has one)."""
        tag = _discriminator(oneof)
        alternatives: list[dict[str, Any]] = []
        for member in [*oneof.fields, None]:
            properties = {
                f.json_name: self.field(f, output) if f is member else ABSENT for f in oneof.fields
            }
            alternative: dict[str, Any] = {"properties": properties}
            if member is not None:
                alternative["required"] = [member.json_name]
            if tag is not None:
                value = _tag_values(tag)[member.name if member is not None else None]
                properties[tag.json_name] = {"type": "string", "enum": [value]}
                if output:  # (written always: an enum has no presence)
                    alternative.setdefault("required", []).append(tag.json_name)
            alternatives.append(alternative)
        return alternatives

    def field(self, field: pb_descriptor.FieldDescriptor, output: bool) -> dict[str, Any]:
        if field.message_type is not None and field.message_type.GetOptions().map_entry:
            value = self.single(field.message_type.fields_by_name["value"], output)
            return {"type": "object", "additionalProperties": value}
        single = self.single(field, output)
        if field.is_repeated:
            return {"type": "array", "items": single}
        return single

    def single(self, field: pb_descriptor.FieldDescriptor, output: bool) -> dict[str, Any]:
        if field.message_type is not None:
            return self.ref(field.message_type, output)
        if field.enum_type is not None:
            enum = field.enum_type
            values = [
                f"`{v.name}`: {comments()[f'{enum.full_name}.{v.name}']}"
                for v in enum.values
                if f"{enum.full_name}.{v.name}" in comments()
            ]
            schema: dict[str, Any] = {"type": "string", "enum": [v.name for v in enum.values]}
            text = "\n".join(filter(None, [comments().get(enum.full_name, ""), *values]))
            if text:
                schema["description"] = text
            return schema
        schema = dict(_SCALARS.get(field.type, {"type": "string"}))
        if field.full_name in _STRING_SETS:
            schema["enum"] = _STRING_SETS[field.full_name]
        if not output and field.full_name in STRING_LENGTHS:
            least, most = STRING_LENGTHS[field.full_name]
            schema["maxLength"] = most
            if least is not None:
                schema["minLength"] = least
        return schema


def _discriminator(oneof: pb_descriptor.OneofDescriptor) -> pb_descriptor.FieldDescriptor | None:
    """The message's enum field whose values name ``oneof``'s members (none: None)."""
    members = {f.name for f in oneof.fields}
    for field in oneof.containing_type.fields:
        enum = field.enum_type
        if (
            enum is not None
            and field.containing_oneof is None
            and set(engine_names(enum)) == members
        ):
            return field
    return None


def _tag_values(tag: pb_descriptor.FieldDescriptor) -> dict[str | None, str]:
    """A discriminator's value name for each oneof member's name (None: no member)."""
    enum = tag.enum_type
    assert enum is not None
    numbers = engine_names(enum)
    names = {v.number: v.name for v in enum.values}
    return {None: names[0], **{member: names[n] for member, n in numbers.items()}}


def _synthetic(oneof: pb_descriptor.OneofDescriptor) -> bool:
    """A proto3 ``optional`` field's own oneof (not a oneof of the API)."""
    return len(oneof.fields) == 1 and oneof.name == f"_{oneof.fields[0].name}"


def http_rules() -> list[tuple[str, str, str, pb_descriptor.MethodDescriptor]]:
    """(verb, path template, body, method) for every annotated RPC, in proto order."""
    found = []
    for method in SERVICE.methods:
        options = method.GetOptions()
        if not options.HasExtension(annotations_pb2.http):
            continue
        rule = options.Extensions[annotations_pb2.http]
        verb = rule.WhichOneof("pattern")
        if verb is None or verb == "custom":
            continue
        found.append((verb.upper(), getattr(rule, verb), rule.body, method))
    return found


def _reachable(descriptor: pb_descriptor.Descriptor, seen: set[str]) -> None:
    if descriptor.full_name in seen:
        return
    seen.add(descriptor.full_name)
    for field in descriptor.fields:
        if field.message_type is not None:
            _reachable(field.message_type, seen)


def _error_responses(ok: dict[str, Any]) -> dict[str, Any]:
    return {
        "200": ok,
        "429": {
            "description": "a rate limit (reason RATE_LIMITED) or a quota (QUOTA_OPEN_GAMES,"
            " QUOTA_GAMES_IN_PLAY, QUOTA_GAME_WATCHERS, QUOTA_GAME_SESSIONS,"
            " QUOTA_CLIENT_STREAMS) refused the call (docs/API.md, Limits and quotas)",
            "headers": {
                "Retry-After": {
                    "description": "whole seconds until the call would be admitted"
                    " (with RATE_LIMITED, QUOTA_GAMES_IN_PLAY)",
                    "schema": {"type": "integer", "minimum": 0},
                }
            },
            "content": {"application/json": {"schema": {"$ref": _REF + "Error"}}},
        },
        "default": {
            "description": "an error (docs/API.md, Errors)",
            "content": {"application/json": {"schema": {"$ref": _REF + "Error"}}},
        },
    }


def _path_parameter(name: str, method: pb_descriptor.MethodDescriptor) -> dict[str, Any]:
    field = method.input_type.fields_by_name.get(name)
    schema: dict[str, Any] = {"type": "string"}
    if name == "game_id":
        schema.update(minLength=1, maxLength=MAX_GAME_ID)
    parameter: dict[str, Any] = {"name": name, "in": "path", "required": True, "schema": schema}
    if field is not None:
        _described(parameter, field.full_name)
    return parameter


def _sse_event() -> dict[str, Any]:
    """One SSE event of the watch (its fields as the SSE format names them): a snapshot
    whose ``data`` is a View in JSON and whose ``id`` its version, or an event whose
    ``data`` is an Event in JSON and whose ``id`` its cursor."""

    def kind(name: str, data: str, ident: dict[str, Any]) -> dict[str, Any]:
        return {
            "type": "object",
            "required": ["event", "id", "data"],
            "properties": {
                "event": {"type": "string", "enum": [name]},
                "id": ident,
                "data": {"type": "string", "description": f"{data}, in JSON"},
            },
        }

    version = {"type": "string", "pattern": "^[0-9]{1,20}$", "description": "the version"}
    cursor = {"type": "string", "minLength": 1, "description": "the event's cursor"}
    return {
        "description": "one Server-Sent Event",
        "oneOf": [
            kind("snapshot", f"a View ({_REF}{pb.View.DESCRIPTOR.full_name})", version),
            kind("event", f"an Event ({_REF}{pb.Event.DESCRIPTOR.full_name})", cursor),
        ],
    }


def _watch_operation() -> dict[str, Any]:
    watch = SERVICE.methods_by_name["WatchGame"]
    request = watch.input_type
    snapshot = f"{_REF}{pb.View.DESCRIPTOR.full_name}"
    event = f"{_REF}{pb.Event.DESCRIPTOR.full_name}"
    text = (
        "Server-Sent Events (the WatchGame RPC): a comment line at once, then an "
        f"`event: snapshot` whose `data:` is a View ({snapshot}) and whose `id:` is its "
        f"version, then one `event: event` per Event ({event}), whose `id:` is the event's "
        "cursor. An EventSource resumes by itself: it resends the last id as `Last-Event-ID`."
    )
    return {
        "operationId": "WatchGame",
        "summary": "WatchGame (Server-Sent Events)",
        "description": "\n\n".join(filter(None, [comments().get(watch.full_name, ""), text])),
        "parameters": [
            _path_parameter("game_id", watch),
            _described(
                {
                    "name": "fromVersion",
                    "in": "query",
                    "required": False,
                    "schema": dict(_SCALARS[_FD.TYPE_UINT64]),
                },
                request.fields_by_name["from_version"].full_name,
            ),
            _described(
                {
                    "name": "after",
                    "in": "query",
                    "required": False,
                    "schema": {"type": "string"},
                },
                request.fields_by_name["after_cursor"].full_name,
            ),
            {
                "name": "Last-Event-ID",
                "in": "header",
                "required": False,
                "description": "what an EventSource resends (a cursor, or a snapshot's"
                " version): wins over the query",
                "schema": {"type": "string"},
            },
        ],
        "responses": _error_responses(
            {
                "description": "the event stream, open until the client or the server ends it",
                "content": {"text/event-stream": {"schema": _sse_event()}},
            }
        ),
    }


def _play_sse_event() -> dict[str, Any]:
    """One SSE event of a play session: the message's kind as ``event``, its
    PlayResponse in JSON as ``data``; an event's ``id`` is its cursor, a snapshot's and
    a prompt's their version (a closed message carries none)."""
    response = f"a PlayResponse ({_REF}{pb.PlayResponse.DESCRIPTOR.full_name}), in JSON"
    kinds = []
    for name, ident in (
        ("snapshot", {"type": "string", "pattern": "^[0-9]{1,20}$"}),
        ("event", {"type": "string", "minLength": 1}),
        ("prompt", {"type": "string", "pattern": "^[0-9]{1,20}$"}),
        ("closed", None),
    ):
        properties: dict[str, Any] = {
            "event": {"type": "string", "enum": [name]},
            "data": {"type": "string", "description": response},
        }
        required = ["event", "data"]
        if ident is not None:
            properties["id"] = ident
            required.append("id")
        kinds.append({"type": "object", "required": required, "properties": properties})
    return {"description": "one Server-Sent Event of the session", "oneOf": kinds}


def _play_operations(schemas: _Schemas) -> dict[str, Any]:
    """The Play stream's HTTP face (no annotated RPC: added here, as the watch is)."""
    play = SERVICE.methods_by_name["Play"]
    subscribe = pb.PlaySubscribe.DESCRIPTOR
    text = (
        "One seat's play session as Server-Sent Events (the Play RPC): `event:` is the "
        "PlayResponse's kind (snapshot, event, prompt, closed) and `data:` the message in "
        "JSON; an event's `id:` is its cursor, a snapshot's and a prompt's their version. "
        "Starts and resumes as the SSE watch does (`fromVersion`, `after`, `Last-Event-ID`); "
        "`promptsOnly=true` sends no events (snapshot, prompts, closed)."
    )

    def query(name: str, field: str, schema: dict[str, Any]) -> dict[str, Any]:
        return _described(
            {"name": name, "in": "query", "required": False, "schema": schema},
            subscribe.fields_by_name[field].full_name,
        )

    game = _path_parameter("game_id", SERVICE.methods_by_name["WatchGame"])
    return {
        "get": {
            "operationId": "PlayEvents",
            "summary": "Play (Server-Sent Events)",
            "description": "\n\n".join(filter(None, [comments().get(play.full_name, ""), text])),
            "parameters": [
                game,
                query("seat", "seat", {"type": "integer", "minimum": 0, "maximum": 999999999}),
                query("fromVersion", "from_version", {"type": "integer", "minimum": 0}),
                query("after", "after_cursor", {"type": "string"}),
                query("promptsOnly", "prompts_only", {"type": "boolean"}),
                {
                    "name": "Last-Event-ID",
                    "in": "header",
                    "required": False,
                    "description": "what an EventSource resends: wins over the query",
                    "schema": {"type": "string"},
                },
            ],
            "responses": _error_responses(
                {
                    "description": "the session's stream, open until its game ends",
                    "content": {"text/event-stream": {"schema": _play_sse_event()}},
                }
            ),
        },
        "post": {
            "operationId": "PlayAct",
            "summary": "Play: an act (as SubmitAction), answered by its result",
            "description": comments().get(pb.PlayAct.DESCRIPTOR.full_name, ""),
            "parameters": [game],
            "requestBody": {
                "required": True,
                "content": {
                    "application/json": {"schema": schemas.ref(pb.PlayAct.DESCRIPTOR, False)}
                },
            },
            "responses": _error_responses(
                {
                    "description": "applied",
                    "content": {
                        "application/json": {"schema": schemas.ref(pb.PlayResult.DESCRIPTOR, True)}
                    },
                }
            ),
        },
    }


def openapi_document() -> dict[str, Any]:
    rules = http_rules()
    outputs: set[str] = set()
    for *_, method in rules:
        _reachable(method.output_type, outputs)
    _reachable(pb.WatchGameResponse.DESCRIPTOR, outputs)
    _reachable(pb.PlayResponse.DESCRIPTOR, outputs)
    schemas = _Schemas(outputs)
    paths: dict[str, Any] = {}
    for verb, template, body_rule, method in rules:
        path_params = _VARIABLE.findall(template)
        ok = schemas.ref(method.output_type, True)
        operation: dict[str, Any] = {
            "operationId": method.name,
            "summary": method.name,
            "parameters": [_path_parameter(p, method) for p in path_params],
            "responses": _error_responses(
                {
                    "description": "OK",
                    "content": {"application/json": {"schema": ok}},
                }
            ),
        }
        _described(operation, method.full_name)
        if body_rule == "*":
            operation["requestBody"] = {
                "required": False,
                "content": {"application/json": {"schema": schemas.ref(method.input_type, False)}},
            }
        else:
            for field in method.input_type.fields:
                if field.name in path_params or field.message_type is not None:
                    continue
                operation["parameters"].append(
                    _described(
                        {
                            "name": field.json_name,
                            "in": "query",
                            "required": False,
                            "schema": schemas.single(field, False),
                        },
                        field.full_name,
                    )
                )
        paths.setdefault(template, {})[verb.lower()] = operation
    # the stream's items are documented as schemas too (the SSE data: lines)
    schemas.ref(pb.WatchGameResponse.DESCRIPTOR, True)
    schemas.ref(pb.PlayResponse.DESCRIPTOR, True)
    paths["/v1/games/{game_id}:watch"] = {"get": _watch_operation()}
    paths["/v1/games/{game_id}:play"] = _play_operations(schemas)
    schemas.schemas["Error"] = ERROR_SCHEMA
    file_comment = comments().get(SERVICE.full_name, "")
    return {
        "openapi": "3.0.3",
        "info": {
            "title": "Glintwick game service",
            "version": "v1",
            "description": file_comment,
        },
        "components": {
            "schemas": schemas.schemas,
            "securitySchemes": {
                "seatToken": {
                    "type": "http",
                    "scheme": "bearer",
                    "description": "a seat's token (JoinGame) or the operator credential",
                }
            },
        },
        "security": [{}, {"seatToken": []}],
        "paths": paths,
    }
