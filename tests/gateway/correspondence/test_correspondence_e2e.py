"""Correspondence games through the public API of a real gateway and rules service on a real Redis,
on a moved clock (kit/timesource.py: every process reads the test's offset file), never slept.

A 3-day Connect Four game over a simulated week, two gateways sweeping: the first YOUR_TURN, a move, the 24 h warning, a
vacation (the opponent told, the clock standing still, the seat shown on vacation), the platform
killed and started again while time passes, the 1 h warning after the restart, a move, both
warnings again, the timeout at the exact moved deadline and GAME_OVER: every clock event once, and
each inbox says exactly that. Then the refusals (time controls, vacations) and the answers that
carry days_per_move."""

from __future__ import annotations

import asyncio
import datetime
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
import pytest
from google.protobuf import duration_pb2
from tafel.play.v1 import notices_pb2, notices_pb2_grpc, play_pb2, play_pb2_grpc

from kit.timesource import write_offset
from tests.gateway.harness import Proc, c4_move, failure, new_id, spawn, spawn_gateway
from tests.gateway.standing.helpers import Person, register, sign_in
from tests.keyspace import emptied
from tools.redis_server import free_port

N = notices_pb2
HOUR = 3_600_000
DAY = 24 * HOUR


@dataclass
class Platform:
    """One rules service and two gateways (both sweep) on the test's clock; restartable."""

    url: str
    offset_file: str
    procs: list[Proc] = field(default_factory=list)
    offset_ms: int = 0

    @property
    def env(self) -> dict[str, str]:
        return {"TAFEL_TIME_OFFSET_FILE": self.offset_file, "TAFEL_TEST_TIME": "on"}

    def start(self) -> None:
        rules = spawn(
            "connect4-rules", "services.connect4", {"REDIS_URL": self.url, "TAFEL_PORT": str(free_port()), **self.env}
        )
        gateways = [
            spawn_gateway(
                self.url, {"connect4": rules.address}, name=f"gateway-{i}", TAFEL_WARNING_MAX_WAIT_S="0.2", **self.env
            )
            for i in range(2)
        ]
        self.procs = [rules, *gateways]

    def stop(self, *, kill: bool = False) -> None:
        for proc in reversed(self.procs):
            if kill:
                proc.kill()
            else:
                proc.stop()
        self.procs = []

    @property
    def address(self) -> str:
        return self.procs[-1].address

    @property
    def other_address(self) -> str:
        return self.procs[1].address

    def now_ms(self) -> int:
        return int(time.time() * 1000) + self.offset_ms

    def advance_to(self, at_ms: int) -> None:
        """Move every process's clock so that it is `at_ms` now."""
        self.offset_ms = at_ms - int(time.time() * 1000)
        write_offset(self.offset_file, self.offset_ms)
        time.sleep(0.03)  # every process reads the file again within 5 ms (kit/timesource.py)


@pytest.fixture(scope="module")
def platform(redis_url: str) -> Iterator[Platform]:
    folder = tempfile.mkdtemp(prefix="tafel-corr-")
    made = Platform(emptied(redis_url, "correspondence"), str(Path(folder) / "offset"))
    write_offset(made.offset_file, 0)
    made.start()
    try:
        yield made
    finally:
        made.stop()


def inbox(person: Person) -> notices_pb2_grpc.NotificationServiceStub:
    return notices_pb2_grpc.NotificationServiceStub(person.channel)


def vacations(person: Person) -> notices_pb2_grpc.VacationServiceStub:
    return notices_pb2_grpc.VacationServiceStub(person.channel)


def lobby(person: Person) -> play_pb2_grpc.LobbyServiceStub:
    return play_pb2_grpc.LobbyServiceStub(person.channel)


async def notices(person: Person) -> list[N.Notification]:
    answer = await inbox(person).ListNotifications(N.ListNotificationsRequest(page_size=100), metadata=person.md)
    return list(reversed(answer.notifications))  # oldest first


def said(notes: list[N.Notification]) -> list[tuple[Any, ...]]:
    """What each notice says, briefly: (kind, version part of its id, hours left)."""
    out: list[tuple[Any, ...]] = []
    for note in notes:
        kind = N.NotificationKind.Name(note.kind).removeprefix("NOTIFICATION_KIND_")
        out.append((kind, note.hours_left) if note.kind == N.NOTIFICATION_KIND_TIME_RUNNING_OUT else (kind,))
    return out


