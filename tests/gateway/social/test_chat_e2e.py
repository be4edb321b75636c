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
from google.rpc import error_details_pb2
from grpc_status import rpc_status
from tafel.admin.v1 import admin_pb2
from tafel.play.v1 import (
    play_pb2,
    play_pb2_grpc,
    safety_pb2,
    social_pb2,
    social_pb2_grpc,
    tournaments_pb2,
    tournaments_pb2_grpc,
)

from gateway.chat.model import Channel, message_key
from gateway.chat.store import ChatStore
from gateway.standing.model import CHAT_MUTE
from gateway.standing.store import StandingStore
from kit.redis.keys import CHAT_KEEP
from kit.redis.layer import RedisLayer
from tests.gateway.conftest import GatewaySystem
from tests.gateway.harness import Client, Seating, failure, new_id, spawn_gateway
from tests.gateway.standing.helpers import Person, register, sign_in
from tests.gateway.standing.test_moderation_e2e import staff

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
    message: S.ChatMessage = response.message
    return message


async def listed(who: Person | Client, channel: S.ChatChannel, after: str = "") -> list[str]:
    response = await stub(who).ListChatMessages(
        S.ListChatMessagesRequest(channel=channel, after_message_id=after), metadata=who.md, timeout=10
    )
    return [m.text for m in response.messages]


def error_metadata(error: grpc.aio.AioRpcError) -> dict[str, str]:
    status = rpc_status.from_call(error)
    for detail in status.details if status else ():
        if detail.Is(error_details_pb2.ErrorInfo.DESCRIPTOR):
            info = error_details_pb2.ErrorInfo()
            detail.Unpack(info)
            return dict(info.metadata)
    return {}


async def refused(call: Any) -> tuple[grpc.StatusCode, str | None]:
    return await failure(call, timeout_s=10)


