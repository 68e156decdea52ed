"""PostgreSQL and Redis as child processes on free 127.0.0.1 ports, for the queue's tests and
`bench/bench_queue.py`.

Each server is started from the Debian packages' binaries (`.ci/install-servers` installs
them), with its data in a fresh temporary directory, and stopped by its PID when the context
exits. PostgreSQL refuses to run as root, so as root it runs as the `postgres` user (or
`nobody`), with its data directory owned by that user.
"""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

STARTUP_S = 60.0


def find_binary(name: str) -> str | None:
    """`name` on PATH, else in the newest /usr/lib/postgresql/*/bin (Debian keeps the
    PostgreSQL server binaries off PATH)."""
    found = shutil.which(name)
    if found:
        return found
    for folder in sorted(glob.glob("/usr/lib/postgresql/*/bin"),
                         key=lambda p: int(Path(p).parent.name), reverse=True):
        candidate = Path(folder) / name
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    return None


def missing_servers() -> list[str]:
    """The server binaries that are not installed."""
    return [name for name in ("initdb", "postgres", "redis-server") if find_binary(name) is None]


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def stop_pid(process: subprocess.Popen[bytes], sig: int = signal.SIGTERM,
             timeout: float = 30.0) -> None:
    """Stop one child process by its PID: `sig`, then SIGKILL if it does not exit."""
    if process.poll() is not None:
        return
    with contextlib.suppress(ProcessLookupError):
        os.kill(process.pid, sig)
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.kill(process.pid, signal.SIGKILL)
        process.wait(timeout=timeout)


def _server_user() -> tuple[int, int] | None:
    """(uid, gid) to run PostgreSQL as when we are root; None when we are not."""
    if os.geteuid() != 0:
        return None
    for name in ("postgres", "nobody"):
        with contextlib.suppress(KeyError):
            entry = pwd.getpwnam(name)
            return entry.pw_uid, entry.pw_gid
    raise RuntimeError("running as root and there is no postgres or nobody user")


def _wait_until(ready: Callable[[], bool], process: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + STARTUP_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"server exited with {process.returncode}: "
                               f"{log.read_text(errors='replace')[-2000:]}")
        if ready():
            return
        time.sleep(0.2)
    raise RuntimeError(f"server not ready after {STARTUP_S:.0f} s: "
                       f"{log.read_text(errors='replace')[-2000:]}")


def _accepts(port: int) -> bool:
    with socket.socket() as sock:
        sock.settimeout(1)
        return sock.connect_ex(("127.0.0.1", port)) == 0


@contextlib.contextmanager
def postgres_server() -> Iterator[str]:
    """A throw-away PostgreSQL cluster; yields its URL (user `auditor`, trust auth, 127.0.0.1
    only). Durability is off: it lives for one test."""
    initdb, postgres = find_binary("initdb"), find_binary("postgres")
    if not initdb or not postgres:
        raise RuntimeError("PostgreSQL is not installed (.ci/install-servers installs it)")
    owner = _server_user()
    home = Path(tempfile.mkdtemp(prefix="auditor-pg-"))
    data, log = home / "data", home / "server.log"
    if owner is not None:
        os.chown(home, *owner)
    user = {"user": owner[0], "group": owner[1]} if owner else {}
    process: subprocess.Popen[bytes] | None = None
    try:
        subprocess.run([initdb, "-D", str(data), "-U", "auditor", "--auth=trust", "-E", "UTF8",
                        "--no-sync", "--no-instructions"], check=True, capture_output=True,
                       cwd=home, **user)  # type: ignore[call-overload]
        port = free_port()
        with log.open("wb") as out:
            process = subprocess.Popen(  # type: ignore[call-overload]
                [postgres, "-D", str(data), "-p", str(port), "-c", "listen_addresses=127.0.0.1",
                 "-c", f"unix_socket_directories={home}", "-c", "fsync=off",
                 "-c", "synchronous_commit=off", "-c", "full_page_writes=off"],
                stdout=out, stderr=subprocess.STDOUT, cwd=home, **user)
        url = f"postgresql://auditor@127.0.0.1:{port}/postgres"
        _wait_until(lambda: _pg_ready(url), process, log)
        yield url
    finally:
        if process is not None:
            stop_pid(process, signal.SIGINT)  # SIGINT: PostgreSQL's fast shutdown
        shutil.rmtree(home, ignore_errors=True)


def _pg_ready(url: str) -> bool:
    import psycopg

    try:
        with psycopg.connect(url, connect_timeout=2) as conn:
            conn.execute("SELECT 1")
    except psycopg.OperationalError:
        return False
    return True


@contextlib.contextmanager
def redis_server() -> Iterator[str]:
    """A throw-away Redis on 127.0.0.1 without persistence; yields its URL."""
    binary = find_binary("redis-server")
    if not binary:
        raise RuntimeError("Redis is not installed (.ci/install-servers installs it)")
    home = Path(tempfile.mkdtemp(prefix="auditor-redis-"))
    log = home / "server.log"
    process: subprocess.Popen[bytes] | None = None
    try:
        port = free_port()
        with log.open("wb") as out:
            process = subprocess.Popen(
                [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                 "--appendonly", "no", "--dir", str(home), "--loglevel", "warning"],
                stdout=out, stderr=subprocess.STDOUT, cwd=home)
        _wait_until(lambda: _accepts(port), process, log)
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        if process is not None:
            stop_pid(process)
        shutil.rmtree(home, ignore_errors=True)
