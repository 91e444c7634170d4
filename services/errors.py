"""Errors a request can meet, mapped once to gRPC statuses and HTTP codes.

Every refusal carries a machine-readable reason (``google.rpc.ErrorInfo`` on
gRPC, ``reason`` in the HTTP body).  Nothing a client can send maps to UNKNOWN or
INTERNAL: a store that cannot be reached is UNAVAILABLE (``STORE_UNAVAILABLE``),
the code clients retry.
"""

from __future__ import annotations

import grpc

from engine.errors import excerpt  # the one bounded quote of client input
from services.store.base import StoreUnavailableError

DOMAIN = "glintwick.dev"

HTTP_STATUS = {
    grpc.StatusCode.INVALID_ARGUMENT: 400,
    grpc.StatusCode.FAILED_PRECONDITION: 409,
    grpc.StatusCode.ABORTED: 409,
    grpc.StatusCode.NOT_FOUND: 404,
    grpc.StatusCode.ALREADY_EXISTS: 409,
    grpc.StatusCode.UNAUTHENTICATED: 401,
    grpc.StatusCode.PERMISSION_DENIED: 403,
    grpc.StatusCode.RESOURCE_EXHAUSTED: 429,
    grpc.StatusCode.UNAVAILABLE: 503,
    grpc.StatusCode.DEADLINE_EXCEEDED: 504,
    grpc.StatusCode.INTERNAL: 500,
}


class ServiceError(Exception):
    def __init__(
        self, code: grpc.StatusCode, reason: str, message: str, retry_after: float | None = None
    ) -> None:
        super().__init__(message)
        self.code = code
        self.reason = reason
        self.message = message
        # seconds a client should wait before retrying (google.rpc.RetryInfo, Retry-After)
        self.retry_after = retry_after

    @property
    def http_status(self) -> int:
        return HTTP_STATUS.get(self.code, 500)


def invalid(message: str, reason: str = "INVALID_ARGUMENT") -> ServiceError:
    return ServiceError(grpc.StatusCode.INVALID_ARGUMENT, reason, message)


def not_found(game_id: str) -> ServiceError:
    return ServiceError(grpc.StatusCode.NOT_FOUND, "GAME_NOT_FOUND", f"no game {excerpt(game_id)}")


def unauthenticated(message: str) -> ServiceError:
    return ServiceError(grpc.StatusCode.UNAUTHENTICATED, "BAD_TOKEN", message)


def denied(message: str, reason: str = "PERMISSION_DENIED") -> ServiceError:
    return ServiceError(grpc.StatusCode.PERMISSION_DENIED, reason, message)


def stale(expected: int, actual: int) -> ServiceError:
    return ServiceError(
        grpc.StatusCode.ABORTED,
        "STALE_VERSION",
        f"the game is at version {actual}, not {expected}: reload and retry",
    )


def conflict() -> ServiceError:
    return ServiceError(
        grpc.StatusCode.ABORTED,
        "CONCURRENT_UPDATE",
        "another request changed the game first; retry",
    )


def precondition(reason: str, message: str) -> ServiceError:
    return ServiceError(grpc.StatusCode.FAILED_PRECONDITION, reason, message)


# what an UNAVAILABLE for the store suggests waiting: about one store-health probe
STORE_RETRY_SECONDS = 1.0


def store_unavailable(error: StoreUnavailableError) -> ServiceError:
    """The store cannot be reached: UNAVAILABLE, which clients retry.  After a write
    whose outcome is unknown, a retry with the same request_id is applied once."""
    if error.reason == "REPLICA_ACK_TIMEOUT":
        message = (
            "the write was applied on the primary store but not confirmed by its replicas"
            f" in time ({error.error}): it may be lost if the primary fails now; retry with"
            " the same request_id (applied once, answered once a replica has it)"
        )
    elif error.write:
        message = (
            "the game store became unreachable during the write, which may or may not"
            " have been applied: retry with the same request_id"
        )
    else:
        message = "the game store is unreachable: retry later"
    return ServiceError(grpc.StatusCode.UNAVAILABLE, error.reason, message, STORE_RETRY_SECONDS)


def internal() -> ServiceError:
    """What a caller gets for a failure of ours (logged where it was caught): no detail."""
    return ServiceError(grpc.StatusCode.INTERNAL, "INTERNAL", "internal error; it has been logged")
