"""A player's safety and the staff's tools through the Python SDK and the terminal, against the whole platform: a player blocks,
mutes, reports and reads their standing; a moderator works the report queue, sanctions, lifts and
reads the audit log (StaffClient, and `tafel-admin`'s commands through tafel.cli.moderation.main);
an account changes its password, exports its data and deletes itself."""

from __future__ import annotations

import asyncio
import json
import re
import time
import uuid
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta

import pytest
from rich.console import Console
from tafel.cli import main as tafel_cli
from tafel.cli import moderation
from tafel.client import TafelClient
from tafel.errors import InvalidArgument, NotFound, PermissionDenied, TafelError, Unauthenticated
from tafel.play.v1 import play_pb2, safety_pb2
from tafel.staff import StaffClient

from gateway.standing.roles import ADMIN
from gateway.standing.store import StandingStore
from kit.redis.layer import RedisLayer
from tools.platform import Platform

PASSWORD = "a long enough password 1"


def name(prefix: str) -> str:
    return f"{prefix}{uuid.uuid4().hex[:8]}"


async def account(platform: Platform, username: str) -> TafelClient:
    client = await TafelClient.connect(platform.gateway_addresses)
    await client.register(username, PASSWORD)
    return client


async def grant(platform: Platform, username: str, role: int) -> None:
    """A staff role made on the server side, as `tafel-admin grant` does (no API call may make the
    first admin)."""
    layer = RedisLayer.connect(platform.redis_url, max_connections=2)
    try:
        await StandingStore(layer).set_role(None, username, role, "made by the test")
    finally:
        await layer.close()


@pytest.fixture
async def people(platform: Platform) -> AsyncIterator[tuple[TafelClient, TafelClient, TafelClient]]:
    """An admin, a player who reports, a player reported."""
    clients = [await account(platform, name(p)) for p in ("adm", "rep", "bad")]
    await grant(platform, clients[0].player.username, ADMIN)
    try:
        yield clients[0], clients[1], clients[2]
    finally:
        for client in clients:
            await client.close()


async def test_a_player_blocks_mutes_reports_and_staff_work_the_report(
    platform: Platform, people: tuple[TafelClient, TafelClient, TafelClient]
) -> None:
    admin, reporter, reported = people
    bad = reported.player.username
    assert await reporter.role() == play_pb2.ROLE_PLAYER and await admin.role() == play_pb2.ROLE_ADMIN

    # -- the player protects themself
    assert (await reporter.block(bad)).username == bad
    assert (await reporter.mute(bad)).username == bad
    listed = await reporter.list_blocked()
    assert [p.username for p in listed.blocked] == [bad] and [p.username for p in listed.muted] == [bad]
    await reporter.unmute(bad)
    assert not (await reporter.list_blocked()).muted
    with pytest.raises(InvalidArgument) as refused:
        await reporter.block(reporter.player.username)
    assert refused.value.reason == "SELF_NOT_ALLOWED"
    with pytest.raises(NotFound) as refused:
        await reporter.mute(name("nobody"))
    assert refused.value.reason == "PLAYER_NOT_FOUND"
    with pytest.raises(ValueError, match="abuse, spam"):
        await reporter.report(bad, "rudeness")
    report_id = await reporter.report(bad, "abuse", details="called me names", request_id="r-" + bad)
    assert await reporter.report(bad, "abuse", details="called me names", request_id="r-" + bad) == report_id

    # -- a player is refused the staff's calls, with the roles that may
    with pytest.raises(PermissionDenied) as refused:
        await StaffClient(reporter).list_reports()
    assert refused.value.reason == "ROLE_REQUIRED" and "moderator" in refused.value.metadata["roles"]

    # -- staff: the queue, the report with its account, a warning and a chat mute, then resolve
    staff = StaffClient(admin)
    queue = [r async for r in staff.all_reports()]
    mine = next(r for r in queue if r.report_id == report_id)
    assert mine.reporter.username == reporter.player.username and mine.reason == safety_pb2.REPORT_REASON_ABUSE
    detail = await staff.get_report(report_id)
    assert detail.account.player.username == bad and detail.report.details == "called me names"
    warning = await staff.warn(bad, "mind your language", report_id=report_id)
    mute = await staff.sanction(bad, "chat_mute", "insults", duration_s=1800, report_id=report_id)
    assert mute.kind == safety_pb2.SANCTION_KIND_CHAT_MUTE
    assert abs(mute.ends_at.ToSeconds() - time.time() - 1800) < 60
    standing = await reported.my_standing()
    assert [w.warning_id for w in standing.warnings] == [warning.warning_id]
    assert [s.sanction_id for s in standing.sanctions] == [mute.sanction_id]

    # -- a suspension refuses every call with its end; lifted, the account plays again
    suspension = await staff.sanction(bad, "suspension", "kept at it", duration_s=3600)
    with pytest.raises(PermissionDenied) as refused:
        await asyncio.wait_for(refused_soon(reported), 5)
    assert refused.value.reason == "ACCOUNT_SUSPENDED"
    until = refused.value.until
    assert until is not None and abs(until.timestamp() - suspension.ends_at.ToSeconds()) < 2
    again = await TafelClient.connect(platform.gateway_addresses)
    try:
        with pytest.raises(PermissionDenied) as refused:
            await again.sign_in(bad, PASSWORD)
        assert refused.value.reason == "ACCOUNT_SUSPENDED" and refused.value.until is not None
        await staff.lift_sanction(bad, suspension.sanction_id, "second chance")
        await again.sign_in(bad, PASSWORD)
        assert (await again.me()).username == bad
        ban = await staff.sanction(bad, "ban", "no more chances")
        assert not ban.HasField("ends_at")
        with pytest.raises(PermissionDenied) as refused:
            await asyncio.wait_for(refused_soon(again), 5)
        assert refused.value.reason == "ACCOUNT_BANNED" and refused.value.until is None
    finally:
        await again.close()

    resolved = await staff.resolve_report(report_id, "warned, muted, suspended, banned")
    assert resolved.status == 2 and resolved.resolved_by.username == admin.player.username
    looked = await staff.look_up(bad)
    assert {s.sanction_id for s in looked.history} >= {mute.sanction_id, suspension.sanction_id, ban.sanction_id}
    assert looked.reports_about == 1
    entries = (await staff.audit_log(bad)).entries
    actions = [e.action for e in entries]
    assert actions[:5] == ["resolve_report", "sanction", "lift", "sanction", "sanction"] and "warn" in actions
    assert all(e.actor.username == admin.player.username for e in entries[:5])
    assert entries[0].reason == "warned, muted, suspended, banned"

    # -- roles: an admin makes a moderator, who is in the staff list
    await staff.set_role(reporter.player.username, "moderator", "helps out")
    assert {a.player.username: a.role for a in await staff.list_staff()}[reporter.player.username] == (
        play_pb2.ROLE_MODERATOR
    )
    assert await reporter.role() == play_pb2.ROLE_MODERATOR


