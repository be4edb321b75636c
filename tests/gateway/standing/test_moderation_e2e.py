"""Moderation through two real gateways: a report reaches the queue with its game, a ban reaches
the other gateway within a second (calls, sign-in and an open Play stream refused with the reason),
the banned player's live game ends as a loss by forfeit, and every step is in the audit log."""

from __future__ import annotations

import asyncio
import time

import grpc
from google.protobuf import duration_pb2
from tafel.admin.v1 import admin_pb2
from tafel.play.v1 import play_pb2, safety_pb2

from kit.errors import reason_of
from tests.gateway.conftest import GatewaySystem
from tests.gateway.harness import PlayStream, Seating, failure
from tests.gateway.standing.helpers import PASSWORD, Person, grant, register, sign_in


async def staff(gw_system: GatewaySystem, role: str = "moderator") -> Person:
    person = await register(gw_system.gateways[0].address, "mod")
    await grant(gw_system.redis_url, person.name, role)
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:  # the role reaches the gateway by pub/sub
        me = await person.accounts.GetMe(play_pb2.GetMeRequest(), metadata=person.md, timeout=5)
        if me.role != play_pb2.ROLE_PLAYER:
            return person
        await asyncio.sleep(0.05)
    raise AssertionError("the role never reached the gateway")


async def test_report_ban_across_gateways_and_audit(gw_system: GatewaySystem, seats: Seating) -> None:
    moderator = await staff(gw_system)
    alice = await register(gw_system.gateways[0].address, "alice")
    bob = await register(gw_system.gateways[1].address, "bob")
    game_id = await seats.start([alice.session.player, bob.session.player])

    report = await alice.safety.Report(
        safety_pb2.ReportRequest(
            request_id="r1",
            username=bob.name,
            game_id=game_id,
            reason=safety_pb2.REPORT_REASON_ABUSE,
            details="called me names",
        ),
        metadata=alice.md,
        timeout=10,
    )
    again = await alice.safety.Report(
        safety_pb2.ReportRequest(request_id="r1", username=bob.name, reason=safety_pb2.REPORT_REASON_ABUSE),
        metadata=alice.md,
        timeout=10,
    )
    assert again.report_id == report.report_id  # a retried report is filed once

    queue = await moderator.moderation.ListReports(admin_pb2.ListReportsRequest(), metadata=moderator.md, timeout=10)
    mine = [r for r in queue.reports if r.report_id == report.report_id]
    assert len(mine) == 1 and mine[0].reported.username == bob.name and mine[0].reporter.username == alice.name
    detail = await moderator.moderation.GetReport(
        admin_pb2.GetReportRequest(report_id=report.report_id), metadata=moderator.md, timeout=10
    )
    assert detail.report.details == "called me names" and detail.account.player.username == bob.name

    # Bob plays on gateway 1 with an open Play stream; the moderator bans him on gateway 0.
    stream = PlayStream(await sign_in(bob))  # type: ignore[arg-type]
    await stream.request(ping={})
    await moderator.moderation.SanctionPlayer(
        admin_pb2.SanctionPlayerRequest(
            username=bob.name, kind=safety_pb2.SANCTION_KIND_BAN, reason="abuse in chat", report_id=report.report_id
        ),
        metadata=moderator.md,
        timeout=30,
    )
    code, reason = await failure(bob.accounts.GetMe(play_pb2.GetMeRequest(), metadata=bob.md, timeout=5))
    assert (code, reason) == (grpc.StatusCode.PERMISSION_DENIED, "ACCOUNT_BANNED")
    await stream.wait_for(lambda: stream.ended, timeout_s=1.0)
    assert stream.error is not None and reason_of(stream.error) == "ACCOUNT_BANNED"
    assert "abuse in chat" in (stream.error.details() or "")
    code, reason = await failure(sign_in(bob, gw_system.gateways[1].address))
    assert (code, reason) == (grpc.StatusCode.PERMISSION_DENIED, "ACCOUNT_BANNED")

    # His live game ended as a loss by forfeit.
    view = await alice.games.GetGame(play_pb2.GetGameRequest(game_id=game_id), metadata=alice.md, timeout=10)
    assert view.summary.status.over and view.summary.status.outcome.reason == "RESIGNED"
    assert list(view.summary.status.outcome.winners) == [0]  # alice, seat 0, wins

    log = await moderator.moderation.ListAuditLog(
        admin_pb2.ListAuditLogRequest(username=bob.name), metadata=moderator.md, timeout=10
    )
    assert [e.action for e in log.entries][:1] == ["sanction"]
    entry = log.entries[0]
    assert entry.actor.username == moderator.name and entry.subject.username == bob.name
    assert entry.reason == "abuse in chat" and entry.details["kind"] == "ban"

    # Lifted: he signs in again.
    sanction_id = entry.details["sanction"]
    await moderator.moderation.LiftSanction(
        admin_pb2.LiftSanctionRequest(username=bob.name, sanction_id=sanction_id, reason="appeal accepted"),
        metadata=moderator.md,
        timeout=10,
    )
    assert (await sign_in(bob, gw_system.gateways[1].address)).session.player.username == bob.name


