"""A real redis-server on a free port (tests, load tests, benchmarks: never a mock)."""

from __future__ import annotations

import contextlib
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@contextlib.contextmanager
def redis_server() -> Iterator[str]:
    """Start redis-server (no persistence) and yield its URL; stop it by pid afterwards."""
    binary = shutil.which("redis-server")
    if binary is None:
        raise RuntimeError(
            "redis-server is not installed: `apt-get install -y redis-server` (.ci/run does it)"
        )
    for _ in range(5):
        port = free_port()
        workdir = tempfile.mkdtemp(prefix="glintwick-redis-")
        process = subprocess.Popen(
            [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
             "--dir", workdir],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )  # fmt: skip
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and process.poll() is None:
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.2):
                break
            time.sleep(0.05)
        if process.poll() is None:
            try:
                yield f"redis://127.0.0.1:{port}/0"
            finally:
                process.terminate()
                process.wait(10)
                shutil.rmtree(workdir, ignore_errors=True)
            return
        shutil.rmtree(workdir, ignore_errors=True)
    raise RuntimeError("could not start redis-server on a free port")