async def first_answer(who: Person | Client, channel: S.ChatChannel, after: str = "") -> None:
    """A WatchChat call's first answer (to see it refused)."""
    call = stub(who).WatchChat(S.WatchChatRequest(channel=channel, after_message_id=after), metadata=who.md)
    try:
        async for _ in call:
            return
    finally:
        call.cancel()


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
        self.batches = 0  # responses that carried several lines
        self.error: grpc.aio.AioRpcError | None = None
        self._changed = asyncio.Event()
        self._task = asyncio.ensure_future(self._read())

    async def _read(self) -> None:
        try:
            async for response in self.call:
                if response.HasField("ready"):
                    self.readies.append(response.ready)
                elif response.HasField("lines"):
                    self.batches += 1
                    self.messages.extend(response.lines.messages)
                else:
                    self.messages.append(response.message)
                self._changed.set()
        except grpc.aio.AioRpcError as error:
            self.error = error
            self._changed.set()

    async def has(self, count: int) -> None:
        await self.until(lambda: len(self.messages) >= count)

    async def ended(self) -> None:
        await self.until(lambda: self.error is not None, ended=True)

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
        (first_answer(guest, players), grpc.StatusCode.NOT_FOUND, "CHAT_CHANNEL_NOT_FOUND"),
        (say(ann, spectators, "hello watchers"), grpc.StatusCode.PERMISSION_DENIED, "CHAT_NOT_ALLOWED"),
        (say(guest, spectators, "hi"), grpc.StatusCode.PERMISSION_DENIED, "CHAT_NEEDS_ACCOUNT"),
        (say(ann, players, " \n\t "), grpc.StatusCode.INVALID_ARGUMENT, "CHAT_EMPTY"),
        (say(ann, players, "x" * 501), grpc.StatusCode.INVALID_ARGUMENT, "CHAT_TOO_LONG"),
        (say(ann, chan(PLAYERS, "no such game!"), "hi"), grpc.StatusCode.INVALID_ARGUMENT, "BAD_CHAT_CHANNEL"),
        (say(ann, chan(0, game_id), "hi"), grpc.StatusCode.INVALID_ARGUMENT, "BAD_CHAT_CHANNEL"),
        (say(ann, chan(PLAYERS, "nosuchgame"), "hi"), grpc.StatusCode.NOT_FOUND, "CHAT_CHANNEL_NOT_FOUND"),
        (
            say(ann, chan(S.CHAT_CHANNEL_KIND_ROOM, "NOSUCHROOM"), "hi"),
            grpc.StatusCode.NOT_FOUND,
            "CHAT_CHANNEL_NOT_FOUND",
        ),
        (listed(ann, players, after="twelve"), grpc.StatusCode.INVALID_ARGUMENT, "BAD_MESSAGE_ID"),
        (
            first_answer(ann, players, after="99999999999999-0"),
            grpc.StatusCode.OUT_OF_RANGE,
            "MESSAGE_ID_OUT_OF_RANGE",
        ),
    ]
    for call, code, reason in checks:
        assert await refused(call) == (code, reason), reason
    assert (await say(ann, players, "x" * 500)).text == "x" * 500

    # A room: read with its code, written by its seated players; a tournament: read by anyone,
    # written by its participants and organiser.
    lobby = play_pb2_grpc.LobbyServiceStub(ann.channel)
    code = (await lobby.CreateRoom(play_pb2.CreateRoomRequest(game="connect4"), metadata=ann.md, timeout=10)).room.code
    room = chan(S.CHAT_CHANNEL_KIND_ROOM, code)
    await say(ann, room, "who's joining?")
    assert await listed(carl, room) == ["who's joining?"]
    assert await refused(say(carl, room, "me")) == (grpc.StatusCode.PERMISSION_DENIED, "CHAT_NOT_ALLOWED")
    created = await tournaments_pb2_grpc.TournamentServiceStub(dora.channel).CreateTournament(
        tournaments_pb2.CreateTournamentRequest(
            request_id="t1", name="Chat cup", game="connect4", format=tournaments_pb2.TOURNAMENT_FORMAT_ROUND_ROBIN
        ),
        metadata=dora.md,
        timeout=10,
    )
    cup = chan(S.CHAT_CHANNEL_KIND_TOURNAMENT, created.tournament.tournament_id)
    await say(dora, cup, "welcome")
    assert await listed(guest, cup) == ["welcome"]
    assert await refused(say(carl, cup, "hello")) == (grpc.StatusCode.PERMISSION_DENIED, "CHAT_NOT_ALLOWED")

    # The rate: 5 lines in 10 s, then CHAT_TOO_FAST with the wait in the metadata.
    for n in range(4):  # (her fifth line was the tournament's)
        await say(dora, spectators, f"line {n}")
    try:
        await say(dora, spectators, "one too many")
        raise AssertionError("the sixth line in 10 s was taken")
    except grpc.aio.AioRpcError as error:
        assert error.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert 0 < int(error_metadata(error)["retry_after_ms"]) <= 10_000

    # Chat turned off in one's settings (mid-watch): the watch says so with a `ready` and goes
    # quiet, lines are refused CHAT_OFF; turned on again, a `ready` and the lines said meanwhile.
    erin = await register(address, "erin")
    settings = social_pb2_grpc.ProfileServiceStub(carl.channel)
    said = await listed(carl, spectators)
    on = await Watch(carl, spectators).started()
    await on.has(len(said))
    await settings.UpdateMySettings(S.UpdateMySettingsRequest(chat_enabled=False), metadata=carl.md)
    await on.until(lambda: len(on.readies) == 2)
    assert on.readies[1].chat_off and not on.readies[1].can_write
    assert await refused(say(carl, spectators, "still here")) == (grpc.StatusCode.FAILED_PRECONDITION, "CHAT_OFF")
    off = await Watch(carl, spectators).started()  # opened while off: `ready` only
    assert off.readies[0].chat_off and not off.messages
    await say(erin, spectators, "said while carl is away")
    await asyncio.sleep(0.3)
    assert on.texts == said and not off.messages
    await settings.UpdateMySettings(S.UpdateMySettingsRequest(chat_enabled=True), metadata=carl.md)
    await on.until(lambda: len(on.texts) == len(said) + 1)
    assert not on.readies[2].chat_off and on.readies[2].can_write
    assert on.texts == [*said, "said while carl is away"]  # once each
    await off.until(lambda: len(off.texts) == len(said) + 1)  # its first catch-up: the history
    await say(erin, spectators, "welcome back")
    await on.until(lambda: on.texts[-1:] == ["welcome back"])
    assert on.texts == [*said, "said while carl is away", "welcome back"]
    await on.close()
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
            assert (error.code(), error_metadata(error).get("until", "")[:2]) == (
                grpc.StatusCode.PERMISSION_DENIED,
                "20",
            )
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


