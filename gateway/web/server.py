"""Run the edge in the gateway's process and event loop: hypercorn (HTTP/1.1 and cleartext HTTP/2
on one port) over the ASGI application. The socket is bound here, so port 0 works and the real
port is known before the first request."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from hypercorn.asyncio import serve
from hypercorn.config import Config

from gateway.web.app import build_app
from gateway.web.methods import collect_methods
from gateway.web.settings import WebSettings

log = logging.getLogger("tafel.gateway.web")


@dataclass
class RunningEdge:
    url: str
    port: int
    sock: socket.socket
    shutdown: asyncio.Event
    task: asyncio.Task[None]

    async def stop(self) -> None:
        """Stop accepting; in-flight calls get the grace period, then the socket closes."""
        self.shutdown.set()
        with contextlib.suppress(Exception):
            await self.task
        self.sock.close()


def _bind(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(1024)
    sock.setblocking(False)
    return sock


async def start_edge(register: Callable[[Any], None], settings: WebSettings, grace_s: float = 5.0) -> RunningEdge:
    """`register` is the gateway's: it adds the same servicers to the native gRPC server."""
    assert settings.port is not None
    app = build_app(collect_methods(register), settings)
    sock = _bind(settings.host, settings.port)
    port = int(sock.getsockname()[1])
    config = Config()
    config.bind = [f"fd://{sock.fileno()}"]
    config.graceful_timeout = grace_s
    config.accesslog = None
    config.errorlog = log
    config.include_server_header = False
    config.keep_alive_timeout = 75.0  # idle browser connections between calls
    shutdown = asyncio.Event()
    task = asyncio.create_task(serve(app, config, shutdown_trigger=shutdown.wait))  # type: ignore[arg-type]
    host = f"[{settings.host}]" if ":" in settings.host else settings.host
    return RunningEdge(url=f"http://{host}:{port}", port=port, sock=sock, shutdown=shutdown, task=task)