async def eventually(check: Callable[[], Any], what: str, timeout_s: float = 15.0) -> Any:
    deadline = time.monotonic() + timeout_s
    while True:
        result = await check()
        if result:
            return result
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {timeout_s} s: {what}")
        await asyncio.sleep(0.1)


async def game(person: Person, game_id: str) -> play_pb2.GetGameResponse:
    answer: play_pb2.GetGameResponse = await person.games.GetGame(
        play_pb2.GetGameRequest(game_id=game_id), metadata=person.md, timeout=10
    )
    return answer


async def move(person: Person, game_id: str, version: int, column: int) -> None:
    await person.games.SubmitMove(
        play_pb2.SubmitMoveRequest(
            game_id=game_id, expected_version=version, request_id=new_id(), move=c4_move(column)
        ),
        metadata=person.md,
        timeout=10,
    )


async def correspondence_game(a: Person, b: Person, days: int) -> tuple[str, play_pb2.Room]:
    made = await lobby(a).CreateRoom(
        play_pb2.CreateRoomRequest(game="connect4", seats=2, time_control=play_pb2.TimeControl(days_per_move=days)),
        metadata=a.md,
        timeout=10,
    )
    joined = await lobby(b).JoinRoom(play_pb2.JoinRoomRequest(code=made.room.code), metadata=b.md, timeout=10)

    async def started() -> str:
        room = (await lobby(a).GetRoom(play_pb2.GetRoomRequest(code=made.room.code), metadata=a.md)).room
        return str(room.game_id)

    game_id = joined.room.game_id or await eventually(started, "the room's game started")
    return game_id, made.room


def ms(stamp: Any) -> int:
    return int(stamp.ToMilliseconds())


