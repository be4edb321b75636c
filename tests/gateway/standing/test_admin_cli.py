"""`tafel-admin grant` and `staff` on the server side: the first admin is made straight in Redis,
the audit log says the server did it, and the gateways know the role at once."""

from __future__ import annotations

import asyncio

import pytest
from tafel.admin.v1 import admin_pb2
from tafel.play.v1 import play_pb2

from tests.gateway.conftest import GatewaySystem
from tests.gateway.standing.helpers import register
from tools.tafel_admin import main


async def test_grant_makes_the_first_admin(gw_system: GatewaySystem, capsys: pytest.CaptureFixture[str]) -> None:
    boss = await register(gw_system.gateways[1].address, "boss")
    url = gw_system.redis_url
    code = await asyncio.to_thread(main, ["--redis-url", url, "grant", boss.name, "admin", "--reason", "founder"])
    assert code == 0 and f"{boss.name} is now admin" in capsys.readouterr().out
    for _ in range(100):
        me = await boss.accounts.GetMe(play_pb2.GetMeRequest(), metadata=boss.md)
        if me.role == play_pb2.ROLE_ADMIN:
            break
        await asyncio.sleep(0.02)
    assert me.role == play_pb2.ROLE_ADMIN
    staff = await boss.admin.ListStaff(admin_pb2.ListStaffRequest(), metadata=boss.md)
    assert boss.name in [a.player.username for a in staff.staff]
    log = await boss.moderation.ListAuditLog(admin_pb2.ListAuditLogRequest(username=boss.name), metadata=boss.md)
    assert log.entries[0].action == "role" and log.entries[0].actor.username == "server"
    assert log.entries[0].reason == "founder" and log.entries[0].details["to"] == "admin"

    assert await asyncio.to_thread(main, ["--redis-url", url, "staff"]) == 0
    assert boss.name in capsys.readouterr().out
    code = await asyncio.to_thread(main, ["--redis-url", url, "grant", "no-such-name-here", "admin"])
    assert code == 1 and "there is no player called" in capsys.readouterr().err
