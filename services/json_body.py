"""What the HTTP face checks of a JSON body beyond protobuf's JSON mapping, in the API's
own words: a field the message does not have is named by its path in the body
(``action.draw.sorce``), not in protobuf's wording (which names the message types and
lists every field), and a body field that the path carries too (``gameId`` of
``POST /v1/games/{game_id}:submit``) must agree with the path, or the request is
refused (``PATH_MISMATCH``) rather than one of them silently ignored.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeGuard

from google.protobuf import descriptor as pb_descriptor
from google.protobuf import message as pb_message

from services.errors import ServiceError, invalid

#: messages whose JSON form is not their fields (Struct, Timestamp, wrappers, …):
#: protobuf's parser judges them
_WELL_KNOWN = "google.protobuf."


def unknown_field(data: Mapping[str, Any], descriptor: pb_descriptor.Descriptor) -> str | None:
    """The path in the body of its first field that ``descriptor`` (or the message a
    field holds) does not have, as the client spelled it; None: every field is known."""
    return _unknown(data, descriptor, "")


def _unknown(data: Mapping[str, Any], descriptor: pb_descriptor.Descriptor, at: str) -> str | None:
    for key, value in data.items():
        path = f"{at}.{key}" if at else str(key)
        field = descriptor.fields_by_name.get(key) or _by_json_name(descriptor, key)
        if field is None:
            return path
        inner = field.message_type
        if not _walked(inner):
            continue
        if inner.GetOptions().map_entry:
            held = inner.fields_by_name["value"].message_type
            if (
                not isinstance(value, dict)
                or held is None
                or held.full_name.startswith(_WELL_KNOWN)
            ):
                continue
            for name, item in value.items():
                found = _nested(item, held, f"{path}[{name}]")
                if found:
                    return found
        elif field.is_repeated and isinstance(value, list):
            for index, item in enumerate(value):
                found = _nested(item, inner, f"{path}[{index}]")
                if found:
                    return found
        else:
            found = _nested(value, inner, path)
            if found:
                return found
    return None


def _walked(descriptor: pb_descriptor.Descriptor | None) -> TypeGuard[pb_descriptor.Descriptor]:
    """Whether a field's message is checked field by field (not a well-known type)."""
    return descriptor is not None and not descriptor.full_name.startswith(_WELL_KNOWN)


def _nested(value: Any, descriptor: pb_descriptor.Descriptor, path: str) -> str | None:
    # (a value of the wrong type is protobuf's parser's to refuse)
    return _unknown(value, descriptor, path) if isinstance(value, dict) else None


def _by_json_name(
    descriptor: pb_descriptor.Descriptor, key: str
) -> pb_descriptor.FieldDescriptor | None:
    return next((f for f in descriptor.fields if f.json_name == key), None)


def unknown_field_error(path: str) -> ServiceError:
    return invalid(f"unknown field {path[:80]!r} in the body")


def check_path_fields(message: pb_message.Message, path_values: Mapping[str, str]) -> None:
    """Refuse (``PATH_MISMATCH``) a body whose field names another value than the path
    does for it (the same value, or none, is fine: the path's is used)."""
    for name, value in path_values.items():
        given = getattr(message, name, None)
        if given and given != value:
            field = message.DESCRIPTOR.fields_by_name[name]
            raise invalid(
                f"the body's {field.json_name} {str(given)[:64]!r} is not the path's "
                f"{value[:64]!r}: leave it out or give the same",
                "PATH_MISMATCH",
            )