async def test_a_three_day_game_over_a_simulated_week(platform: Platform) -> None:
    t0 = platform.now_ms()
    a, b = await register(platform.address, "corra"), await register(platform.other_address, "corrb")
    game_id, room = await correspondence_game(a, b, 3)
    assert room.time_control.days_per_move == 3 and room.time_control.per_move.ToSeconds() == 3 * 86_400
    view = await game(a, game_id)
    first = 0 if view.summary.players[0].player.player_id == a.session.player.player_id else 1
    mover, other = (a, b) if first == 0 else (b, a)
    assert view.summary.time_control.days_per_move == 3
    assert abs(ms(view.summary.turn_deadline) - (t0 + 3 * DAY)) < 60_000
    await eventually(lambda: _has(mover, "YOUR_TURN"), "the first player told it is their turn")
    first_turn = next(n for n in await notices(mover) if n.kind == N.NOTIFICATION_KIND_YOUR_TURN)
    assert first_turn.player.player_id == other.session.player.player_id, "the start's notice names the opponent"

    # Version 0 -> 1: now the other player's turn, three days from now.
    await move(mover, game_id, 0, 3)
    moved_at = platform.now_ms()
    await eventually(lambda: _has(other, "YOUR_TURN"), "YOUR_TURN after the move")
    deadline1 = ms((await game(other, game_id)).summary.turn_deadline)
    assert abs(deadline1 - (moved_at + 3 * DAY)) < 5_000

    # Two days later: the 24 h warning, once.
    platform.advance_to(deadline1 - DAY + 60_000)
    await eventually(lambda: _has(other, "TIME_RUNNING_OUT", 24), "the 24 h warning")

    # The other player goes on vacation for a day: the clock stands still, the mover is told.
    away = await vacations(other).StartVacation(
        N.StartVacationRequest(duration=duration_pb2.Duration(seconds=24 * 3600)), metadata=other.md
    )
    # In progress, it counts as used up to now: an hour at least.
    assert away.vacation.active and away.vacation.allowance_left.ToSeconds() == 30 * 86_400 - 3600
    again = await vacations(other).StartVacation(N.StartVacationRequest(), metadata=other.md)
    assert ms(again.vacation.started_at) == ms(away.vacation.started_at)  # idempotent while away
    await eventually(lambda: _has(mover, "OPPONENT_ON_VACATION"), "the opponent's vacation announced")
    summary = (await game(mover, game_id)).summary
    assert list(summary.vacation_seats) == [1 - first]
    deadline2 = ms(summary.turn_deadline)
    assert deadline2 == deadline1 + DAY

    # The platform is killed (-9, every process); time passes beyond the first deadline (the
    # vacation ends by itself) and to half an hour before the moved one; it starts again.
    platform.stop(kill=True)
    platform.advance_to(deadline2 - 30 * 60_000)
    platform.start()
    a, b = await sign_in(a, platform.address), await sign_in(b, platform.other_address)
    mover, other = (a, b) if first == 0 else (b, a)
    await eventually(lambda: _has(other, "TIME_RUNNING_OUT", 1), "the 1 h warning after the restart")
    summary = (await game(other, game_id)).summary
    assert summary.status.version == 1 and not summary.status.over  # no timeout at the first deadline
    assert list(summary.vacation_seats) == [] and ms(summary.turn_deadline) == deadline2
    assert not (await vacations(other).GetVacation(N.GetVacationRequest(), metadata=other.md)).vacation.active

    # Version 1 -> 2: back to the first player, who then lets their clock run out.
    await move(other, game_id, 1, 4)

    async def told_twice() -> bool:
        return await _count(mover, "YOUR_TURN") == 2

    await eventually(told_twice, "YOUR_TURN again")
    deadline3 = ms((await game(mover, game_id)).summary.turn_deadline)
    platform.advance_to(deadline3 - DAY + 1000)
    await eventually(lambda: _has(mover, "TIME_RUNNING_OUT", 24), "the mover's 24 h warning")
    platform.advance_to(deadline3 - HOUR + 1000)
    await eventually(lambda: _has(mover, "TIME_RUNNING_OUT", 1), "the mover's 1 h warning")
    summary = (await game(mover, game_id)).summary
    assert not summary.status.over
    platform.advance_to(deadline3 + 1000)

    async def over() -> bool:
        return bool((await game(mover, game_id)).summary.status.over)

    await eventually(over, "the timeout")
    await eventually(lambda: _has(mover, "GAME_OVER"), "GAME_OVER")
    await eventually(lambda: _has(other, "GAME_OVER"), "GAME_OVER")
    await asyncio.sleep(1.0)  # a second sweep of every kind finds nothing more to say

    ended = (await game(mover, game_id)).summary.status
    assert ended.version == 3 and ended.outcome.reason == "TIMEOUT"
    assert said(await notices(mover)) == [
        ("YOUR_TURN",),
        ("OPPONENT_ON_VACATION",),
        ("YOUR_TURN",),
        ("TIME_RUNNING_OUT", 24),
        ("TIME_RUNNING_OUT", 1),
        ("GAME_OVER",),
    ]
    assert said(await notices(other)) == [
        ("YOUR_TURN",),
        ("TIME_RUNNING_OUT", 24),
        ("TIME_RUNNING_OUT", 1),
        ("GAME_OVER",),
    ]
    notes = await notices(other)
    assert notes[0].player.player_id == mover.session.player.player_id and notes[0].game_id == game_id
    assert notes[2].hours_left == 1 and ms(notes[2].deadline) == deadline2
    lost = next(n for n in await notices(mover) if n.kind == N.NOTIFICATION_KIND_GAME_OVER)
    assert lost.seat == first and lost.outcome.reason == "TIMEOUT"


async def _has(person: Person, kind: str, hours: int | None = None) -> bool:
    return await _count(person, kind, hours) > 0


async def _count(person: Person, kind: str, hours: int | None = None) -> int:
    wanted = (kind,) if hours is None else (kind, hours)
    return sum(1 for entry in said(await notices(person)) if entry == wanted)


