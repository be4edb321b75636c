"""Start the whole platform as real processes on loopback: Redis, every rules service (with
replicas), and the gateways. Used by `make run` and by the end-to-end tests, so tests start the
system exactly the way a person does.
"""

from __future__ import annotations

import importlib.util
import os
import resource
import secrets
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from kit.catalogue import DEFAULT_PORTS, GAMES
from kit.openfiles import open_files_to_hard_limit
from tools.redis_cluster import RedisClusterProcess, start_cluster
from tools.redis_server import RedisProcess, free_port, start_redis

ROOT = Path(__file__).resolve().parent.parent
GATEWAY_BASE_PORT = 50051
WEB_BASE_PORT = 8080  # each gateway's web edge (gateway/web): Connect and gRPC-Web over HTTP
CLUSTER_BASE_PORT = 7000  # `make run REDIS_CLUSTER=1`: the cluster's six nodes, 7000-7005
METRICS_BASE_PORT = 9100  # Prometheus /metrics of each server, one port each, in start order
# `make run`'s data folder (git-ignored): the Redis AOF under redis/ and this checkout's secrets.
# `make reset` deletes it.
DATA_DIR = ROOT / ".tafel"
_PR_SET_PDEATHSIG = 1
# A server's log line that fails the test suite (tests/conftest.py): a background task failed and
# nobody heard of it (kit/tasks.py), so whoever waited on its work may wait for ever.
FORBIDDEN_IN_LOGS = ("Task exception was never retrieved",)
forbidden_seen: list[str] = []  # "<process>: <line>" for each such line any child printed


def raise_nofile(at_least: int = 0) -> int:
    """RLIMIT_NOFILE's soft limit up to its hard one, for this process and every process it starts
    (they inherit it): a gateway holds a descriptor per connected player, and a soft limit of 1024
    (many shells' default) caps it at about a thousand. With `at_least` above the hard limit, the
    hard one is raised too where the kernel lets us (root, CAP_SYS_RESOURCE; up to fs.nr_open).
    Returns the soft limit now."""
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    if at_least > hard:
        try:
            ceiling = int(Path("/proc/sys/fs/nr_open").read_text())
            resource.setrlimit(resource.RLIMIT_NOFILE, (min(at_least, ceiling), min(at_least, ceiling)))
            return resource.getrlimit(resource.RLIMIT_NOFILE)[0]
        except (OSError, ValueError):
            pass  # not allowed: the hard limit stands
    return open_files_to_hard_limit()


def watch_line(name: str, line: str) -> None:
    """Note a child's output line that FORBIDDEN_IN_LOGS names (every server's line passes here)."""
    if any(text in line for text in FORBIDDEN_IN_LOGS):
        forbidden_seen.append(f"{name}: {line}")


# Each child asks the kernel for SIGTERM when its parent dies (PR_SET_PDEATHSIG), so nothing
# outlives `make run` even if it is killed. This runs in the child after exec: a preexec_fn would run
# Python between fork and exec in a process that has threads (grpc's), which can crash the child.
_LAUNCH = (
    "import ctypes, runpy, signal, sys\n"
    "try:\n"
    "    ctypes.CDLL('libc.so.6').prctl(1, signal.SIGTERM)\n"
    "except OSError:\n"
    "    pass\n"
    "module = sys.argv[2]\n"
    "sys.argv = [module, *sys.argv[3:]]\n"
    "runpy.run_module(module, run_name='__main__', alter_sys=True)\n"
)


def local_secret(name: str, folder: Path = DATA_DIR) -> str:
    """A secret for this checkout's `make run`, generated once into its data folder (git-ignored,
    readable by the owner only): no two checkouts share a token key, and none is published."""
    path = folder / name
    if not path.exists():
        folder.mkdir(mode=0o700, exist_ok=True)
        try:
            descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:  # another `make run` of this checkout made it first
            return path.read_text().strip()
        with os.fdopen(descriptor, "w") as file:
            file.write(secrets.token_urlsafe(32))
    return path.read_text().strip()


@dataclass
class Child:
    name: str
    process: subprocess.Popen[str]
    address: str
    output: list[str] = field(default_factory=list)
    metrics_url: str = ""  # its Prometheus endpoint, when it serves one
    log: Callable[[str, str], None] | None = None  # gets (name, line) for every line it prints
    # How it was started, so it can be started again the same way (same port): restart().
    module: str = ""
    env: dict[str, str] = field(default_factory=dict)
    args: tuple[str, ...] = ()