async def test_history_and_resume_across_gateways_after_a_kill_and_a_stop(
    gw_system: GatewaySystem, seats: Seating
) -> None:
    eve, fay = (
        await register(gw_system.gateways[0].address, "eve"),
        await register(gw_system.gateways[1].address, "fay"),
    )
    viewers = [await register(gw_system.gateways[0].address, f"v{n}") for n in range(4)]
    game_id = await seats.start([eve.session.player, fay.session.player])
    spectators = chan(SPECTATORS, game_id)
    sent: list[str] = []

    async def lines(count: int) -> None:
        # Spread over several speakers: the rate limit is per player.
        for _ in range(count):
            n = len(sent)
            await say(viewers[n % len(viewers)], spectators, f"line {n}")
            sent.append(f"line {n}")

    await lines(3)
    # Joining: `ready` (the last id), then the history, then live lines.
    first = await Watch(eve, spectators).started()
    await first.until(lambda: len(first.messages) == 3)
    assert first.readies[0].last_message_id == first.messages[-1].message_id and not first.readies[0].can_write
    await lines(2)
    await first.until(lambda: len(first.messages) == 5)
    await first.close()

    # Resumed on another gateway after the last id seen: what was said meanwhile, once.
    await lines(2)
    elsewhere = await sign_in(eve, gw_system.gateways[1].address)
    second = await Watch(elsewhere, spectators, after=first.last_id).started()
    await second.until(lambda: len(second.messages) == 2)
    await second.close()

    # A gateway killed -9 mid-stream, then one stopped gracefully: each time the watch resumes
    # on gateway 0 with every line once, in order.
    seen, seen_last = first.texts + second.texts, second.last_id
    for ending in ("kill", "stop"):
        doomed = spawn_gateway(gw_system.redis_url, gw_system.routes, name=f"chat-{ending}")
        try:
            channel = grpc.aio.insecure_channel(doomed.address)
            watch = await Watch(eve, spectators, after=seen_last, via=channel).started()
            await lines(3)
            await watch.has(3)
            doomed.kill() if ending == "kill" else doomed.stop()
            await watch.ended()
            assert watch.error is not None and watch.error.code() == grpc.StatusCode.UNAVAILABLE
            await lines(2)
            resumed = await Watch(eve, spectators, after=watch.last_id).started()
            await resumed.has(2)
            seen += watch.texts + resumed.texts
            seen_last = resumed.last_id
            await resumed.close()
            await channel.close()
        finally:
            doomed.kill()
    assert seen == sent

    # The whole history once more from the start, oldest first.
    assert await listed(eve, spectators) == sent

    # 500 lines are kept: resuming after a line trimmed away is OUT_OF_RANGE, after a kept one is not.
    oldest = first.messages[0].message_id

    async def fill(layer: RedisLayer) -> None:
        store, channel = ChatStore(layer), Channel(SPECTATORS, game_id)
        line = S.ChatMessage(author=eve.session.player, text="filler")
        await asyncio.gather(*(store.append(channel, "filler", f"f{n}", line) for n in range(CHAT_KEEP)))

    # A watch open during the burst gets every line once, in order, the waiting ones several to a
    # response (`lines`) rather than one response per line.
    live = await Watch(eve, spectators, after=seen_last).started()
    await with_layer(gw_system.redis_url, fill)
    await live.has(CHAT_KEEP)
    await asyncio.sleep(0.2)
    assert len(live.messages) == CHAT_KEEP and {m.text for m in live.messages} == {"filler"}
    ids = [message_key(m.message_id) for m in live.messages]
    assert ids == sorted(set(ids))
    assert live.batches >= 1
    await live.close()
    assert await refused(first_answer(eve, spectators, after=oldest)) == (
        grpc.StatusCode.OUT_OF_RANGE,
        "MESSAGE_ID_OUT_OF_RANGE",
    )
    kept = await stub(eve).ListChatMessages(S.ListChatMessagesRequest(channel=spectators), metadata=eve.md)
    assert kept.more and [m.text for m in kept.messages] == ["filler"] * 100
    resumed = await Watch(eve, spectators, after=kept.messages[0].message_id).started()
    await resumed.has(CHAT_KEEP - 1)
    await resumed.close()


