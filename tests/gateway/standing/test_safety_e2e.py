"""A player's own tools (block, mute, report, standing) and a moderator's rename, through a gateway."""

from __future__ import annotations

import grpc
from google.protobuf import duration_pb2
from tafel.admin.v1 import admin_pb2
from tafel.play.v1 import play_pb2, safety_pb2

from tests.gateway.conftest import GatewaySystem
from tests.gateway.harness import Seating, failure
from tests.gateway.standing.helpers import Person, register, sign_in, unique
from tests.gateway.standing.test_erasure import play_out
from tests.gateway.standing.test_moderation_e2e import staff


async def test_block_mute_and_their_refusals(gw_system: GatewaySystem) -> None:
    address = gw_system.gateways[0].address
    eve, frank, grace = [await register(address, n) for n in ("eve", "frank", "grace")]
    await eve.safety.BlockPlayer(safety_pb2.BlockPlayerRequest(username=frank.name), metadata=eve.md)
    await eve.safety.BlockPlayer(safety_pb2.BlockPlayerRequest(username=frank.name), metadata=eve.md)  # again: once
    await eve.safety.MutePlayer(safety_pb2.MutePlayerRequest(username=grace.name), metadata=eve.md)
    listed = await eve.safety.ListBlocked(safety_pb2.ListBlockedRequest(), metadata=eve.md)
    assert [p.username for p in listed.blocked] == [frank.name]
    assert [p.username for p in listed.muted] == [grace.name]

    code, reason = await failure(
        eve.safety.BlockPlayer(safety_pb2.BlockPlayerRequest(username=eve.name), metadata=eve.md)
    )
    assert (code, reason) == (grpc.StatusCode.INVALID_ARGUMENT, "SELF_NOT_ALLOWED")
    code, reason = await failure(
        eve.safety.BlockPlayer(safety_pb2.BlockPlayerRequest(username=unique("nobody")), metadata=eve.md)
    )
    assert (code, reason) == (grpc.StatusCode.NOT_FOUND, "PLAYER_NOT_FOUND")
    code, reason = await failure(
        eve.safety.Report(safety_pb2.ReportRequest(request_id="x", username=frank.name), metadata=eve.md)
    )
    assert (code, reason) == (grpc.StatusCode.INVALID_ARGUMENT, "BAD_REPORT_REASON")
    code, reason = await failure(
        eve.safety.Report(
            safety_pb2.ReportRequest(
                request_id="x", username=frank.name, reason=safety_pb2.REPORT_REASON_SPAM, details="x" * 1001
            ),
            metadata=eve.md,
        )
    )
    assert (code, reason) == (grpc.StatusCode.INVALID_ARGUMENT, "BAD_DETAILS")

    await eve.safety.UnblockPlayer(safety_pb2.UnblockPlayerRequest(username=frank.name), metadata=eve.md)
    await eve.safety.UnmutePlayer(safety_pb2.UnmutePlayerRequest(username=grace.name), metadata=eve.md)
    listed = await eve.safety.ListBlocked(safety_pb2.ListBlockedRequest(), metadata=eve.md)
    assert list(listed.blocked) == [] and list(listed.muted) == []


async def test_warnings_and_mutes_reach_the_player(gw_system: GatewaySystem) -> None:
    moderator = await staff(gw_system)
    henk = await register(gw_system.gateways[1].address, "henk")
    await moderator.moderation.WarnPlayer(
        admin_pb2.WarnPlayerRequest(username=henk.name, message="no insults, please"), metadata=moderator.md
    )
    muted = await moderator.moderation.SanctionPlayer(
        admin_pb2.SanctionPlayerRequest(
            username=henk.name,
            kind=safety_pb2.SANCTION_KIND_CHAT_MUTE,
            duration=duration_pb2.Duration(seconds=600),
            reason="flooding the chat",
        ),
        metadata=moderator.md,
    )
    standing = await henk.safety.GetMyStanding(safety_pb2.GetMyStandingRequest(), metadata=henk.md)
    assert [w.message for w in standing.warnings] == ["no insults, please"]
    assert [s.sanction_id for s in standing.sanctions] == [muted.sanction.sanction_id]
    assert standing.sanctions[0].ends_at.seconds - standing.sanctions[0].starts_at.seconds == 600
    # A chat mute leaves play alone.
    await henk.accounts.GetMe(play_pb2.GetMeRequest(), metadata=henk.md)
    # A suspension needs a sensible duration; staff cannot be sanctioned.
    code, reason = await failure(
        moderator.moderation.SanctionPlayer(
            admin_pb2.SanctionPlayerRequest(
                username=henk.name, kind=safety_pb2.SANCTION_KIND_SUSPENSION, reason="too short"
            ),
            metadata=moderator.md,
        )
    )
    assert (code, reason) == (grpc.StatusCode.INVALID_ARGUMENT, "BAD_SANCTION")
    code, reason = await failure(
        moderator.moderation.SanctionPlayer(
            admin_pb2.SanctionPlayerRequest(username=moderator.name, kind=safety_pb2.SANCTION_KIND_BAN, reason="x"),
            metadata=moderator.md,
        )
    )
    assert (code, reason) == (grpc.StatusCode.FAILED_PRECONDITION, "STAFF_NOT_SANCTIONABLE")


async def test_rename_moves_the_account_and_its_games(gw_system: GatewaySystem, seats: Seating) -> None:
    moderator = await staff(gw_system)
    address = gw_system.gateways[0].address
    rude, friend = await register(address, "rude"), await register(address, "friend")
    game_id = await seats.start([rude.session.player, friend.session.player])
    await play_out(game_id, rude, friend)
    await friend.safety.BlockPlayer(safety_pb2.BlockPlayerRequest(username=rude.name), metadata=friend.md)
    old_name, new_name = rude.name, unique("polite")
    renamed = await moderator.moderation.RenameAccount(
        admin_pb2.RenameAccountRequest(username=rude.name, new_username=new_name, reason="offensive name"),
        metadata=moderator.md,
    )
    assert renamed.player.username == new_name and renamed.player.player_id == rude.session.player.player_id
    code, reason = await failure(rude.accounts.GetMe(play_pb2.GetMeRequest(), metadata=rude.md))
    assert (code, reason) == (grpc.StatusCode.UNAUTHENTICATED, "SESSION_REVOKED")
    code, _ = await failure(sign_in(rude))
    assert code == grpc.StatusCode.UNAUTHENTICATED
    again = Person(rude.channel, play_pb2.Session())
    again.session.CopyFrom(rude.session)
    again.session.player.username = new_name
    fresh = await sign_in(again)
    assert fresh.session.player.player_id == rude.session.player.player_id
    record = await friend.games.GetGameRecord(play_pb2.GetGameRecordRequest(game_id=game_id), metadata=friend.md)
    assert [s.player.username for s in record.record.players] == [new_name, friend.name]
    listed = await friend.safety.ListBlocked(safety_pb2.ListBlockedRequest(), metadata=friend.md)
    assert [p.username for p in listed.blocked] == [new_name]
    code, reason = await failure(
        moderator.moderation.RenameAccount(
            admin_pb2.RenameAccountRequest(username=new_name, new_username=friend.name, reason="taken"),
            metadata=moderator.md,
        )
    )
    assert (code, reason) == (grpc.StatusCode.ALREADY_EXISTS, "USERNAME_TAKEN")
    log = await moderator.moderation.ListAuditLog(
        admin_pb2.ListAuditLogRequest(username=new_name), metadata=moderator.md
    )
    assert log.entries[0].action == "rename" and log.entries[0].details["from"] == old_name
