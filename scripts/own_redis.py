"""A private, throwaway `redis-server` on a free loopback port, for tests and benches that break
Redis on purpose (stop it, restart it, lose its messages). The Redis at REDIS_URL is shared by
every process of a machine; breaking that one breaks everyone else's work, so anything that stops
a Redis stops only one it started itself, by its own process id.

    with OwnRedis() as redis:      # redis.url == "redis://127.0.0.1:<port>/0"
        redis.stop()               # SIGKILL: queued messages are gone (nothing kept on disk)
        redis.start()              # the same port again, empty
"""

from __future__ import annotations

import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class OwnRedis:
    """One redis-server subprocess: no persistence, loopback only, its own temporary directory."""

    def __init__(self, port: int | None = None):
        self.port = port or free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.dir = Path(tempfile.mkdtemp(prefix="own-redis-"))
        self.proc: subprocess.Popen | None = None

    def start(self, timeout: float = 10) -> OwnRedis:
        if shutil.which("redis-server") is None:
            raise RuntimeError("redis-server is not installed")
        command = ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", ""]
        command += ["--appendonly", "no", "--dir", str(self.dir), "--logfile", str(self.dir / "log")]
        self.proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.up():
                return self
            if self.proc.poll() is not None:
                break
            time.sleep(0.05)
        raise RuntimeError(f"redis-server on port {self.port} did not start")

    def up(self) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=0.5) as s:
                s.sendall(b"PING\r\n")
                return s.recv(16).startswith(b"+PONG")
        except OSError:
            return False

    def stop(self) -> None:
        """SIGKILL this server (only this one): what a crash or an OOM kill does."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(10)
        self.proc = None

    def close(self) -> None:
        self.stop()
        shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self) -> OwnRedis:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()
