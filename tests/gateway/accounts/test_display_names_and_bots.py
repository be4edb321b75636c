"""Display names and bots end to end, through real gateways and only the public API: a guest picks a
display name in any script and it travels with their seat; names are checked (refusals with their
reasons); a moderator's rename resets a display name; a bot is a bot because the platform handed
its pool the request, never because someone says so."""

from __future__ import annotations

import asyncio

import grpc
import pytest
from tafel.admin.v1 import admin_pb2, admin_pb2_grpc
from tafel.play.v1 import bots_pb2, bots_pb2_grpc, play_pb2, play_pb2_grpc

from gateway.bot_requests import BOT_REQUEST_HEADER
from kit.errors import reason_of
from tests.gateway.conftest import GatewaySystem
from tests.gateway.lobby_e2e import Guest
from tests.gateway.standing.helpers import register, sign_in
from tests.gateway.standing.test_moderation_e2e import staff


async def guest_named(channel: grpc.aio.Channel, display_name: str) -> Guest:
    accounts = play_pb2_grpc.AccountServiceStub(channel)
    request = play_pb2.SignInAsGuestRequest(display_name=display_name)
    session = (await accounts.SignInAsGuest(request, timeout=10)).session
    return Guest(session, play_pb2_grpc.LobbyServiceStub(channel), play_pb2_grpc.GameServiceStub(channel))


async def refused(call: object) -> tuple[grpc.StatusCode, str | None, str]:
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await call  # type: ignore[misc]
    return caught.value.code(), reason_of(caught.value), caught.value.details() or ""


async def test_display_names_are_checked_and_kept(gw_system: GatewaySystem) -> None:
    async with grpc.aio.insecure_channel(gw_system.gateways[0].address) as channel:
        accounts = play_pb2_grpc.AccountServiceStub(channel)
        # Trimmed, inner spaces one, NFC (o + combining diaeresis is one ö).
        guest = await guest_named(channel, "  Jo\u0308rg   de Vries ")
        assert guest.player.display_name == "Jörg de Vries" and guest.player.username.startswith("guest-")
        me = await accounts.GetMe(play_pb2.GetMeRequest(), metadata=guest.md, timeout=10)
        assert me.player.display_name == "Jörg de Vries"

        invalid = grpc.StatusCode.INVALID_ARGUMENT
        for name, reason in [
            ("Jörg\nde Vries", "BAD_DISPLAY_NAME"),
            ("abc\u202edef", "BAD_DISPLAY_NAME"),  # a right-to-left override
            ("   ", "BAD_DISPLAY_NAME"),
            ("x" * 33, "DISPLAY_NAME_TOO_LONG"),
            ("Bot (level 3)", "DISPLAY_NAME_RESERVED"),  # nobody passes for a bot ...
            ("\uff22\uff2f\uff34", "DISPLAY_NAME_RESERVED"),  # ... in any width (fullwidth BOT)
            ("Moderator Max", "DISPLAY_NAME_RESERVED"),
        ]:
            code, got, message = await refused(accounts.SignInAsGuest(play_pb2.SignInAsGuestRequest(display_name=name)))
            assert (code, got) == (invalid, reason), name
            assert "display name" in message
            code, got, _ = await refused(
                accounts.SetDisplayName(play_pb2.SetDisplayNameRequest(display_name=name), metadata=guest.md)
            )
            assert (code, got) == (invalid, reason), name
        assert (
            await accounts.SetDisplayName(play_pb2.SetDisplayNameRequest(display_name="Bottas"), metadata=guest.md)
        ).session.player.display_name == "Bottas"  # a word that only starts like one is fine

    # An account's display name is kept with it: set, signed in again, reset by a moderator's
    # rename (to the same login name: only the display name goes).
    person = await register(gw_system.gateways[0].address, "named")
    answer = await person.accounts.SetDisplayName(
        play_pb2.SetDisplayNameRequest(display_name="Zoë 李"), metadata=person.md, timeout=10
    )
    assert answer.session.player.display_name == "Zoë 李" and answer.session.player.username == person.name
    again = await sign_in(person, gw_system.gateways[1].address)
    assert again.session.player.display_name == "Zoë 李"
    moderator = await staff(gw_system)
    moderation = admin_pb2_grpc.ModerationServiceStub(moderator.channel)
    await moderation.RenameAccount(
        admin_pb2.RenameAccountRequest(username=person.name, new_username=person.name, reason="offensive name"),
        metadata=moderator.md,
        timeout=10,
    )
    renamed = await sign_in(person)
    assert renamed.session.player.username == person.name and renamed.session.player.display_name == ""


