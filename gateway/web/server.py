"""Run the edge in the gateway's process and event loop: granian's embedded server (HTTP/1.1 and
cleartext HTTP/2 on one port, parsed in Rust) over the ASGI application. Measured against
hypercorn (pure Python) in the same place: the edge's server CPU per move 1.19x native gRPC
against 1.45x (docs/architecture.md, "The web edge")."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from granian.constants import HTTPModes, Interfaces
from granian.http import HTTP1Settings, HTTP2Settings
from granian.server.embed import Server

from gateway.settings import WebSettings
from gateway.web.app import build_app
from gateway.web.methods import HandlerWrap, collect_methods
from kit.tasks import spawn

log = logging.getLogger("tafel.gateway.web")
BACKLOG = 4096  # a thousand browsers reconnecting at once after a restart
STARTED_WITHIN_S = 10.0


@dataclass
class RunningEdge:
    url: str
    port: int
    server: Server
    task: asyncio.Task[None]
    grace_s: float

    async def stop(self) -> None:
        """Stop accepting; in-flight calls get the grace period."""
        self.server.stop()  # type: ignore[no-untyped-call]
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.task, self.grace_s + 1.0)


def _free_port(host: str) -> int:
    """Port 0 (tests): granian binds by itself, so pick a free port first."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


async def _listening(host: str, port: int, serving: asyncio.Task[None]) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + STARTED_WITHIN_S
    while True:
        try:
            _, writer = await asyncio.open_connection(host, port)
        except OSError:
            if serving.done() or loop.time() > deadline:
                raise RuntimeError(f"the web edge did not listen on {host}:{port}") from None
            await asyncio.sleep(0.02)  # granian binds on its own thread; it has no ready callback
            continue
        writer.close()
        return


async def start_edge(
    register: Callable[[Any], None], settings: WebSettings, grace_s: float = 5.0, wrap: HandlerWrap | None = None
) -> RunningEdge:
    """`register` is the gateway's: it adds the same servicers to the native gRPC server; `wrap`
    adds the same call limits the native port has."""
    assert settings.port is not None
    app = build_app(collect_methods(register, wrap), settings)
    port = settings.port or _free_port(settings.host)
    server = Server(
        app,
        address=settings.host,
        port=port,
        interface=Interfaces.ASGI,
        http=HTTPModes.auto,  # HTTP/1.1, and HTTP/2 with prior knowledge (h2c), on the same port
        websockets=False,
        backlog=BACKLOG,
        runtime_threads=1,
        http1_settings=HTTP1Settings(keep_alive=True),
        http2_settings=HTTP2Settings(max_concurrent_streams=1000),
        log_enabled=False,  # granian's logging setup would replace the gateway's
        ssl_cert=settings.tls_cert,
        ssl_key=settings.tls_key,
    )
    # Awaited only by stop(): the edge dying meanwhile is logged when it happens.
    task = spawn(server.serve(), "web edge", log=log)
    await _listening(settings.host, port, task)
    host = f"[{settings.host}]" if ":" in settings.host else settings.host
    return RunningEdge(url=f"{settings.scheme}://{host}:{port}", port=port, server=server, task=task, grace_s=grace_s)
