"""The channel a client opens (target, TLS, load balancing) and the retries of its calls."""

from __future__ import annotations

import ipaddress
import json
from collections.abc import Sequence
from dataclasses import dataclass

import grpc


@dataclass
class RetryPolicy:
    attempts: int = 5
    backoff: float = 0.02  # seconds, doubled each retry
    timeout: float = 10.0  # per call
    # a RATE_LIMITED refusal is retried after the server's retry-after when that is at
    # most this many seconds (a longer one is raised: the caller decides)
    rate_limited_wait: float = 5.0


# calls spread over every address the target resolves to, not all on the first
ROUND_ROBIN = json.dumps({"loadBalancingConfig": [{"round_robin": {}}]})
BALANCING_OPTIONS = ("grpc.service_config", "grpc.lb_policy_name")


def channel_target(target: str | Sequence[str]) -> str:
    """A gRPC target for ``target``: a target as it is (``host:port``, ``dns:///host:port``,
    ``ipv4:…``), and a list of ``ip:port`` addresses as one ``ipv4:``/``ipv6:`` target."""
    if isinstance(target, str):
        return target
    addresses = list(target)
    if not addresses:
        raise ValueError("no address to connect to")
    if len(addresses) == 1:
        return addresses[0]
    hosts = [address.rpartition(":")[0] for address in addresses]
    if all(host.startswith("[") for host in hosts):
        return "ipv6:" + ",".join(addresses)
    try:
        for host in hosts:
            ipaddress.IPv4Address(host)
    except ValueError:
        raise ValueError(
            f"{addresses}: a list of addresses takes IP literals; for host names use"
            " one dns:///host:port target (it balances over every address the name has)"
        ) from None
    return "ipv4:" + ",".join(addresses)


def channel_credentials(
    tls: bool, root_certificates: bytes | None, credentials: grpc.ChannelCredentials | None
) -> grpc.ChannelCredentials | None:
    """The channel's TLS (None: plaintext): ``credentials`` as given, else TLS trusting
    ``root_certificates`` (PEM), else, with ``tls``, the system's roots."""
    if credentials is not None:
        return credentials
    if tls or root_certificates is not None:
        return grpc.ssl_channel_credentials(root_certificates=root_certificates)
    return None