@dataclass
class Platform:
    """The running system. `start()` returns once every process listens; `stop()` ends them all."""

    redis_url: str | None = None
    gateways: int = 1
    rules_replicas: int = 1
    fixed_ports: bool = True  # False in tests: every process on a free port
    extra_env: Mapping[str, str] = field(default_factory=dict)
    quiet: bool = True
    bot_pool: bool = True
    games: tuple[str, ...] = ()  # only these games' rules services (the others "off"); () = all
    # The embedded Redis keeps its data here (AOF, fsync every second) and reloads it on start;
    # None: in memory only (tests). Ignored with redis_url.
    data_dir: Path | None = None
    log: Callable[[str, str], None] | None = None  # every child's output lines, as (name, line)
    children: list[Child] = field(default_factory=list)
    redis: RedisProcess | None = None
    # A local Redis Cluster (3 masters, 3 replicas; tools/redis_cluster.py) instead of one Redis,
    # when no redis_url is given (`make run REDIS_CLUSTER=1`, the cluster tests).
    redis_cluster: bool = False
    cluster: RedisClusterProcess | None = None
    rules_addresses: dict[str, list[str]] = field(default_factory=dict)
    gateway_addresses: list[str] = field(default_factory=list)
    web_urls: list[str] = field(default_factory=list)  # one web edge per gateway, in its process
    # Run `python -m tools.migrate` on the Redis before any server starts, as a deploy does (`make
    # run`, whose data folder outlives code changes). The tests leave it off: their Redis starts
    # empty, and servers stamp an empty Redis themselves (kit/redis/migrations check_layout).
    migrate: bool = False
    # With free ports, a metrics endpoint for each server all the same (a soak reads them: tools/soak.py).
    metrics: bool = False

    def _env(self, port: int, **more: str) -> dict[str, str]:
        env = dict(os.environ)
        env.update(self.extra_env)
        assert self.redis_url is not None
        env.update(REDIS_URL=self.redis_url, TAFEL_PORT=str(port), TAFEL_HOST="127.0.0.1", PYTHONUNBUFFERED="1")
        # Rules services answer only callers with this checkout's internal secret (the gateways).
        env.setdefault("TAFEL_INTERNAL_SECRET", local_secret("internal-secret"))
        env.update(more)
        if self.fixed_ports and port and "TAFEL_METRICS_PORT" not in self.extra_env:
            taken = sum(1 for child in self.children if child.metrics_url)
            env["TAFEL_METRICS_PORT"] = str(_free_or(METRICS_BASE_PORT + taken))
        elif self.metrics and port and "TAFEL_METRICS_PORT" not in self.extra_env:
            env["TAFEL_METRICS_PORT"] = str(free_port())
        return env

    def _port(self, base: int, index: int) -> int:
        return base + 100 * index if self.fixed_ports else free_port()

    def _spawn(
        self, name: str, module: str, env: dict[str, str], timeout_s: float = 30.0, args: tuple[str, ...] = ()
    ) -> Child:
        process = subprocess.Popen(
            [sys.executable, "-c", _LAUNCH, "-m", module, *args],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,  # read even when quiet: watch_line checks every line
            text=True,
        )
        child = Child(name, process, "", module=module, env=env, args=args, log=self.log)
        metrics_port = env.get("TAFEL_METRICS_PORT", "0")
        if metrics_port != "0":
            child.metrics_url = f"http://{env.get('TAFEL_HOST', '127.0.0.1')}:{metrics_port}/metrics"
        deadline = time.monotonic() + timeout_s
        assert process.stdout is not None
        while time.monotonic() < deadline:
            line = process.stdout.readline()
            if not line:
                raise RuntimeError(f"{name} exited with {process.wait()} before listening: {child.output[-5:]}")
            child.output.append(line.rstrip())
            watch_line(name, line)
            if child.log is not None:
                child.log(name, line.rstrip())
            if line.startswith(("LISTENING ", "READY ")):
                child.address = line.split()[-1]
                break
        else:
            process.kill()
            raise RuntimeError(f"{name} did not start within {timeout_s}s")
        # Keep draining stdout so a chatty child never blocks on a full pipe.
        threading.Thread(target=_drain, args=(child,), daemon=True).start()
        self.children.append(child)
        return child

    def start(self) -> Platform:
        raise_nofile()
        try:
            if self.redis_url is None and self.redis_cluster:
                # Fixed ports: a data folder's nodes.conf names them, so a restart finds its cluster.
                ports = [CLUSTER_BASE_PORT + i for i in range(6)] if self.fixed_ports else None
                self.cluster = start_cluster(ports, data_dir=self.data_dir)
                self.redis_url = self.cluster.url
            if self.redis_url is None:
                port = None if not self.fixed_ports else _free_or(6390)
                self.redis = start_redis(port, data_dir=self.data_dir, timeout_s=60.0 if self.data_dir else 10.0)
                self.redis_url = self.redis.url
            if self.migrate:
                self._migrate()
            for game, module in GAMES.items():
                if self.games and game not in self.games:
                    continue
                for replica in range(self.rules_replicas):
                    port = self._port(DEFAULT_PORTS[game], replica)
                    child = self._spawn(f"{game}-{replica}", module, self._env(port))
                    self.rules_addresses.setdefault(game, []).append(child.address)
            if importlib.util.find_spec("gateway.__main__") is not None:
                routes = {f"TAFEL_RULES_{g.upper()}": ",".join(a) for g, a in self.rules_addresses.items()}
                routes.update({f"TAFEL_RULES_{g.upper()}": "off" for g in GAMES if g not in self.rules_addresses})
                for index in range(self.gateways):
                    env = self._env(self._port(GATEWAY_BASE_PORT, index), **routes)
                    env.setdefault("TAFEL_TOKEN_SECRET", local_secret("token-secret"))
                    env.setdefault("TAFEL_WEB_PORT", str(self._port(WEB_BASE_PORT, index) if self.fixed_ports else 0))
                    child = self._spawn(f"gateway-{index}", "gateway", env)
                    self.gateway_addresses.append(child.address)
                    # The gateway prints "WEB <url>" before its LISTENING line.
                    self.web_urls.extend(line.split()[-1] for line in child.output if line.startswith("WEB "))
                if self.bot_pool:
                    # Answers people's requests for a bot opponent, through the public API only.
                    env = self._env(0, TAFEL_SERVER=",".join(self.gateway_addresses))
                    self._spawn("bot-pool", "tafel.cli.main", env, args=("bot-pool",))
        except BaseException:
            self.stop()
            raise
        return self

    def _migrate(self) -> None:
        assert self.redis_url is not None
        done = subprocess.run(
            [sys.executable, "-m", "tools.migrate", "--redis-url", self.redis_url],
            cwd=ROOT,
            env={**os.environ, **self.extra_env},
            capture_output=True,
            text=True,
            timeout=600,
        )
        for line in (done.stdout + done.stderr).splitlines():
            if self.log is not None:
                self.log("migrate", line)
        if done.returncode != 0:
            raise RuntimeError(f"the Redis layout migration failed ({done.returncode}): {done.stdout.strip()}")

    def stop(self, grace_s: float = 10.0) -> None:
        for child in self.children:
            if child.process.poll() is None:
                child.process.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + grace_s
        for child in self.children:
            try:
                child.process.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                child.process.kill()
                child.process.wait()
        self.children.clear()
        if self.redis is not None:
            self.redis.stop()
            self.redis = None
        if self.cluster is not None:
            self.cluster.stop()
            self.cluster = None

    def kill(self, name: str) -> None:
        """SIGKILL one process (crash tests)."""
        for child in self.children:
            if child.name == name:
                child.process.kill()
                child.process.wait()

    def terminate(self, name: str, timeout_s: float = 15.0) -> None:
        """SIGTERM one process and wait for it to end (graceful-stop tests); SIGKILL after the wait."""
        for child in self.children:
            if child.name == name and child.process.poll() is None:
                child.process.send_signal(signal.SIGTERM)
                try:
                    child.process.wait(timeout_s)
                except subprocess.TimeoutExpired:
                    child.process.kill()
                    child.process.wait()

    def restart(self, name: str) -> Child:
        """Start a process that was stopped or killed again, as before (same port and settings)."""
        old = next(child for child in self.children if child.name == name)
        if old.process.poll() is None:
            raise RuntimeError(f"{name} is still running")
        self.children.remove(old)
        return self._spawn(name, old.module, old.env, args=old.args)


def _drain(child: Child) -> None:
    assert child.process.stdout is not None
    for line in child.process.stdout:
        watch_line(child.name, line)
        if child.log is not None:
            child.log(child.name, line.rstrip())
        if len(child.output) < 1000:
            child.output.append(line.rstrip())


def _free_or(port: int) -> int:
    import socket

    with socket.socket() as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return free_port()
    return port