async def refused_soon(client: TafelClient) -> None:
    """Calls until the gateway refuses (a sanction reaches every gateway within a second)."""
    while True:
        await client.me()
        await asyncio.sleep(0.05)


async def test_an_account_changes_its_password_exports_its_data_and_deletes_itself(platform: Platform) -> None:
    username = name("life")
    me = await account(platform, username)
    other_device = await TafelClient.connect(platform.gateway_addresses)
    guest = await TafelClient.connect(platform.gateway_addresses)
    try:
        await other_device.sign_in(username, PASSWORD)
        with pytest.raises(PermissionDenied) as refused:
            await me.change_password("not the password", "another long password 2")
        assert refused.value.reason == "WRONG_PASSWORD"
        session = await me.change_password(PASSWORD, "another long password 2")
        assert session.token and me.session == session
        assert (await me.me()).username == username  # this client carries on
        with pytest.raises(Unauthenticated):
            await other_device.me()  # every other session was revoked
        with pytest.raises(Unauthenticated):
            await other_device.sign_in(username, PASSWORD)
        await other_device.sign_in(username, "another long password 2")

        document = await me.export_my_data()
        assert json.dumps(document).count(username) >= 1
        assert isinstance(document, dict) and document

        await guest.sign_in_as_guest()
        with pytest.raises(TafelError) as refused:
            await guest.change_password("", "a guest has none")
        assert refused.value.reason == "GUEST_ACCOUNT"

        await me.delete_account("another long password 2")
        assert me.session is None
        with pytest.raises(Unauthenticated):
            await other_device.sign_in(username, "another long password 2")
    finally:
        for client in (me, other_device, guest):
            await client.close()


# -- the terminal -------------------------------------------------------------------------------------


# Every command and what it printed, shown at the test's end (pytest prints it with a failure, and
# with -rP a passing run's screens, to read them as a person would).
TRANSCRIPT: list[str] = []


