"""Free TCP ports on the loopback interface."""

from __future__ import annotations

import socket


def free_port() -> int:
    """A port nothing listens on now (the kernel's choice; another process may take it
    before it is bound: a starter that cares retries on another)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port