async def test_blocks_and_mutes_filter_and_a_report_keeps_the_lines_around(
    gw_system: GatewaySystem, seats: Seating
) -> None:
    address = gw_system.gateways[0].address
    gus, hal = await register(address, "gus"), await register(gw_system.gateways[1].address, "hal")
    ivy, jon, kai, lee = [await register(address, name) for name in ("ivy", "jon", "kai", "lee")]
    moderator = await staff(gw_system)
    game_id = await seats.start([gus.session.player, hal.session.player])
    spectators, players = chan(SPECTATORS, game_id), chan(PLAYERS, game_id)

    await say(kai, spectators, "k1")
    await ivy.safety.MutePlayer(safety_pb2.MutePlayerRequest(username=kai.name), metadata=ivy.md, timeout=10)
    watch = await Watch(ivy, spectators).started()
    await say(jon, spectators, "j1")
    await watch.has(1)
    # Blocked mid-stream: jon's later lines never arrive; others' still do.
    await ivy.safety.BlockPlayer(safety_pb2.BlockPlayerRequest(username=jon.name), metadata=ivy.md, timeout=10)
    await say(jon, spectators, "j2")
    await say(kai, spectators, "k2")
    await say(lee, spectators, "l1")
    await watch.has(2)
    await asyncio.sleep(0.2)  # anything wrongly let through would have arrived by now
    assert watch.texts == ["j1", "l1"]
    assert await listed(ivy, spectators) == ["l1"]  # a listing filters by the lists as they are now
    assert await listed(lee, spectators) == ["k1", "j1", "j2", "k2", "l1"]
    await watch.close()

    # A report keeps the line and up to 10 lines either side as said (blocks do not apply), and
    # the moderators' queue shows them.
    speakers = [await register(address, f"s{n}") for n in range(4)]
    for n in range(18):
        await say(speakers[n % 4], spectators, f"s{n}")
    everything = (
        await stub(lee).ListChatMessages(S.ListChatMessagesRequest(channel=spectators), metadata=lee.md)
    ).messages
    assert [m.text for m in everything][:5] == ["k1", "j1", "j2", "k2", "l1"] and len(everything) == 23
    target = everything[11]
    report = await ivy.safety.Report(
        safety_pb2.ReportRequest(
            request_id="r1",
            username=target.author.username,
            message_id=target.message_id,
            chat_channel=spectators,
            reason=safety_pb2.REPORT_REASON_ABUSE,
        ),
        metadata=ivy.md,
        timeout=10,
    )
    queue = await moderator.moderation.ListReports(admin_pb2.ListReportsRequest(), metadata=moderator.md, timeout=10)
    (found,) = [r for r in queue.reports if r.report_id == report.report_id]
    assert found.message_id == target.message_id and found.chat_channel == spectators
    assert list(found.chat_context) == list(everything[1:22])
    detail = await moderator.moderation.GetReport(
        admin_pb2.GetReportRequest(report_id=report.report_id), metadata=moderator.md, timeout=10
    )
    assert list(detail.report.chat_context) == list(found.chat_context)

    # game_id alone names the players' channel.
    lines = [await say(gus, players, "p0"), await say(hal, players, "p1"), await say(gus, players, "p2")]
    filed = await hal.safety.Report(
        safety_pb2.ReportRequest(
            request_id="r2",
            username=gus.name,
            game_id=game_id,
            message_id=lines[2].message_id,
            reason=safety_pb2.REPORT_REASON_ABUSE,
        ),
        metadata=hal.md,
        timeout=10,
    )
    detail = await moderator.moderation.GetReport(
        admin_pb2.GetReportRequest(report_id=filed.report_id), metadata=moderator.md, timeout=10
    )
    assert list(detail.report.chat_context) == lines and detail.report.chat_channel == players

    async def report_line(who: Person, message_id: str, **extra: Any) -> Any:
        return await who.safety.Report(
            safety_pb2.ReportRequest(
                request_id=new_id(),
                username=gus.name,
                message_id=message_id,
                reason=safety_pb2.REPORT_REASON_ABUSE,
                **extra,
            ),
            metadata=who.md,
            timeout=10,
        )

    assert await refused(report_line(hal, "1-0", game_id=game_id)) == (grpc.StatusCode.NOT_FOUND, "MESSAGE_NOT_FOUND")
    # The reporter must be able to read the channel: a spectator cannot report the players' lines.
    assert await refused(report_line(ivy, lines[0].message_id, game_id=game_id)) == (
        grpc.StatusCode.NOT_FOUND,
        "CHAT_CHANNEL_NOT_FOUND",
    )
