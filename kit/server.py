"""The gRPC server every process of the platform runs: a grpc.aio server with the standard health
service and server reflection (v1 and v1alpha), message-size and stream limits, bound to a port (0 in tests), and a
graceful stop on SIGTERM/SIGINT that turns health to NOT_SERVING, drains in-flight calls and ends.

Health answers SERVING only while the process can do its work: its composition root hands
`RunningServer.watch_health` its tier's checks (kit/health.py, docs/health.md). The health
service answers without the internal secret (kit/internal_auth.py), so probes need none.
One more name, LIVENESS, says only that the process runs (SERVING from its start until it stops):
a liveness probe asks it, so a Redis outage, which turns every other name NOT_SERVING, does not
make an orchestrator restart every server at once."""

from __future__ import annotations

import asyncio
import errno
import gc
import logging
import signal
import socket
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from tafel.diagnostics.v1 import diagnostics_pb2_grpc

from kit.diagnostics import SERVICE_NAME as DIAGNOSTICS
from kit.diagnostics import DiagnosticsServicer
from kit.health import Check, HealthMonitor
from kit.internal_auth import InternalAuth
from kit.reflection_v1 import enable_reflection
from kit.settings import ServerSettings
from kit.tasks import spawn
from kit.undecodable import UndecodableGuard

LIVENESS = "tafel.liveness"