async def _room_with_a_bot_request(channel: grpc.aio.Channel) -> tuple[Guest, str, bots_pb2.BotRequest, str]:
    host = await guest_named(channel, "Jörg de Vries")
    room = (await host.lobby.CreateRoom(play_pb2.CreateRoomRequest(game="connect4"), metadata=host.md)).room
    # A bot pool of our own (ordinary API calls), so the request it is handed is the one we read.
    pool = await guest_named(channel, "")
    serve = bots_pb2_grpc.BotServiceStub(channel).ServeBotRequests(
        bots_pb2.ServeBotRequestsRequest(games=["connect4"]), metadata=pool.md, timeout=60
    )
    bots = bots_pb2_grpc.BotServiceStub(channel)
    asked = await bots.RequestBot(bots_pb2.RequestBotRequest(room_code=room.code, level=2), metadata=host.md)
    # Other tests' requests may be queued for connect4 too; and a pool another test left serving
    # for a moment may take ours and never come: its lease (15 s) then puts it back for this pool.
    while True:
        handed = (await asyncio.wait_for(serve.read(), 30)).request
        if handed.room_code == room.code:
            break
    serve.cancel()
    return host, room.code, handed, asked.request_id


async def test_a_bot_is_marked_by_the_platform_never_by_itself(gw_system: GatewaySystem) -> None:
    async with grpc.aio.insecure_channel(gw_system.gateways[1].address) as channel:
        host, code, handed, asked_id = await _room_with_a_bot_request(channel)
        assert asked_id != handed.request_id  # the asker never learns the id a pool is handed
        # The asker's id, or one made up, does not make anyone a bot.
        person = await guest_named(channel, "")
        for claimed in (asked_id, "made-up-id"):
            code_, reason, message = await refused(
                person.lobby.JoinRoom(
                    play_pb2.JoinRoomRequest(code=code), metadata=(*person.md, (BOT_REQUEST_HEADER, claimed))
                )
            )
            assert (code_, reason) == (grpc.StatusCode.PERMISSION_DENIED, "NOT_A_BOT_REQUEST")
            assert "play as yourself" in message
        # The pool's bot, naming what it was handed, sits as a bot of the level asked for.
        bot = await guest_named(channel, "")
        served = (*bot.md, (BOT_REQUEST_HEADER, handed.request_id))
        room = (await bot.lobby.JoinRoom(play_pb2.JoinRoomRequest(code=code), metadata=served)).room
        seated = {p.player_id: p for p in room.players}
        assert seated[bot.player.player_id].bot and seated[bot.player.player_id].bot_level == 2
        assert seated[bot.player.player_id].display_name == "Bot (level 2)"
        assert not seated[host.player.player_id].bot
        assert seated[host.player.player_id].display_name == "Jörg de Vries"
        # A retried join (its answer lost) is answered with the room, the bot still a bot.
        again = (await bot.lobby.JoinRoom(play_pb2.JoinRoomRequest(code=code), metadata=served)).room
        assert again.game_id and [p.bot for p in again.players] == [False, True]


async def test_the_game_and_its_record_name_the_display_name_and_the_bot(gw_system: GatewaySystem) -> None:
    async with grpc.aio.insecure_channel(gw_system.gateways[0].address) as channel:
        host, code, handed, _ = await _room_with_a_bot_request(channel)
        bot = await guest_named(channel, "")
        served = (*bot.md, (BOT_REQUEST_HEADER, handed.request_id))
        room = (await bot.lobby.JoinRoom(play_pb2.JoinRoomRequest(code=code), metadata=served)).room
        game = await host.games.GetGame(play_pb2.GetGameRequest(game_id=room.game_id), metadata=host.md)
        shown = [(p.player.display_name, p.player.bot, p.player.bot_level) for p in game.summary.players]
        assert shown == [("Jörg de Vries", False, 0), ("Bot (level 2)", True, 2)]
        await host.games.Resign(play_pb2.ResignRequest(game_id=room.game_id, request_id="r1"), metadata=host.md)
        for _ in range(100):
            try:
                record = (
                    await host.games.GetGameRecord(
                        play_pb2.GetGameRecordRequest(game_id=room.game_id), metadata=host.md
                    )
                ).record
                break
            except grpc.aio.AioRpcError:
                await asyncio.sleep(0.05)
        names = [(p.player.display_name, p.player.bot_level) for p in record.players]
        assert names == [("Jörg de Vries", 0), ("Bot (level 2)", 2)] and not record.rated
