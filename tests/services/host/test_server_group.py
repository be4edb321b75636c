"""kit/server.py ServerGroup: several grpc.aio servers on one port in one process (TAFEL_ACCEPTORS),
so a busy process asks the core for more than one new call at a time."""

from __future__ import annotations

import asyncio
import dataclasses
import os
import socket
import subprocess
import sys
from collections import Counter

import grpc
import pytest

from kit.server import start_server
from kit.settings import Env, ServerSettings
from kit.undecodable import WrappedHandlers

METHOD = "/test.Which/Server"


def settings_with(acceptors: int, port: int = 0) -> ServerSettings:
    settings = ServerSettings.from_env(Env({"REDIS_URL": "redis://127.0.0.1:1/0"}), default_port=0)
    return dataclasses.replace(settings, acceptors=acceptors, port=port)


def numbered_servers() -> tuple[list[int], object]:
    """A register function that gives each server of the group a method answering its number."""
    made: list[int] = []

    def register(server: grpc.aio.Server) -> None:
        number = len(made)
        made.append(number)

        async def which(request: bytes, context: grpc.aio.ServicerContext[bytes, bytes]) -> bytes:
            return bytes([number])

        handler = grpc.unary_unary_rpc_method_handler(which)  # raw bytes: no (de)serializers
        server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler("test.Which", {"Server": handler}),))

    return made, register


async def ask(port: int) -> int:
    # A connection of its own each time (gRPC shares one between channels to the same address).
    options = [("grpc.use_local_subchannel_pool", 1)]
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}", options=options) as channel:
        answer = await channel.unary_unary(METHOD)(b"", timeout=10)
        return int(answer[0])


async def test_a_group_serves_one_port_and_spreads_new_connections_over_its_servers() -> None:
    made, register = numbered_servers()
    running = await start_server(settings_with(4), register, [])  # type: ignore[arg-type]
    try:
        assert made == [0, 1, 2, 3]
        assert len(running.server.servers) == 4
        answered = Counter(await asyncio.gather(*(ask(running.port) for _ in range(60))))
        assert sum(answered.values()) == 60
        # The kernel hashes each new connection to one listening socket: 60 connections over four
        # listeners all landing on one has a probability of 4 * 4**-60.
        assert len(answered) > 1, answered
    finally:
        await running.stop(0)
    await asyncio.wait_for(running.server.wait_for_termination(), 5)


async def test_one_acceptor_is_one_server() -> None:
    made, register = numbered_servers()
    running = await start_server(settings_with(1), register, [])  # type: ignore[arg-type]
    try:
        assert made == [0] and len(running.server.servers) == 1
        assert await ask(running.port) == 0
    finally:
        await running.stop(0)


@pytest.mark.parametrize("other_reuses_port", [False, True])
async def test_a_port_another_socket_listens_on_is_refused(other_reuses_port: bool) -> None:
    """With SO_REUSEPORT gRPC's bind alone would succeed and share the port (a second gateway on
    the same port taking part of the connections); the group refuses it as a single server does."""
    other = socket.socket()
    if other_reuses_port:
        other.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    other.bind(("127.0.0.1", 0))
    other.listen()
    try:
        _, register = numbered_servers()
        with pytest.raises(OSError, match="could not bind"):
            await start_server(settings_with(4, other.getsockname()[1]), register, [])  # type: ignore[arg-type]
    finally:
        other.close()


@pytest.mark.parametrize("module", ["gateway", "services.connect4"])
def test_a_process_on_a_port_in_use_says_so_in_one_line(module: str) -> None:
    """At start-up, not a traceback: the entry points turn kit/server.py's BindError into a line
    on stderr and exit status 2 (the gateway's eight servers and a rules service's one alike)."""
    other = socket.socket()
    other.bind(("127.0.0.1", 0))
    other.listen()
    try:
        env = {
            **os.environ,
            "REDIS_URL": "redis://127.0.0.1:1/0",
            "TAFEL_PORT": str(other.getsockname()[1]),
            "TAFEL_TOKEN_SECRET": "test-token-secret-0123456789",
        }
        done = subprocess.run(
            [sys.executable, "-m", module], env=env, capture_output=True, text=True, timeout=60, check=False
        )
    finally:
        other.close()
    assert done.returncode == 2, done.stderr
    assert "could not bind 127.0.0.1:" in done.stderr
    assert "Traceback" not in done.stderr


def test_interceptors_wrap_each_servers_handler_once() -> None:
    """Each server of a group has its own handler objects for a method: the interceptors' cache
    keeps a wrapper per handler, so calls alternating between servers never rebuild one."""
    built: list[str] = []

    def wrap(handler: grpc.RpcMethodHandler, method: str) -> grpc.RpcMethodHandler:
        built.append(method)
        return grpc.unary_unary_rpc_method_handler(handler.unary_unary)

    async def behaviour(request: bytes, context: grpc.aio.ServicerContext[bytes, bytes]) -> bytes:
        return request

    cache = WrappedHandlers(wrap)
    first, second = (grpc.unary_unary_rpc_method_handler(behaviour) for _ in range(2))
    wrapped = [cache.of(handler, METHOD) for handler in (first, second, first, second, first)]
    assert built == [METHOD, METHOD]
    assert wrapped[0] is wrapped[2] is wrapped[4] and wrapped[1] is wrapped[3]
    assert wrapped[0] is not wrapped[1]