def run_tafel(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    """`tafel ARGV` in this process: its exit status and what it printed."""
    with pytest.raises(SystemExit) as ended:
        tafel_cli.main(argv)
    out = capsys.readouterr().out
    TRANSCRIPT.append(f"$ tafel {' '.join(argv[2:])}\n{out}")
    return int(ended.value.code or 0), out


def run_admin(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    """`tafel-admin ARGV` (what the server's console script hands over), at a fixed width."""
    code = moderation.main(argv, Console(width=120, highlight=False))
    out = capsys.readouterr().out
    TRANSCRIPT.append(f"$ tafel-admin {' '.join(argv[2:])}\n{out}")
    return code, out


def test_the_terminal_for_a_player_and_for_staff(
    platform: Platform, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    TRANSCRIPT.clear()
    try:
        terminal_for_a_player_and_for_staff(platform, capsys, monkeypatch)
    finally:
        print("\n".join(TRANSCRIPT))


def terminal_for_a_player_and_for_staff(
    platform: Platform, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    admin, player, troll = name("adm"), name("pla"), name("tro")

    async def setup() -> None:
        for username in (admin, player, troll):
            await (await account(platform, username)).close()
        await grant(platform, admin, ADMIN)

    asyncio.run(setup())
    server = ["--server", platform.gateway_addresses[0]]
    monkeypatch.setenv("TAFEL_PASSWORD", PASSWORD)
    local = datetime.now(UTC).astimezone().strftime("%Y-%m-%d")  # the day in this machine's zone

    # -- a player
    as_player = [*server, "--user", player]
    code, out = run_tafel([*as_player, "block", troll], capsys)
    assert code == 0 and out.startswith(f"Blocked {troll}: you will not be matched")
    code, out = run_tafel([*as_player, "report", troll, "--reason", "offensive_name", "--details", "rude name"], capsys)
    assert code == 0 and f"Reported {troll} for offensive name (report " in out
    code, out = run_tafel([*as_player, "standing"], capsys)
    assert code == 0 and "in good standing" in out
    code, out = run_tafel([*server, "block", troll], capsys)  # a guest of the terminal
    assert code == 1 and "--user" in out
    code, out = run_tafel([*as_player, "account", "export", "--output", "-"], capsys)
    assert code == 0 and isinstance(json.loads(out), dict) and player in out

    # -- staff: the queue, the report, a suspension, the look-up and the audit log
    as_admin = [*server, "--user", admin]
    code, out = run_admin([*as_admin, "reports"], capsys)
    assert code == 0 and "open report" in out and troll in out and "offensive name" in out
    report_id = next(line.split()[0] for line in out.splitlines() if troll in line)
    code, out = run_admin([*as_admin, "report", report_id], capsys)
    assert code == 0 and f"Report {report_id} (open)" in out and "rude name" in out and "REPORT_REASON" not in out
    code, out = run_admin([*as_admin, "suspend", troll, "2h", "a rude name"], capsys)
    assert code == 0 and out.startswith(f"Suspended {troll} until ")
    assert re.search(r"\(in (2 hours|1 hour 59 minutes)\): a rude name", out)
    sanction_id = out.split("sanction ")[1].split(";")[0]
    code, out = run_admin([*as_admin, "lookup", troll], capsys)
    assert code == 0 and sanction_id in out and "suspension" in out and "in force" in out
    assert "SANCTION_KIND" not in out
    code, out = run_tafel([*server, "--user", troll, "standing"], capsys)
    # the end is two hours on, which may be tomorrow in this machine's zone
    ends = {(datetime.now(UTC) + timedelta(hours=2, minutes=m)).astimezone().strftime("%Y-%m-%d") for m in (-2, 2)}
    day = "|".join(sorted(ends))
    assert code == 1 and re.match(rf"This account is suspended until ({day}) \d\d:\d\d \w+: a rude name\.", out), out
    code, out = run_admin([*as_admin, "lift", troll, sanction_id, "changed the name"], capsys)
    assert code == 0 and f"Lifted sanction {sanction_id} of {troll}" in out
    code, out = run_tafel([*server, "--user", troll, "standing"], capsys)
    assert code == 0 and "in good standing" in out
    code, out = run_admin([*as_admin, "mute", troll, "30m", "shouting", "--report", report_id], capsys)
    assert code == 0 and out.startswith(f"Muted in chat {troll} until ")
    code, out = run_admin([*as_admin, "warn", troll, "pick a kinder name"], capsys)
    assert code == 0 and out.startswith(f"Warned {troll}")
    code, out = run_tafel([*server, "--user", troll, "standing"], capsys)
    assert code == 0 and "chat mute" in out and "shouting" in out and "pick a kinder name" in out
    code, out = run_admin([*as_admin, "resolve", report_id, "suspended for 2 hours"], capsys)
    assert code == 0 and out.startswith(f"Resolved report {report_id}")
    code, out = run_admin([*as_admin, "audit", troll], capsys)
    assert code == 0 and "report resolved" in out and "sanction lifted" in out and "suspension" in out
    assert local in out
    code, out = run_admin([*as_admin, "role", player, "moderator", "helps with reports"], capsys)
    assert code == 0 and out.strip() == f"{player} is now a moderator."
    code, out = run_admin([*as_admin, "staff"], capsys)
    assert code == 0 and player in out and "moderator" in out and admin in out

    # -- refusals in words: a player at the staff's terminal, a bad duration
    code, out = run_admin([*server, "--user", troll, "reports"], capsys)
    assert code == 1 and "no staff role" in out
    code, out = run_admin([*as_admin, "mute", troll, "forever", "x"], capsys)
    assert code == 2 and "not a duration" in out

    # -- an account's life: a new password, then the account deleted
    monkeypatch.setenv("TAFEL_NEW_PASSWORD", "the troll's new password")
    code, out = run_tafel([*server, "--user", troll, "account", "password"], capsys)
    assert code == 0 and out.startswith("Password changed.")
    monkeypatch.setenv("TAFEL_PASSWORD", "the troll's new password")
    code, out = run_tafel([*server, "--user", troll, "account", "delete", "--yes"], capsys)
    assert code == 0 and out.startswith(f"The account {troll} is deleted")
    code, out = run_tafel([*server, "--user", troll, "standing"], capsys)
    assert code == 1 and "--register" in out  # no such account any more
