"""What a failed call raises: :class:`CallError`, with the server's machine-readable reason."""

from __future__ import annotations

import grpc
from google.rpc import error_details_pb2
from grpc_status import rpc_status

#: the codes a call is retried on by default (a stale version: after a refresh)
RETRYABLE = (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.ABORTED)


class CallError(Exception):
    """An RPC failed; ``code`` is the gRPC status, ``reason`` the machine-readable reason."""

    def __init__(
        self,
        code: grpc.StatusCode,
        reason: str,
        message: str,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(f"{code.name} {reason}: {message}")
        self.code = code
        self.reason = reason
        self.message = message
        self.retry_after = retry_after  # seconds the server asks to wait (RetryInfo)


def call_error(exc: grpc.aio.AioRpcError) -> CallError:
    """The :class:`CallError` of a failed call (its ErrorInfo reason, its RetryInfo delay)."""
    reason, retry_after = "", None
    status = rpc_status.from_call(exc)  # type: ignore[arg-type]
    if status is not None:
        for detail in status.details:
            info, retry = error_details_pb2.ErrorInfo(), error_details_pb2.RetryInfo()
            if detail.Unpack(info):
                reason = info.reason
            elif detail.Unpack(retry):
                retry_after = retry.retry_delay.ToTimedelta().total_seconds()
    return CallError(exc.code(), reason or exc.code().name, exc.details() or "", retry_after)
