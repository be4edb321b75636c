"""Chat through real gateways: who may read and write which channel (players', spectators', room,
tournament) and every refusal; history on joining and resume by id on another gateway after a
kill -9 and after a graceful stop, every line once and in order; blocked and muted players' lines
never sent (blocking mid-stream too); chat off; the rate limit; a retried request applied once;
a report carries the line and its surroundings into the moderators' queue."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import grpc
from grpc_status import rpc_status
from google.rpc import error_details_pb2
from tafel.admin.v1 import admin_pb2
from tafel.play.v1 import play_pb2, safety_pb2, social_pb2, social_pb2_grpc

from gateway.standing.model import CHAT_MUTE
from gateway.standing.store import StandingStore
from kit.redis.keys import settings_key
from kit.redis.layer import RedisLayer
from tests.gateway.conftest import GatewaySystem
from tests.gateway.harness import Client, Seating, failure, new_id, spawn_gateway
from tests.gateway.standing.helpers import Person, grant, register, sign_in

S = social_pb2
PLAYERS, SPECTATORS = S.CHAT_CHANNEL_KIND_GAME_PLAYERS, S.CHAT_CHANNEL_KIND_GAME_SPECTATORS


def chan(kind: int, owner: str) -> S.ChatChannel:
    return S.ChatChannel(kind=kind, id=owner)  # type: ignore[arg-type]


def stub(who: Person | Client, channel: grpc.aio.Channel | None = None) -> social_pb2_grpc.ChatServiceStub:
    return social_pb2_grpc.ChatServiceStub(channel or who.channel)


async def say(who: Person | Client, channel: S.ChatChannel, text: str, request_id: str = "") -> S.ChatMessage:
    response = await stub(who).SendChatMessage(
        S.SendChatMessageRequest(request_id=request_id or new_id(), channel=channel, text=text),
        metadata=who.md,
        timeout=10,
    )
    return response.message


async def listed(who: Person | Client, channel: S.ChatChannel, after: str = "") -> list[str]:
    response = await stub(who).ListChatMessages(
        S.ListChatMessagesRequest(channel=channel, after_message_id=after), metadata=who.md, timeout=10
    )
    return [m.text for m in response.messages]


def error_metadata(error: grpc.aio.AioRpcError) -> dict[str, str]:
    status = rpc_status.from_call(error)  # type: ignore[arg-type]
    for detail in status.details if status else ():
        if detail.Is(error_details_pb2.ErrorInfo.DESCRIPTOR):
            info = error_details_pb2.ErrorInfo()
            detail.Unpack(info)
            return dict(info.metadata)
    return {}


async def refused(call: Any) -> tuple[grpc.StatusCode, str | None]:
    return await failure(call, timeout_s=10)


class Watch:
    """A WatchChat call held open: messages collected as they come."""

    def __init__(
        self, who: Person | Client, channel: S.ChatChannel, after: str = "", via: grpc.aio.Channel | None = None
    ) -> None:
        self.call = stub(who, via).WatchChat(
            S.WatchChatRequest(channel=channel, after_message_id=after), metadata=who.md
        )
        self.messages: list[S.ChatMessage] = []
        self.readies: list[S.ChatReady] = []
        self.error: grpc.aio.AioRpcError | None = None
        self._changed = asyncio.Event()
        self._task = asyncio.ensure_future(self._read())

    async def _read(self) -> None:
        try:
            async for response in self.call:
                if response.HasField("ready"):
                    self.readies.append(response.ready)
                else:
                    self.messages.append(response.message)
                self._changed.set()
        except grpc.aio.AioRpcError as error:
            self.error = error
            self._changed.set()

    async def started(self) -> Watch:
        await self.until(lambda: self.readies)
        return self

    async def until(self, predicate: Callable[[], Any], timeout_s: float = 10.0, ended: bool = False) -> None:
        async with asyncio.timeout(timeout_s):
            while True:
                self._changed.clear()
                if predicate():
                    return
                if self.error is not None and not ended:
                    raise AssertionError(f"the chat watch ended: {self.error}")
                await self._changed.wait()

    @property
    def texts(self) -> list[str]:
        return [m.text for m in self.messages]

    @property
    def last_id(self) -> str:
        return self.messages[-1].message_id if self.messages else self.readies[-1].last_message_id

    async def close(self) -> None:
        self.call.cancel()
        self._task.cancel()


async def with_layer(redis_url: str, work: Callable[[RedisLayer], Any]) -> Any:
    layer = RedisLayer.connect(redis_url, max_connections=2)
    try:
        return await work(layer)
    finally:
        await layer.close()


async def test_channels_access_and_every_refusal(gw_system: GatewaySystem, seats: Seating) -> None:
    address = gw_system.gateways[0].address
    ann, bob = await register(address, "ann"), await register(gw_system.gateways[1].address, "bob")
    carl, dora = await register(address, "carl"), await register(address, "dora")
    guest = await Client(address).guest()
    game_id = await seats.start([ann.session.player, bob.session.player])
    players, spectators = chan(PLAYERS, game_id), chan(SPECTATORS, game_id)

    line = await say(ann, players, "  good\nluck\x07 ")
    assert line.text == "good luck" and line.author.username == ann.name and line.channel == players
    assert line.message_id and line.at.seconds > 0
    await say(carl, spectators, "what a start")
    # Each channel holds its own lines: spectators' never reach the players' and the reverse.
    assert await listed(bob, players) == ["good luck"]
    assert await listed(guest, spectators) == ["what a start"]

    # A retried request is applied once and answered with the first line.
    again = await say(bob, players, "hi", request_id="same")
    assert (await say(bob, players, "hi (retry)", request_id="same")).message_id == again.message_id
    assert await listed(ann, players) == ["good luck", "hi"]

    checks = [
        (say(carl, players, "psst"), grpc.StatusCode.NOT_FOUND, "CHAT_CHANNEL_NOT_FOUND"),
        (listed(carl, players), grpc.StatusCode.NOT_FOUND, "CHAT_CHANNEL_NOT_FOUND"),
        (Watch(guest, players).call.read(), grpc.StatusCode.NOT_FOUND, "CHAT_CHANNEL_NOT_FOUND"),
        (say(ann, spectators, "hello watchers"), grpc.StatusCode.PERMISSION_DENIED, "CHAT_NOT_ALLOWED"),
        (say(guest, spectators, "hi"), grpc.StatusCode.PERMISSION_DENIED, "CHAT_NEEDS_ACCOUNT"),
        (say(ann, players, " \n\t "), grpc.StatusCode.INVALID_ARGUMENT, "CHAT_EMPTY"),
        (say(ann, players, "x" * 501), grpc.StatusCode.INVALID_ARGUMENT, "CHAT_TOO_LONG"),
        (say(ann, chan(PLAYERS, "no such game!"), "hi"), grpc.StatusCode.INVALID_ARGUMENT, "BAD_CHAT_CHANNEL"),
        (say(ann, chan(0, game_id), "hi"), grpc.StatusCode.INVALID_ARGUMENT, "BAD_CHAT_CHANNEL"),
        (say(ann, chan(PLAYERS, "nosuchgame"), "hi"), grpc.StatusCode.NOT_FOUND, "CHAT_CHANNEL_NOT_FOUND"),
        (say(ann, chan(S.CHAT_CHANNEL_KIND_ROOM, "NOSUCHROOM"), "hi"), grpc.StatusCode.NOT_FOUND, "CHAT_CHANNEL_NOT_FOUND"),
        (listed(ann, players, after="twelve"), grpc.StatusCode.INVALID_ARGUMENT, "BAD_MESSAGE_ID"),
        (Watch(ann, players, after="99999999999999-0").call.read(), grpc.StatusCode.OUT_OF_RANGE, "MESSAGE_ID_OUT_OF_RANGE"),
    ]
    for call, code, reason in checks:
        assert await refused(call) == (code, reason), reason
    assert (await say(ann, players, "x" * 500)).text == "x" * 500

    # The rate: 5 lines in 10 s, then CHAT_TOO_FAST with the wait in the metadata.
    for n in range(5):
        await say(dora, spectators, f"line {n}")
    try:
        await say(dora, spectators, "one too many")
        raise AssertionError("the sixth line in 10 s was taken")
    except grpc.aio.AioRpcError as error:
        assert error.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert 0 < int(error_metadata(error)["retry_after_ms"]) <= 10_000

    # Chat turned off in one's settings: not written, and a watch gets `ready` with chat_off only.
    await with_layer(gw_system.redis_url, lambda layer: layer.call("HSET", settings_key(carl.session.player.player_id), "chat", "0"))
    assert await refused(say(carl, spectators, "still here")) == (grpc.StatusCode.FAILED_PRECONDITION, "CHAT_OFF")
    off = await Watch(carl, spectators).started()
    assert off.readies[0].chat_off and not off.readies[0].can_write and not off.messages
    await off.close()

    # A chat mute (a sanction) refuses with its end in the metadata.
    until = await with_layer(
        gw_system.redis_url,
        lambda layer: StandingStore(layer).sanction(None, bob.name, CHAT_MUTE, 3600, "spam", ""),  # type: ignore[arg-type]
    )
    assert until
    deadline = asyncio.get_running_loop().time() + 5
    while True:  # the sanction reaches the gateways by pub/sub
        try:
            await say(bob, players, "can I still talk?")
        except grpc.aio.AioRpcError as error:
            assert (error.code(), error_metadata(error).get("until", "")[:2]) == (grpc.StatusCode.PERMISSION_DENIED, "20")
            break
        assert asyncio.get_running_loop().time() < deadline, "the chat mute never applied"
        await asyncio.sleep(0.05)

    # A spectator may no longer write once the game is over; the players still may.
    await play_out_game(game_id, ann, bob)
    assert await refused(say(dora, spectators, "gg")) == (grpc.StatusCode.PERMISSION_DENIED, "CHAT_NOT_ALLOWED")
    assert (await say(ann, players, "gg")).text == "gg"


async def play_out_game(game_id: str, first: Person, second: Person) -> None:
    from tests.gateway.standing.test_erasure import play_out

    await play_out(game_id, first, second)
