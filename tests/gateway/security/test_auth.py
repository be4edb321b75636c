"""The Authenticator with a real Redis: a stranger's wrong passwords do not
lock the owner out; the stranger is delayed; sign-ins hash before queued registrations; the
published make-run secret is refused outside loopback."""

from __future__ import annotations

import asyncio
import uuid

import grpc
import pytest

from gateway.auth import ACCOUNT_FREE_FAILURES, REGISTER, SIGN_IN, Authenticator, HashQueue
from gateway.settings import PUBLISHED_SECRET, GatewaySettings
from kit.errors import Refused
from kit.redis.layer import RedisLayer
from kit.settings import ConfigError

PASSWORD = "correct horse battery"


async def test_a_stranger_cannot_lock_the_owner_out(layer: RedisLayer) -> None:
    auth = Authenticator(layer, secret=b"x" * 32, token_ttl_s=3600)
    name = f"owner{uuid.uuid4().hex[:8]}"
    await auth.register(name, PASSWORD, source="10.0.0.1")  # the owner's own machine
    for _ in range(ACCOUNT_FREE_FAILURES + 5):
        with pytest.raises(Refused) as caught:
            await auth.sign_in(name, "wrong password!", source="203.0.113.9")
        if caught.value.code == grpc.StatusCode.RESOURCE_EXHAUSTED:
            break
    # The stranger is now delayed, with a retry time ...
    with pytest.raises(Refused) as caught:
        await auth.sign_in(name, PASSWORD, source="203.0.113.9")
    assert caught.value.reason == "TOO_MANY_ATTEMPTS" and (caught.value.retry_after_s or 0) > 0
    # ... another unknown source too (the account's count), but not the owner from a known source,
    with pytest.raises(Refused) as caught:
        await auth.sign_in(name, PASSWORD, source="198.51.100.7")
    assert caught.value.reason == "TOO_MANY_ATTEMPTS"
    session = await auth.sign_in(name, PASSWORD, source="10.0.0.1")
    assert session.player.username == name
    # nor the owner with a valid session, wherever they are.
    identity = auth.verify(session.token)
    again = await auth.sign_in(name, PASSWORD, source="198.51.100.7", session=identity)
    assert again.player.player_id == session.player.player_id


async def test_sign_ins_hash_before_queued_registrations() -> None:
    queue = HashQueue(1, max_waiting=(10, 3))
    order: list[str] = []

    async def hash_as(label: str, priority: int) -> None:
        await queue.run(priority, label, b"salt" * 4, 2, 1, 1)
        order.append(label)

    first = asyncio.ensure_future(hash_as("r0", REGISTER))
    await asyncio.sleep(0)  # r0 holds the only thread
    registrations = [asyncio.ensure_future(hash_as(f"r{i}", REGISTER)) for i in (1, 2, 3)]
    await asyncio.sleep(0)
    sign_in = asyncio.ensure_future(hash_as("s", SIGN_IN))
    with pytest.raises(Refused) as caught:  # the registration line (3) is full
        await queue.run(REGISTER, "r4", b"salt" * 4, 2, 1, 1)
    assert caught.value.code == grpc.StatusCode.RESOURCE_EXHAUSTED and caught.value.retry_after_s
    await asyncio.gather(first, sign_in, *registrations)
    assert order[:2] == ["r0", "s"]  # the sign-in jumped the queued registrations
    assert queue.free == 1


def test_the_published_make_run_secret_is_refused_outside_loopback() -> None:
    env = {"REDIS_URL": "redis://127.0.0.1:1/0", "TAFEL_TOKEN_SECRET": PUBLISHED_SECRET}
    assert GatewaySettings.from_env({**env, "TAFEL_HOST": "127.0.0.1"}).server.host == "127.0.0.1"
    with pytest.raises(ConfigError, match="published"):
        GatewaySettings.from_env({**env, "TAFEL_HOST": "0.0.0.0"})