async def test_a_ban_reaches_the_other_gateway_within_a_second(gw_system: GatewaySystem) -> None:
    moderator = await staff(gw_system)
    carol = await register(gw_system.gateways[1].address, "carol")
    started = time.monotonic()
    call = moderator.moderation.SanctionPlayer(
        admin_pb2.SanctionPlayerRequest(
            username=carol.name,
            kind=safety_pb2.SANCTION_KIND_SUSPENSION,
            duration=duration_pb2.Duration(seconds=3600),
            reason="spam",
        ),
        metadata=moderator.md,
        timeout=30,
    )
    task = asyncio.ensure_future(call)
    refused_at = None
    while time.monotonic() - started < 5:
        try:
            await carol.accounts.GetMe(play_pb2.GetMeRequest(), metadata=carol.md, timeout=5)
        except grpc.aio.AioRpcError as error:
            assert reason_of(error) == "ACCOUNT_SUSPENDED"
            assert dict(error.trailing_metadata() or ()).get("until") or "until" in (error.details() or "")
            refused_at = time.monotonic()
            break
        await asyncio.sleep(0.02)
    await task
    assert refused_at is not None and refused_at - started < 1.0


async def test_staff_calls_need_the_role(gw_system: GatewaySystem) -> None:
    """Every moderator and admin method refuses a player (and a guest, and a moderator the admin
    methods) with PERMISSION_DENIED ROLE_REQUIRED."""
    player = await register(gw_system.gateways[0].address, "plain")
    moderator = await staff(gw_system)
    for service, stubs in (("ModerationService", ("moderation",)), ("AdminService", ("admin",))):
        descriptor = admin_pb2.DESCRIPTOR.services_by_name[service]
        callers = [player] if service == "ModerationService" else [player, moderator]
        for method in descriptor.methods:
            request_type = getattr(admin_pb2, method.input_type.name)
            for caller in callers:
                stub = getattr(caller, stubs[0])
                error = None
                try:
                    await getattr(stub, method.name)(request_type(), metadata=caller.md, timeout=10)
                except grpc.aio.AioRpcError as raised:
                    error = raised
                assert error is not None, f"{service}.{method.name} answered a {caller.name}"
                assert (error.code(), reason_of(error)) == (grpc.StatusCode.PERMISSION_DENIED, "ROLE_REQUIRED")
                assert "moderator" in (error.details() or "") or "admin" in (error.details() or "")


async def test_password_change_revokes_other_sessions(gw_system: GatewaySystem) -> None:
    dave = await register(gw_system.gateways[0].address, "dave")
    other = await sign_in(dave, gw_system.gateways[1].address)
    changed = await dave.accounts.ChangePassword(
        play_pb2.ChangePasswordRequest(current_password=PASSWORD, new_password="a new secret phrase"),
        metadata=dave.md,
        timeout=10,
    )
    code, reason = await failure(other.accounts.GetMe(play_pb2.GetMeRequest(), metadata=other.md, timeout=5))
    assert (code, reason) == (grpc.StatusCode.UNAUTHENTICATED, "SESSION_REVOKED")
    fresh = Person(dave.channel, changed.session)
    assert (
        await fresh.accounts.GetMe(play_pb2.GetMeRequest(), metadata=fresh.md, timeout=5)
    ).player.username == dave.name
    code, reason = await failure(
        dave.accounts.ChangePassword(
            play_pb2.ChangePasswordRequest(current_password="wrong password!", new_password="whatever12"),
            metadata=fresh.md,
            timeout=10,
        )
    )
    assert (code, reason) == (grpc.StatusCode.PERMISSION_DENIED, "WRONG_PASSWORD")