async def test_refusals_and_answers(platform: Platform) -> None:
    # Early in a UTC year, so the allowance below is one year's (it counts per calendar year).
    year = datetime.datetime.fromtimestamp(platform.now_ms() / 1000, tz=datetime.UTC).year + 1
    platform.advance_to(int(datetime.datetime(year, 1, 5, tzinfo=datetime.UTC).timestamp() * 1000))
    a = await register(platform.address, "corrc")
    for control, reason in (
        (play_pb2.TimeControl(days_per_move=4), "BAD_DAYS_PER_MOVE"),
        (play_pb2.TimeControl(days_per_move=21), "BAD_DAYS_PER_MOVE"),
        (play_pb2.TimeControl(days_per_move=3, per_move=duration_pb2.Duration(seconds=60)), "BAD_TIME_CONTROL"),
        # Real-time limits stay: a per_move of two days is no correspondence control.
        (play_pb2.TimeControl(per_move=duration_pb2.Duration(seconds=2 * 86_400)), "BAD_TIME_CONTROL"),
    ):
        call = lobby(a).CreateRoom(
            play_pb2.CreateRoomRequest(game="connect4", seats=2, time_control=control), metadata=a.md
        )
        assert await failure(call) == (grpc.StatusCode.INVALID_ARGUMENT, reason)
    for days in (1, 2, 3, 5, 7, 10, 14):
        made = await lobby(a).CreateRoom(
            play_pb2.CreateRoomRequest(game="connect4", seats=2, time_control=play_pb2.TimeControl(days_per_move=days)),
            metadata=a.md,
        )
        assert made.room.time_control.days_per_move == days
        assert made.room.time_control.per_move.ToSeconds() == days * 86_400
        await lobby(a).LeaveRoom(play_pb2.LeaveRoomRequest(code=made.room.code), metadata=a.md)
    # A real-time control answers no days; per_move of exactly a day is the same game as one day a
    # move (a correspondence game: notices, vacations), and says so.
    for seconds, days in ((3600, 0), (86_400, 1)):
        control = play_pb2.TimeControl(per_move=duration_pb2.Duration(seconds=seconds))
        made = await lobby(a).CreateRoom(
            play_pb2.CreateRoomRequest(game="connect4", seats=2, time_control=control), metadata=a.md
        )
        assert made.room.time_control.days_per_move == days
        await lobby(a).LeaveRoom(play_pb2.LeaveRoomRequest(code=made.room.code), metadata=a.md)

    start = vacations(a).StartVacation
    for length, reason in (
        (duration_pb2.Duration(seconds=90 * 60), "BAD_VACATION_LENGTH"),
        (duration_pb2.Duration(seconds=-3600), "BAD_VACATION_LENGTH"),
        (duration_pb2.Duration(seconds=31 * 86_400), "BAD_VACATION_LENGTH"),
    ):
        assert await failure(start(N.StartVacationRequest(duration=length), metadata=a.md)) == (
            grpc.StatusCode.INVALID_ARGUMENT,
            reason,
        )
    assert not (
        await vacations(a).GetVacation(N.GetVacationRequest(), metadata=a.md)
    ).vacation.active  # nothing written

    # The whole allowance at once, then an early return: the hours used are whole (at least one).
    whole = await start(N.StartVacationRequest(), metadata=a.md)
    assert ms(whole.vacation.ends_at) - ms(whole.vacation.started_at) == 30 * DAY
    back = await vacations(a).EndVacation(N.EndVacationRequest(), metadata=a.md)
    assert not back.vacation.active and back.vacation.allowance_left.ToSeconds() == 30 * 86_400 - 3600
    assert (await vacations(a).EndVacation(N.EndVacationRequest(), metadata=a.md)).vacation == back.vacation
    # Use up the rest: then none is left.
    rest = await start(N.StartVacationRequest(), metadata=a.md)
    platform.advance_to(ms(rest.vacation.ends_at) + 1000)
    left = (await vacations(a).GetVacation(N.GetVacationRequest(), metadata=a.md)).vacation
    assert not left.active and left.allowance_left.ToSeconds() == 0
    assert await failure(start(N.StartVacationRequest(), metadata=a.md)) == (
        grpc.StatusCode.FAILED_PRECONDITION,
        "NO_VACATION_LEFT",
    )

    guest_channel = grpc.aio.insecure_channel(platform.address)
    guest = (
        await play_pb2_grpc.AccountServiceStub(guest_channel).SignInAsGuest(play_pb2.SignInAsGuestRequest())
    ).session
    md = (("authorization", f"Bearer {guest.token}"),)
    stub = notices_pb2_grpc.VacationServiceStub(guest_channel)
    assert await failure(stub.StartVacation(N.StartVacationRequest(), metadata=md)) == (
        grpc.StatusCode.FAILED_PRECONDITION,
        "VACATION_NEEDS_ACCOUNT",
    )
    await guest_channel.close()
