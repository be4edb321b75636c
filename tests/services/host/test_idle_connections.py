"""A TCP connection that never speaks HTTP/2 is closed after the handshake timeout
(gRPC's default held such sockets for 120 s)."""

from __future__ import annotations

import asyncio
import dataclasses
import time

from kit.server import start_server
from kit.settings import Env, ServerSettings


async def test_a_silent_connection_is_closed_after_the_handshake_timeout() -> None:
    settings = ServerSettings.from_env(Env({"REDIS_URL": "redis://127.0.0.1:1/0"}), default_port=0)
    settings = dataclasses.replace(settings, handshake_timeout_s=1.0)
    running = await start_server(settings, lambda server: None, [])
    try:
        reader, writer = await asyncio.open_connection("127.0.0.1", running.port)
        started = time.monotonic()
        await asyncio.wait_for(reader.read(), timeout=8.0)  # returns at EOF: the server closed it
        assert time.monotonic() - started >= 0.5
        writer.close()
    finally:
        await running.stop(0)