class HealthServicer(health.aio.HealthServicer):  # type: ignore[misc]
    """The standard health service with List, which grpcio-health's servicer leaves unimplemented
    (it answered UNKNOWN with "NotImplementedError" text; found by make fuzz)."""

    async def List(
        self, request: health_pb2.HealthListRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> health_pb2.HealthListResponse:
        response = health_pb2.HealthListResponse()
        for name, status in self._server_status.items():  # the base class's table of statuses
            response.statuses[name].status = status
        return response


class BindError(OSError):
    """The server's address cannot be bound (in use, or not this machine's): said in one line at
    start-up by the entry points, not as a traceback."""


class ServerGroup:
    """Several grpc.aio servers on one port in one process, with the same servicers.

    grpc.aio's server asks the core for one new call at a time and awaits it on the event loop
    before asking for the next, so a gateway whose loop is busy with games takes new calls in
    slowly: 300 clients connecting at once while 200 games ran took 4.9-7.1 s to sign in with one
    server (0.3 s on an idle gateway). Each server of the group keeps its own request out and the
    kernel spreads new connections over their listening sockets (SO_REUSEPORT): eight took the
    same burst in 1.4-1.8 s (tools/bench_storm.py). A connection's calls all go to the server
    that accepted it."""

    def __init__(self, servers: Sequence[grpc.aio.Server]) -> None:
        self.servers = tuple(servers)

    async def stop(self, grace: float | None) -> None:
        await asyncio.gather(*(server.stop(grace) for server in self.servers))

    async def wait_for_termination(self) -> None:
        """Returns once every server of the group has stopped."""
        await asyncio.gather(*(server.wait_for_termination() for server in self.servers))


@dataclass
class RunningServer:
    server: ServerGroup
    port: int
    health: health.aio.HealthServicer
    service_names: tuple[str, ...]
    monitor: HealthMonitor | None = None

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    async def watch_health(self, checks: Sequence[Check], every_s: float, log: logging.Logger) -> None:
        """Report SERVING only while `checks` pass (kit/health.py): checked now, then every `every_s`."""
        self.monitor = HealthMonitor(self.health, self.service_names, checks, every_s=every_s, log=log)
        await self.monitor.start()

    async def stop_health(self) -> None:
        """No more checks (a stopping server says NOT_SERVING, whatever they would find)."""
        if self.monitor is not None:
            await self.monitor.stop()

    async def stop(self, grace_s: float) -> None:
        await self.stop_health()
        for name in (*self.service_names, "", LIVENESS):
            await self.health.set(name, health_pb2.HealthCheckResponse.NOT_SERVING)
        await self.server.stop(grace_s)


def server_options(settings: ServerSettings) -> list[tuple[str, int]]:
    return [
        ("grpc.max_receive_message_length", settings.max_message_bytes),
        ("grpc.max_send_message_length", settings.max_message_bytes),
        ("grpc.max_concurrent_streams", settings.max_concurrent_streams),
        # grpc.aio takes new calls from the core one at a time on the event loop; calls arriving
        # faster wait in the core's pending queue, and past its soft limit the core cancels new
        # ones at random (the client sees CANCELLED "CANCELLED") - the default soft limit of 1,000
        # failed 10-25 % of a burst of 2,000-10,000 watchers. Raise it well above any burst a
        # gateway is sized for; calls still leave the queue after 30 s unpicked.
        ("grpc.server.max_pending_requests", settings.max_pending_calls),
        ("grpc.server.max_pending_requests_hard_limit", 2 * settings.max_pending_calls),
        ("grpc.keepalive_time_ms", 30_000),
        ("grpc.http2.min_ping_interval_without_data_ms", 10_000),
        # Only the process's own group shares its port (ServerGroup; a probe bind without the
        # option first refuses a port another process holds).
        ("grpc.so_reuseport", 1 if settings.acceptors > 1 else 0),
        ("grpc.http2.bdp_probe", 0),
        # A connection that has not finished its HTTP/2 (and TLS) handshake in time (10 s) is closed:
        # gRPC's default of 120 s let idle sockets that never speak HTTP/2 pile up.
        ("grpc.server_handshake_timeout_ms", int(settings.handshake_timeout_s * 1000)),
    ]


def _read(path: str) -> bytes:
    with open(path, "rb") as file:
        return file.read()


def server_credentials(settings: ServerSettings) -> grpc.ServerCredentials | None:
    """TLS from the certificate files the settings name (None = plaintext); with a client CA,
    every caller must present a certificate it signed (mutual TLS)."""
    if not settings.tls_cert_file:
        return None
    client_ca = _read(settings.tls_client_ca_file) if settings.tls_client_ca_file else None
    return grpc.ssl_server_credentials(
        [(_read(settings.tls_key_file), _read(settings.tls_cert_file))],
        root_certificates=client_ca,
        require_client_auth=client_ca is not None,
    )


async def start_server(
    settings: ServerSettings,
    register: Callable[[grpc.aio.Server], None],
    service_names: Iterable[str],
    interceptors: Sequence[grpc.aio.ServerInterceptor] = (),
    *,
    internal: bool = True,
) -> RunningServer:
    """Build, bind and start a server; `register` adds the servicers. Returns it with its port.

    Interceptors: the internal-secret check first (TAFEL_INTERNAL_SECRET: nothing else runs for
    a stranger; `internal=False` for a public server such as the gateway's), then the caller's
    (rate limits), then the guard that answers undecodable requests INVALID_ARGUMENT (never
    UNKNOWN with a parser's text)."""
    chain: list[grpc.aio.ServerInterceptor] = []
    if internal and settings.internal_secret:
        chain.append(InternalAuth(settings.internal_secret))
    chain.extend(interceptors)
    chain.append(UndecodableGuard())
    names = tuple(service_names)
    health_servicer = HealthServicer()
    health_name = health_pb2.DESCRIPTOR.services_by_name["Health"].full_name
    diagnostics = DiagnosticsServicer()
    credentials = server_credentials(settings)
    if settings.acceptors > 1 and settings.port:
        _check_port_free(settings.host, settings.port)
    servers: list[grpc.aio.Server] = []
    port = settings.port
    for _ in range(settings.acceptors):
        server = grpc.aio.server(options=server_options(settings), interceptors=chain)
        register(server)
        diagnostics_pb2_grpc.add_DiagnosticsServiceServicer_to_server(diagnostics, server)
        health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
        enable_reflection((*names, DIAGNOSTICS, health_name), server)
        address = f"{settings.host}:{port}"  # the first one's port (0: it picks one) for the rest
        try:
            if credentials is None:
                bound = server.add_insecure_port(address)
            else:
                bound = server.add_secure_port(address, credentials)
        except RuntimeError:  # grpcio raises where it once returned 0 ("Failed to bind ...")
            bound = 0
        if bound == 0:
            await ServerGroup(servers).stop(None)
            raise BindError(f"could not bind {settings.host}:{port}")
        port = bound
        await server.start()
        servers.append(server)
    for name in (*names, "", LIVENESS):
        await health_servicer.set(name, health_pb2.HealthCheckResponse.SERVING)
    return RunningServer(server=ServerGroup(servers), port=port, health=health_servicer, service_names=names)


def _check_port_free(host: str, port: int) -> None:
    """Refuse a port some other socket listens on: with SO_REUSEPORT gRPC's bind would succeed
    and share it (a second gateway started on the same port would take half the connections)."""
    try:
        found = socket.getaddrinfo(host.strip("[]") or None, port, type=socket.SOCK_STREAM)
    except socket.gaierror:
        return  # an address gRPC cannot bind either: its own bind says so
    for family, kind, proto, _, where in found:
        with socket.socket(family, kind, proto) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # TIME_WAIT is not a listener
            try:
                probe.bind(where)
            except OSError as error:
                if error.errno == errno.EADDRINUSE:
                    raise BindError(f"could not bind {host}:{port}: the port is in use") from None
                raise


async def run_until_signalled(
    running: RunningServer, grace_s: float, on_stop: Callable[[], Awaitable[None]] | None = None
) -> None:
    """Serve until SIGTERM or SIGINT, then stop gracefully and run `on_stop` (close clients)."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    # Cancelled once either ends; a server that fails instead is logged by its supervisor.
    serving = spawn(running.server.wait_for_termination(), "grpc server")
    waiting = asyncio.ensure_future(stop.wait())
    await asyncio.wait((serving, waiting), return_when=asyncio.FIRST_COMPLETED)
    await running.stop(grace_s)
    waiting.cancel()
    serving.cancel()
    if on_stop is not None:
        await on_stop()


def tune_gc() -> None:
    """Fewer, cheaper garbage collections for a long-running server with many live objects.

    With the default thresholds (700, 10, 10) a busy gateway ran a young-generation collection
    every few hundred allocations and a full one every few seconds over every live stream, task
    and message, and those pauses were the tail of the move latency (`make bench-load`, 200
    games: p99 ~120 ms with the defaults, ~100 ms with these; p50 unchanged). Objects alive at
    start-up are frozen out of every collection; cycles are still collected, full collections
    are rarer. Peak RSS is in the same benchmark's figures."""
    gc.freeze()
    gc.set_threshold(50_000, 50, 20)


def install_event_loop() -> None:
    """uvloop when available: a faster event loop for the hot path (measured in `make bench`);
    and the collector tuned for a server (tune_gc)."""
    tune_gc()
    try:
        import uvloop
    except ImportError:  # pragma: no cover - uvloop is a dependency on Linux
        return
    uvloop.install()
