"""Sessions through two gateways: sessions can be refreshed before they expire, a guest
keeps its identity across connections and gateways (the SDK's use_session), and a signed-out
session is refused by every gateway (one session with the tokens it was refreshed from, or all of
a player's with all_sessions)."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator

import grpc
import pytest
from tafel.client import TafelClient
from tafel.errors import TafelError
from tafel.play.v1 import play_pb2, play_pb2_grpc

from kit.errors import reason_of
from tests.gateway.conftest import GatewaySystem


@pytest.fixture
async def stubs(gw_system: GatewaySystem) -> AsyncIterator[list[play_pb2_grpc.AccountServiceStub]]:
    channels = [grpc.aio.insecure_channel(g.address) for g in gw_system.gateways]
    try:
        yield [play_pb2_grpc.AccountServiceStub(channel) for channel in channels]
    finally:
        for channel in channels:
            await channel.close()


def md(session: play_pb2.Session) -> tuple[tuple[str, str], ...]:
    return (("authorization", f"Bearer {session.token}"),)


async def refused_everywhere(stubs: list[play_pb2_grpc.AccountServiceStub], session: play_pb2.Session) -> None:
    """Every gateway refuses the token: at once on the one that revoked it, within a bounded time
    on the others (the revocation travels by pub/sub)."""
    for stub in stubs:
        deadline = asyncio.get_running_loop().time() + 10
        while True:
            try:
                await stub.GetMe(play_pb2.GetMeRequest(), metadata=md(session), timeout=5)
            except grpc.aio.AioRpcError as error:
                assert error.code() == grpc.StatusCode.UNAUTHENTICATED and reason_of(error) == "SESSION_REVOKED"
                break
            assert asyncio.get_running_loop().time() < deadline, "a gateway kept accepting a signed-out token"
            await asyncio.sleep(0.05)


async def test_a_guest_keeps_and_refreshes_its_session_across_gateways(
    stubs: list[play_pb2_grpc.AccountServiceStub],
) -> None:
    guest = (await stubs[0].SignInAsGuest(play_pb2.SignInAsGuestRequest(), timeout=10)).session
    me = await stubs[1].GetMe(play_pb2.GetMeRequest(), metadata=md(guest), timeout=10)  # another gateway
    assert me.player.player_id == guest.player.player_id and me.player.guest
    await asyncio.sleep(1.1)  # expiries have one-second resolution: the refreshed one must be later
    refreshed = (await stubs[1].RefreshSession(play_pb2.RefreshSessionRequest(), metadata=md(guest), timeout=10)).session
    assert refreshed.player.player_id == guest.player.player_id and refreshed.token != guest.token
    assert refreshed.expires_at.seconds > guest.expires_at.seconds
    me = await stubs[0].GetMe(play_pb2.GetMeRequest(), metadata=md(refreshed), timeout=10)
    assert me.player.player_id == guest.player.player_id
    # Without a token there is nothing to refresh.
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await stubs[0].RefreshSession(play_pb2.RefreshSessionRequest(), timeout=10)
    assert caught.value.code() == grpc.StatusCode.UNAUTHENTICATED


async def test_signing_out_revokes_one_session_or_all_of_them_on_every_gateway(
    stubs: list[play_pb2_grpc.AccountServiceStub],
) -> None:
    name, password = f"so{uuid.uuid4().hex[:10]}", "a long password"
    first = (await stubs[0].Register(play_pb2.RegisterRequest(username=name, password=password), timeout=10)).session
    second = (await stubs[1].SignIn(play_pb2.SignInRequest(username=name, password=password), timeout=10)).session
    third = (await stubs[1].SignIn(play_pb2.SignInRequest(username=name, password=password), timeout=10)).session
    await stubs[0].SignOut(play_pb2.SignOutRequest(), metadata=md(first), timeout=10)
    await refused_everywhere(stubs, first)
    # The other sessions are untouched ...
    for stub in stubs:
        await stub.GetMe(play_pb2.GetMeRequest(), metadata=md(second), timeout=10)
    # ... until the player signs out everywhere.
    await stubs[1].SignOut(play_pb2.SignOutRequest(all_sessions=True), metadata=md(second), timeout=10)
    await refused_everywhere(stubs, second)
    await refused_everywhere(stubs, third)
    # Signing in again gives a session that works.
    fresh = (await stubs[0].SignIn(play_pb2.SignInRequest(username=name, password=password), timeout=10)).session
    me = await stubs[1].GetMe(play_pb2.GetMeRequest(), metadata=md(fresh), timeout=10)
    assert me.player.username == name


async def test_the_sdk_keeps_refreshes_and_signs_out_a_guest_session(gw_system: GatewaySystem) -> None:
    first = await TafelClient.connect(gw_system.gateways[0].address)
    later = await TafelClient.connect(gw_system.gateways[1].address)
    try:
        guest = await first.sign_in_as_guest()
        assert first.session is not None
        kept = first.session
        # A new connection, another gateway: the same guest.
        assert later.use_session(kept).player_id == guest.player_id
        assert (await later.me()).player_id == guest.player_id
        refreshed = await later.refresh_session()
        assert refreshed.token != kept.token and refreshed.player.player_id == guest.player_id
        await later.sign_out()
        # Signing out revokes the session, the tokens it was refreshed from included.
        later.use_session(kept)
        with pytest.raises(TafelError) as caught:
            await later.me()
        assert caught.value.reason == "SESSION_REVOKED"
    finally:
        await first.close()
        await later.close()
