"""The director's tools end to end: real rules service, two gateways and Redis, bots that play
random legal moves through the public API, the organiser directing through TournamentService, a
watcher, the players' inboxes (NotificationService)."""

from __future__ import annotations

import asyncio
import csv
import io
import json
import time
from collections.abc import Iterator
from typing import Any

import grpc
import pytest
from google.rpc import error_details_pb2
from grpc_status import rpc_status
from tafel.play.v1 import notices_pb2, play_pb2, tournaments_pb2

from tests.gateway.standing.helpers import grant
from tests.gateway.tournaments.e2e import Bot, Client, Platform, rid, watch_until_over
from tests.keyspace import emptied

pytestmark = pytest.mark.timeout(300)
DB = "tournament directors"
T = tournaments_pb2
CODE = grpc.StatusCode


@pytest.fixture(scope="module")
def platform(redis_url: str) -> Iterator[Platform]:
    made = Platform(emptied(redis_url, DB), ("connect4",))
    try:
        made.start_rules()
        made.start_gateways(2)  # two replicas: a director on one, the sweep on both
        yield made
    finally:
        made.stop()


async def guests(platform: Platform, count: int) -> list[Client]:
    return [await Client(platform.addresses, i).sign_in() for i in range(count)]


def info_of(error: grpc.aio.AioRpcError) -> tuple[grpc.StatusCode, str, dict[str, str]]:
    status = rpc_status.from_call(error)
    assert status is not None
    for detail in status.details:
        if detail.Is(error_details_pb2.ErrorInfo.DESCRIPTOR):
            found = error_details_pb2.ErrorInfo()
            detail.Unpack(found)
            return error.code(), found.reason, dict(found.metadata)
    return error.code(), "", {}


async def refused(client: Client, method: str, request: Any) -> tuple[grpc.StatusCode, str, dict[str, str]]:
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await client.call("tournaments", method, request)
    return info_of(caught.value)


def create_request(name: str = "club night", **fields: Any) -> T.CreateTournamentRequest:
    per_move_ms = fields.pop("per_move_ms", 3000)
    request = T.CreateTournamentRequest(request_id=rid(), name=name, game="connect4", capacity=16, **fields)
    request.time_control.per_move.FromMilliseconds(per_move_ms)
    return request


async def create(organiser: Client, **fields: Any) -> T.Tournament:
    made = await organiser.call("tournaments", "CreateTournament", create_request(**fields))
    tournament: T.Tournament = made.tournament
    return tournament


async def get(client: Client, tid: str) -> T.Tournament:
    got = await client.call("tournaments", "GetTournament", T.GetTournamentRequest(tournament_id=tid))
    tournament: T.Tournament = got.tournament
    return tournament


async def join(client: Client, tid: str, code: str = "") -> T.Tournament:
    got = await client.call(
        "tournaments", "JoinTournament", T.JoinTournamentRequest(tournament_id=tid, invitation_code=code)
    )
    tournament: T.Tournament = got.tournament
    return tournament


async def audit(client: Client, tid: str) -> list[T.TournamentAuditEntry]:
    got = await client.call("tournaments", "ListTournamentAudit", T.ListTournamentAuditRequest(tournament_id=tid))
    return list(got.entries)


async def stored_events(client: Client, tid: str) -> list[T.TournamentEvent]:
    """What a watcher sees of a tournament now (its stored stream; a live one is cut short)."""
    out: list[T.TournamentEvent] = []
    client._connect()
    call = client.tournaments.WatchTournament(T.WatchTournamentRequest(tournament_id=tid), metadata=client.md)
    try:
        while True:
            response = await asyncio.wait_for(call.read(), 1.0)
            if response is grpc.aio.EOF:
                break
            out.append(response.event)
    except TimeoutError:
        pass
    finally:
        call.cancel()
    return out


def kinds(events: list[T.TournamentEvent]) -> list[str]:
    return [str(e.WhichOneof("kind")) for e in events]


async def until(check: Any, timeout_s: float = 120.0, every_s: float = 0.2) -> Any:
    deadline = time.monotonic() + timeout_s
    while True:
        got = await check()
        if got:
            return got
        assert time.monotonic() < deadline, "timed out waiting"
        await asyncio.sleep(every_s)


async def notices(client: Client) -> list[notices_pb2.Notification]:
    got = await client.call("notices", "ListNotifications", notices_pb2.ListNotificationsRequest(page_size=100))
    return list(got.notifications)


class Bots:
    def __init__(self, clients: list[Client], seed: int = 0) -> None:
        self.stop = asyncio.Event()
        self.bots = [Bot(c, seed=seed + i) for i, c in enumerate(clients)]
        self.tasks = [asyncio.create_task(b.run(self.stop)) for b in self.bots]

    def add(self, client: Client, seed: int) -> None:
        bot = Bot(client, seed=seed)
        self.bots.append(bot)
        self.tasks.append(asyncio.create_task(bot.run(self.stop)))

    async def close(self) -> None:
        self.stop.set()
        await asyncio.gather(*self.tasks)


async def test_update_entry_conditions_and_refusals(platform: Platform) -> None:
    organiser, alice, bob, carol = await guests(platform, 4)
    entry = T.EntryConditions(invitation_required=True)
    t = await create(organiser, format=T.TOURNAMENT_FORMAT_SWISS, rounds=3, entry=entry, invitation_code="club-2026")
    tid = t.tournament_id
    assert t.can_direct and t.invitation_code == "club-2026" and t.entry.invitation_required
    seen = await get(alice, tid)
    assert not seen.can_direct and seen.invitation_code == "" and seen.entry.invitation_required

    # The invitation code.
    assert (await refused(alice, "JoinTournament", T.JoinTournamentRequest(tournament_id=tid)))[:2] == (
        CODE.PERMISSION_DENIED,
        "BAD_INVITATION_CODE",
    )
    assert (await join(alice, tid, "club-2026")).player_count == 1
    bad_code = create_request(format=T.TOURNAMENT_FORMAT_SWISS, rounds=3, entry=entry, invitation_code="x")
    assert (await refused(organiser, "CreateTournament", bad_code))[:2] == (
        CODE.INVALID_ARGUMENT,
        "BAD_INVITATION_CODE",
    )

    # Only directors direct; the mask names what changes, and game and format never do.
    def update(mask: list[str], **settings: Any) -> T.UpdateTournamentRequest:
        request = T.UpdateTournamentRequest(tournament_id=tid, settings=T.CreateTournamentRequest(**settings))
        request.update_mask.paths.extend(mask)
        return request

    assert (await refused(alice, "UpdateTournament", update(["name"], name="mine")))[:2] == (
        CODE.PERMISSION_DENIED,
        "NOT_ORGANISER",
    )
    for mask in ([], ["game"], ["format"], ["no_such_field"]):
        assert (await refused(organiser, "UpdateTournament", update(mask, game="plus4")))[:2] == (
            CODE.INVALID_ARGUMENT,
            "BAD_UPDATE_MASK",
        ), mask
    assert (await refused(organiser, "UpdateTournament", update(["capacity"], capacity=1)))[1] == "BAD_CAPACITY"
    past = update(["round_start_times"])
    past.settings.round_start_times.add().FromMilliseconds(int(time.time() * 1000) - 60_000)
    assert (await refused(organiser, "UpdateTournament", past))[:2] == (CODE.INVALID_ARGUMENT, "BAD_ROUND_TIMES")

    # A registration window that opens later: REGISTRATION_NOT_OPEN with the time.
    opens = int(time.time() * 1000) + 3_600_000
    later = update(["name", "registration_opens_at", "entry"], name="club night (open)")
    later.settings.registration_opens_at.FromMilliseconds(opens)
    changed = await organiser.call("tournaments", "UpdateTournament", later)
    assert changed.tournament.name == "club night (open)"
    assert changed.tournament.registration_opens_at.ToMilliseconds() == opens
    assert not changed.tournament.entry.invitation_required and changed.tournament.invitation_code == ""
    code, reason, metadata = await refused(bob, "JoinTournament", T.JoinTournamentRequest(tournament_id=tid))
    assert (code, reason) == (CODE.FAILED_PRECONDITION, "REGISTRATION_NOT_OPEN") and metadata["opens_at"].startswith(
        time.strftime("%Y-%m-%dT", time.gmtime(opens / 1000))
    )
    # Entry conditions in the game's leaderboard (a guest has a provisional 1500 and no games).
    await organiser.call(
        "tournaments",
        "UpdateTournament",
        update(["registration_opens_at", "entry"], entry=T.EntryConditions(min_rating=1600)),
    )
    code, reason, metadata = await refused(bob, "JoinTournament", T.JoinTournamentRequest(tournament_id=tid))
    assert (code, reason, metadata.get("min_rating")) == (CODE.FAILED_PRECONDITION, "RATING_TOO_LOW", "1600")
    await organiser.call(
        "tournaments", "UpdateTournament", update(["entry"], entry=T.EntryConditions(min_rated_games=5))
    )
    code, reason, metadata = await refused(bob, "JoinTournament", T.JoinTournamentRequest(tournament_id=tid))
    assert (code, reason, metadata.get("min_rated_games")) == (CODE.FAILED_PRECONDITION, "TOO_FEW_RATED_GAMES", "5")
    await organiser.call("tournaments", "UpdateTournament", update(["entry"]))
    await join(bob, tid)
    await join(carol, tid)

    # Late joining is for Swiss; round times at most one per round after the first.
    rr = create_request(format=T.TOURNAMENT_FORMAT_ROUND_ROBIN, late_join_until_round=2)
    assert (await refused(organiser, "CreateTournament", rr))[:2] == (CODE.INVALID_ARGUMENT, "BAD_LATE_JOIN")
    too_many = create_request(format=T.TOURNAMENT_FORMAT_SWISS, rounds=2)
    for hours in (1, 2):
        too_many.round_start_times.add().FromMilliseconds(int(time.time() * 1000) + hours * 3_600_000)
    assert (await refused(organiser, "CreateTournament", too_many))[1] == "BAD_ROUND_TIMES"

    # Removing before the start: the registration goes; a ban keeps them out for good.
    removed = await organiser.call(
        "tournaments",
        "RemovePlayer",
        T.RemovePlayerRequest(tournament_id=tid, player_id=carol.player.player_id, ban=True, reason="spam"),
    )
    assert carol.player.player_id not in [p.player_id for p in removed.tournament.players]
    assert (await refused(carol, "JoinTournament", T.JoinTournamentRequest(tournament_id=tid)))[:2] == (
        CODE.PERMISSION_DENIED,
        "BANNED_FROM_TOURNAMENT",
    )
    missing = T.RemovePlayerRequest(tournament_id=tid, player_id=carol.player.player_id)
    assert (await refused(organiser, "RemovePlayer", missing))[1] == "NOT_ENTERED"
    long_reason = T.RemovePlayerRequest(tournament_id=tid, player_id=bob.player.player_id, reason="x" * 201)
    assert (await refused(organiser, "RemovePlayer", long_reason))[:2] == (CODE.INVALID_ARGUMENT, "BAD_REASON")
    for method, request in (
        ("PauseTournament", T.PauseTournamentRequest(tournament_id=tid)),
        ("StartNextRound", T.StartNextRoundRequest(tournament_id=tid)),
        ("TerminateTournament", T.TerminateTournamentRequest(tournament_id=tid)),
    ):
        assert (await refused(organiser, method, request))[:2] == (CODE.FAILED_PRECONDITION, "NOT_RUNNING"), method

    # Every director's action is in the audit, with the reason; watchers saw the updates.
    entries = await audit(organiser, tid)
    assert [e.action for e in entries] == ["UpdateTournament"] * 4 + ["RemovePlayer"]
    assert entries[0].detail == "changed entry, name, registration_opens_at"
    assert entries[-1].reason == "spam" and entries[-1].director.player_id == organiser.player.player_id
    assert (await refused(alice, "ListTournamentAudit", T.ListTournamentAuditRequest(tournament_id=tid)))[1] == (
        "NOT_ORGANISER"
    )
    events = await stored_events(alice, tid)
    assert kinds(events).count("updated") == 4
    left = [e.player_left for e in events if e.WhichOneof("kind") == "player_left"]
    assert [(x.by_director, x.banned, x.reason) for x in left] == [(True, True, "spam")]
    for client in (organiser, alice, bob, carol):
        await client.close()


async def test_announcements_reach_every_participant_once(platform: Platform) -> None:
    organiser, alice, bob = await guests(platform, 3)
    tid = (await create(organiser, format=T.TOURNAMENT_FORMAT_SWISS, rounds=2)).tournament_id
    await join(alice, tid)
    await join(bob, tid)

    def say(text: str, request_id: str) -> T.AnnounceRequest:
        return T.AnnounceRequest(tournament_id=tid, text=text, request_id=request_id)

    assert (await refused(organiser, "Announce", say("   ", rid())))[:2] == (CODE.INVALID_ARGUMENT, "BAD_ANNOUNCEMENT")
    assert (await refused(alice, "Announce", say("hi", rid())))[1] == "NOT_ORGANISER"
    first = rid()
    for number in range(10):
        got = await organiser.call(
            "tournaments", "Announce", say(f"board {number} moved", first if not number else rid())
        )
        assert got.recipients == 2
    again = await organiser.call("tournaments", "Announce", say("board 0 moved", first))
    assert again.recipients == 2
    code, reason, metadata = await refused(organiser, "Announce", say("one too many", rid()))
    assert (code, reason) == (CODE.RESOURCE_EXHAUSTED, "ANNOUNCEMENTS_TOO_FAST")
    assert 0 < int(metadata["retry_after_ms"]) <= 3_600_000
    events = [e for e in await stored_events(alice, tid) if e.WhichOneof("kind") == "announcement"]
    assert [e.announcement.text for e in events] == [f"board {n} moved" for n in range(10)]
    assert events[0].announcement.director.player_id == organiser.player.player_id
    for player in (alice, bob):
        got = [n for n in await notices(player) if n.kind == notices_pb2.NOTIFICATION_KIND_ANNOUNCEMENT]
        assert sorted(n.text for n in got) == sorted(f"board {n} moved" for n in range(10))
        assert {n.tournament_id for n in got} == {tid} and got[0].player.player_id == organiser.player.player_id
    assert [e.action for e in await audit(organiser, tid)] == ["Announce"] * 10
    for client in (organiser, alice, bob):
        await client.close()


async def test_round_robin_pause_remove_correct_and_export(platform: Platform) -> None:
    organiser, watcher, *players = await guests(platform, 6)
    tid = (await create(organiser, format=T.TOURNAMENT_FORMAT_ROUND_ROBIN)).tournament_id
    for p in players:
        await join(p, tid)
    events: list[T.TournamentEvent] = []
    watching = asyncio.create_task(watch_until_over(watcher, tid, events))
    bots = Bots(players, seed=20)
    try:
        await organiser.call("tournaments", "StartTournament", T.StartTournamentRequest(tournament_id=tid))
        paused = await organiser.call("tournaments", "PauseTournament", T.PauseTournamentRequest(tournament_id=tid))
        assert paused.tournament.paused and paused.tournament.current_round == 1
        # Round 1 ends; round 2 waits for the resume (announced once, with no time).
        await until(lambda: _has(events, "round_scheduled"))
        scheduled = next(e.round_scheduled for e in events if e.WhichOneof("kind") == "round_scheduled")
        assert scheduled.round == 2 and not scheduled.HasField("starts_at")
        await asyncio.sleep(1.5)  # several sweeps
        assert (await get(organiser, tid)).current_round == 1
        resumed = await organiser.call("tournaments", "ResumeTournament", T.ResumeTournamentRequest(tournament_id=tid))
        assert not resumed.tournament.paused and resumed.tournament.current_round == 2

        # Withdraw a player in round 2: their running game resigned, round 3's forfeited.
        gone = players[0].player.player_id
        await organiser.call(
            "tournaments",
            "RemovePlayer",
            T.RemovePlayerRequest(tournament_id=tid, player_id=gone, reason="left the club"),
        )
        await asyncio.wait_for(watching, 200)
    finally:
        await bots.close()
    rounds = [
        (await organiser.call("tournaments", "GetRound", T.GetRoundRequest(tournament_id=tid, round=n))).round
        for n in (1, 2, 3)
    ]
    theirs = [g for r in rounds for g in r.games if gone in [p.player_id for p in g.players]]
    assert len(theirs) == 3
    assert theirs[1].state == T.TOURNAMENT_GAME_STATE_FINISHED and theirs[1].game_id
    assert theirs[2].state == T.TOURNAMENT_GAME_STATE_FORFEITED and not theirs[2].game_id
    seat = [p.player_id for p in theirs[2].players].index(gone)
    assert theirs[2].absent[seat] and theirs[2].points[seat] == 0 and theirs[2].points[1 - seat] == 1
    standings = await organiser.call("tournaments", "GetStandings", T.GetStandingsRequest(tournament_id=tid))
    assert standings.final and next(s for s in standings.standings if s.player.player_id == gone).withdrawn

    # Each player heard of each round they played.
    for p in players[1:]:
        started = [n for n in await notices(p) if n.kind == notices_pb2.NOTIFICATION_KIND_ROUND_STARTED]
        assert sorted(n.round for n in started) == [1, 2, 3]
        assert {n.round for n in started if n.game_id} >= {1, 2}  # round 3 may be a forfeit: no game

    # A correction: round 1, board 1 decided the other way round.
    game = rounds[0].games[0]
    flipped = [2, 1] if list(game.ranks) == [1, 2] else [1, 2]
    correct = T.CorrectResultRequest(tournament_id=tid, round=1, board=1, ranks=flipped, reason="illegal move seen")
    fixed = await organiser.call("tournaments", "CorrectResult", correct)
    assert fixed.game.state == T.TOURNAMENT_GAME_STATE_CORRECTED and list(fixed.game.ranks) == flipped
    assert fixed.game.correction_reason == "illegal move seen"
    winner = game.players[flipped.index(1)].player_id
    before = {s.player.player_id: s.points for s in standings.standings}
    after = await organiser.call("tournaments", "GetStandings", T.GetStandingsRequest(tournament_id=tid))
    assert {s.player.player_id: s.points for s in after.standings}[winner] > before[winner]
    assert [s.player.player_id for s in after.standings] == [s.player.player_id for s in fixed.standings]
    again = await organiser.call("tournaments", "CorrectResult", correct)  # the same again: nothing new
    assert list(again.game.ranks) == flipped
    assert [e.action for e in await audit(organiser, tid)] == [
        "PauseTournament",
        "ResumeTournament",
        "RemovePlayer",
        "CorrectResult",
    ]
    corrected = [e for e in await stored_events(watcher, tid) if e.WhichOneof("kind") == "result_corrected"]
    assert len(corrected) == 1 and corrected[0].result_corrected.reason == "illegal move seen"
    assert corrected[0].result_corrected.game.state == T.TOURNAMENT_GAME_STATE_CORRECTED
    seated = next(c for c in players if c.player.player_id == winner)
    told = [n for n in await notices(seated) if n.kind == notices_pb2.NOTIFICATION_KIND_RESULT_CORRECTED]
    assert len(told) == 1 and told[0].text == "illegal move seen" and told[0].round == 1
    for bad, reason in (([1], "BAD_CORRECTION"), ([1, 2], "")):
        request = T.CorrectResultRequest(tournament_id=tid, round=1, board=1, ranks=bad, reason=reason)
        assert (await refused(organiser, "CorrectResult", request))[:2] == (CODE.INVALID_ARGUMENT, "BAD_CORRECTION")
    nowhere = T.CorrectResultRequest(tournament_id=tid, round=9, board=1, ranks=[1, 2], reason="x")
    assert (await refused(organiser, "CorrectResult", nowhere))[1] == "NO_SUCH_ROUND"

    # Games page by page; the export matches the standings and the rounds.
    listed: list[T.TournamentGame] = []
    token = ""
    while True:
        page = await watcher.call(
            "tournaments",
            "ListTournamentGames",
            T.ListTournamentGamesRequest(tournament_id=tid, page_size=4, page_token=token),
        )
        listed.extend(page.games)
        token = page.next_page_token
        if not token:
            break
    assert [(g.round, g.board) for g in listed] == [(r.number, g.board) for r in rounds for g in r.games]
    mine = await watcher.call(
        "tournaments", "ListTournamentGames", T.ListTournamentGamesRequest(tournament_id=tid, player_id=gone, round=3)
    )
    assert [g.state for g in mine.games] == [T.TOURNAMENT_GAME_STATE_FORFEITED]
    await check_export(watcher, tid, after, listed)
    for client in (organiser, watcher, *players):
        await client.close()


def _has(events: list[T.TournamentEvent], kind: str) -> Any:
    async def check() -> bool:
        return kind in kinds(events)

    return check()


async def export(client: Client, tid: str, fmt: T.ExportFormat.ValueType) -> dict[str, bytes]:
    client._connect()
    files: dict[str, bytes] = {}
    lasts: list[str] = []
    call = client.tournaments.ExportTournament(
        T.ExportTournamentRequest(tournament_id=tid, format=fmt), metadata=client.md, timeout=30
    )
    async for chunk in call:
        files[chunk.file_name] = files.get(chunk.file_name, b"") + chunk.data
        if chunk.last:
            lasts.append(chunk.file_name)
    assert lasts == list(files)
    return files


async def check_export(
    client: Client, tid: str, standings: T.GetStandingsResponse, games: list[T.TournamentGame]
) -> None:
    as_csv = await export(client, tid, T.EXPORT_FORMAT_CSV)
    assert list(as_csv) == [f"{tid}-standings.csv", f"{tid}-pairings.csv", f"{tid}-games.csv"]
    rows = list(csv.DictReader(io.StringIO(as_csv[f"{tid}-standings.csv"].decode())))
    assert [(r["rank"], r["player_id"], float(r["points"]), float(r["buchholz"]), r["withdrawn"]) for r in rows] == [
        (str(s.rank), s.player.player_id, s.points, s.buchholz, "1" if s.withdrawn else "0")
        for s in standings.standings
    ]
    pairings = list(csv.DictReader(io.StringIO(as_csv[f"{tid}-pairings.csv"].decode())))
    assert len(pairings) == sum(len(g.players) for g in games)
    assert {r["state"] for r in pairings} >= {"finished", "forfeited", "corrected"}
    played = list(csv.DictReader(io.StringIO(as_csv[f"{tid}-games.csv"].decode())))
    with_records = [r for r in played if r["actions"]]
    assert {r["game_id"] for r in played} == {g.game_id for g in games if g.game_id}
    assert all(json.loads(r["actions"]) for r in with_records) and with_records
    as_json = await export(client, tid, T.EXPORT_FORMAT_JSON)
    table = json.loads(as_json[f"{tid}-standings.json"])
    assert [(r["player"]["player_id"], r.get("points", 0)) for r in table] == [
        (s.player.player_id, s.points) for s in standings.standings
    ]
    records = json.loads(as_json[f"{tid}-games.json"])
    assert all(r["record"]["game_id"] == r["game_id"] for r in records if r["record"])
    bad = T.ExportTournamentRequest(tournament_id=tid)
    call = client.tournaments.ExportTournament(bad, metadata=client.md, timeout=10)
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        async for _ in call:
            pass
    assert info_of(caught.value)[:2] == (CODE.INVALID_ARGUMENT, "BAD_EXPORT")


async def test_scheduled_round_times_and_manual_rounds(platform: Platform) -> None:
    organiser, *players = await guests(platform, 9)
    planned_ms = int(time.time() * 1000) + 25_000
    scheduled = create_request(name="planned", format=T.TOURNAMENT_FORMAT_SWISS, rounds=2)
    scheduled.round_start_times.add().FromMilliseconds(planned_ms)
    tid = (await organiser.call("tournaments", "CreateTournament", scheduled)).tournament.tournament_id
    manual = (
        await create(organiser, name="by hand", format=T.TOURNAMENT_FORMAT_SWISS, rounds=2, manual_rounds=True)
    ).tournament_id
    for p in players[:4]:
        await join(p, tid)
    for p in players[4:]:
        await join(p, manual)
    bots = Bots(players, seed=40)
    try:
        started = await organiser.call("tournaments", "StartTournament", T.StartTournamentRequest(tournament_id=tid))
        assert started.tournament.next_round_at.ToMilliseconds() == planned_ms
        await organiser.call("tournaments", "StartTournament", T.StartTournamentRequest(tournament_id=manual))
        code, reason, _ = await refused(organiser, "StartNextRound", T.StartNextRoundRequest(tournament_id=manual))
        assert (code, reason) == (CODE.FAILED_PRECONDITION, "ROUND_IN_PROGRESS")

        async def waiting(which: str) -> list[T.TournamentEvent]:
            return [e for e in await stored_events(organiser, which) if e.WhichOneof("kind") == "round_scheduled"]

        # By hand: round 2 waits for the director (told once, with no time), then starts at once.
        held = await until(lambda: waiting(manual))
        assert held[0].round_scheduled.round == 2 and not held[0].round_scheduled.HasField("starts_at")
        await asyncio.sleep(1.0)
        assert (await get(organiser, manual)).current_round == 1
        assert (await refused(players[4], "StartNextRound", T.StartNextRoundRequest(tournament_id=manual)))[1] == (
            "NOT_ORGANISER"
        )
        second = await organiser.call("tournaments", "StartNextRound", T.StartNextRoundRequest(tournament_id=manual))
        assert second.tournament.current_round == 2 and second.round.number == 2 and len(second.round.games) == 2

        # Planned: round 2 starts at its time, not when round 1 ends.
        held = await until(lambda: waiting(tid))
        assert held[0].round_scheduled.starts_at.ToMilliseconds() == planned_ms
        assert time.time() * 1000 < planned_ms, "round 1 took longer than planned: the test proves nothing"
        assert (await get(organiser, tid)).current_round == 1
        events: list[T.TournamentEvent] = []
        await asyncio.wait_for(watch_until_over(organiser, tid, events), 120)
        round2 = next(
            e for e in events if e.WhichOneof("kind") == "round_started" and e.round_started.round.number == 2
        )
        assert round2.at.ToMilliseconds() >= planned_ms
        finished: list[T.TournamentEvent] = []
        await asyncio.wait_for(watch_until_over(organiser, manual, finished), 120)
        code, reason, _ = await refused(organiser, "StartNextRound", T.StartNextRoundRequest(tournament_id=manual))
        assert (code, reason) == (CODE.FAILED_PRECONDITION, "NO_NEXT_ROUND")
    finally:
        await bots.close()
    assert [e.action for e in await audit(organiser, manual)] == ["StartNextRound"]
    for client in (organiser, *players):
        await client.close()


async def test_terminate_mid_round(platform: Platform) -> None:
    organiser, watcher, *players = await guests(platform, 6)
    tid = (await create(organiser, format=T.TOURNAMENT_FORMAT_SWISS, rounds=3, per_move_ms=60_000)).tournament_id
    for p in players:
        await join(p, tid)
    await organiser.call("tournaments", "StartTournament", T.StartTournamentRequest(tournament_id=tid))
    # Nobody moves. A game being played decided by the director: ended first, then decided.
    decide = T.CorrectResultRequest(tournament_id=tid, round=1, board=2, ranks=[1, 2], reason="opponent absent")
    decided = await organiser.call("tournaments", "CorrectResult", decide)
    assert decided.game.state == T.TOURNAMENT_GAME_STATE_CORRECTED and decided.game.points[0] == 1
    over = await watcher.call("games", "GetGame", play_pb2.GetGameRequest(game_id=decided.game.game_id))
    assert over.summary.status.over
    # Round 1's other game is being played when the director ends the tournament.
    ended = await organiser.call(
        "tournaments", "TerminateTournament", T.TerminateTournamentRequest(tournament_id=tid, reason="fire alarm")
    )
    assert ended.tournament.state == T.TOURNAMENT_STATE_FINISHED and ended.tournament.terminated
    again = await organiser.call("tournaments", "TerminateTournament", T.TerminateTournamentRequest(tournament_id=tid))
    assert again.tournament.terminated
    got = await watcher.call("tournaments", "GetRound", T.GetRoundRequest(tournament_id=tid, round=1))
    assert [g.state for g in got.round.games] == [T.TOURNAMENT_GAME_STATE_ABORTED, T.TOURNAMENT_GAME_STATE_CORRECTED]
    for g in got.round.games:
        game = await watcher.call("games", "GetGame", play_pb2.GetGameRequest(game_id=g.game_id))
        assert game.summary.status.over
    standings = await watcher.call("tournaments", "GetStandings", T.GetStandingsRequest(tournament_id=tid))
    assert standings.final and sorted(s.points for s in standings.standings) == [0.0, 0.0, 0.0, 1.0]
    assert sum(s.games for s in standings.standings) == 2  # the corrected game only
    events = await stored_events(watcher, tid)
    assert kinds(events).count("finished") == 1
    final = events[-1].finished
    assert final.terminated and final.reason == "fire alarm" and len(final.standings) == 4
    assert [(e.action, e.reason) for e in await audit(organiser, tid)] == [
        ("CorrectResult", "opponent absent"),
        ("TerminateTournament", "fire alarm"),
    ]
    for client in (organiser, watcher, *players):
        await client.close()


async def test_late_join_in_swiss(platform: Platform) -> None:
    organiser, *players = await guests(platform, 7)
    first, late, too_late = players[:4], players[4], players[5]
    tid = (
        await create(organiser, format=T.TOURNAMENT_FORMAT_SWISS, rounds=3, late_join_until_round=2, manual_rounds=True)
    ).tournament_id
    for p in first:
        await join(p, tid)
    bots = Bots(first, seed=60)
    try:
        await organiser.call("tournaments", "StartTournament", T.StartTournamentRequest(tournament_id=tid))
        joined = await join(late, tid)  # round 1 is being played: in time for round 2
        assert late.player.player_id in [p.player_id for p in joined.players] and joined.player_count == 5
        assert (await join(late, tid)).player_count == 5  # again: the same
        bots.add(late, seed=65)
        await until(lambda: _round_done(organiser, tid, 1))
        second = await organiser.call("tournaments", "StartNextRound", T.StartNextRoundRequest(tournament_id=tid))
        seated = [p.player_id for g in second.round.games for p in g.players]
        assert late.player.player_id in seated and len(seated) == 5
        code, reason, _ = await refused(too_late, "JoinTournament", T.JoinTournamentRequest(tournament_id=tid))
        assert (code, reason) == (CODE.FAILED_PRECONDITION, "NOT_REGISTERING")
        await until(lambda: _round_done(organiser, tid, 2))
    finally:
        await bots.close()
    standings = await organiser.call("tournaments", "GetStandings", T.GetStandingsRequest(tournament_id=tid))
    row = next(s for s in standings.standings if s.player.player_id == late.player.player_id)
    assert row.games + row.byes == 1 and row.seed == 5

    # After the start: only some fields change, rounds not below those played.
    def update(mask: list[str], **settings: Any) -> T.UpdateTournamentRequest:
        request = T.UpdateTournamentRequest(tournament_id=tid, settings=T.CreateTournamentRequest(**settings))
        request.update_mask.paths.extend(mask)
        return request

    assert (await refused(organiser, "UpdateTournament", update(["capacity"], capacity=8)))[:2] == (
        CODE.INVALID_ARGUMENT,
        "BAD_UPDATE_MASK",
    )
    fewer = update(["rounds", "late_join_until_round"], rounds=1)
    assert (await refused(organiser, "UpdateTournament", fewer))[1] == "BAD_ROUNDS"
    more = await organiser.call("tournaments", "UpdateTournament", update(["name", "rounds"], name="longer", rounds=4))
    assert more.tournament.rounds == 4 and more.tournament.name == "longer" and more.tournament.current_round == 2
    # Refusals of a running tournament's director.
    stranger = T.RemovePlayerRequest(tournament_id=tid, player_id=too_late.player.player_id)
    assert (await refused(organiser, "RemovePlayer", stranger))[:2] == (CODE.FAILED_PRECONDITION, "NOT_ENTERED")
    bye = next(g for g in second.round.games if g.state == T.TOURNAMENT_GAME_STATE_BYE)
    on_bye = T.CorrectResultRequest(tournament_id=tid, round=2, board=bye.board, ranks=[1], reason="x")
    assert (await refused(organiser, "CorrectResult", on_bye))[:2] == (
        CODE.FAILED_PRECONDITION,
        "GAME_NOT_CORRECTABLE",
    )
    nowhere = T.CorrectResultRequest(tournament_id=tid, round=2, board=9, ranks=[1, 2], reason="x")
    assert (await refused(organiser, "CorrectResult", nowhere))[1] == "NO_SUCH_GAME"
    paging = T.ListTournamentGamesRequest(tournament_id=tid, page_size=-1)
    assert (await refused(organiser, "ListTournamentGames", paging))[:2] == (CODE.INVALID_ARGUMENT, "BAD_PAGE_SIZE")
    for _ in range(2):  # idempotent
        paused = await organiser.call("tournaments", "PauseTournament", T.PauseTournamentRequest(tournament_id=tid))
        assert paused.tournament.paused
    assert [e.action for e in await audit(organiser, tid)] == ["StartNextRound", "UpdateTournament", "PauseTournament"]
    await organiser.call("tournaments", "TerminateTournament", T.TerminateTournamentRequest(tournament_id=tid))
    for client in (organiser, *players):
        await client.close()


async def _round_done(client: Client, tid: str, number: int) -> bool:
    got = await client.call("tournaments", "GetRound", T.GetRoundRequest(tournament_id=tid, round=number))
    return bool(got.round.finished)


async def test_round_starting_soon_once_and_correspondence_rounds(platform: Platform) -> None:
    organiser, a, b, c, d = await guests(platform, 5)
    now = int(time.time() * 1000)
    # A tournament that starts by itself in 30 minutes: its players hear of it (an hour ahead).
    starts = create_request(name="tonight", format=T.TOURNAMENT_FORMAT_SWISS, rounds=2)
    starts.starts_at.FromMilliseconds(now + 30 * 60_000)
    first = (await organiser.call("tournaments", "CreateTournament", starts)).tournament.tournament_id
    await join(a, first)
    await join(b, first)
    # A running one whose round 2 is planned 10 minutes after the start: 15 minutes ahead.
    planned = create_request(name="planned", format=T.TOURNAMENT_FORMAT_SWISS, rounds=2, per_move_ms=60_000)
    planned.round_start_times.add().FromMilliseconds(now + 10 * 60_000)
    second = (await organiser.call("tournaments", "CreateTournament", planned)).tournament.tournament_id
    await join(c, second)
    await join(d, second)
    await organiser.call("tournaments", "StartTournament", T.StartTournamentRequest(tournament_id=second))

    async def soon(client: Client) -> list[notices_pb2.Notification]:
        return [n for n in await notices(client) if n.kind == notices_pb2.NOTIFICATION_KIND_ROUND_STARTING_SOON]

    for client, tid, number, at in (
        (a, first, 1, now + 30 * 60_000),
        (b, first, 1, now + 30 * 60_000),
        (c, second, 2, now + 10 * 60_000),
        (d, second, 2, now + 10 * 60_000),
    ):
        got = await until(lambda client=client: soon(client), timeout_s=60)
        assert [(n.tournament_id, n.round, n.starts_at.ToMilliseconds()) for n in got] == [(tid, number, at)]
    await asyncio.sleep(1.5)  # several sweeps later: still once
    assert len(await soon(b)) == 1 and len(await soon(c)) == 1 and len(await soon(a)) == 1
    # A gateway killed and started again (its sweep starts over): still once.
    for gateway in platform.gateways:
        gateway.kill()
    platform.gateways.clear()
    platform.start_gateways(2)
    await asyncio.sleep(2.0)
    assert [len(await soon(x)) for x in (a, b, c, d)] == [1, 1, 1, 1]
    started = [n for n in await notices(c) if n.kind == notices_pb2.NOTIFICATION_KIND_ROUND_STARTED]
    assert [(n.round, bool(n.game_id)) for n in started] == [(1, True)]
    await organiser.call("tournaments", "CancelTournament", T.CancelTournamentRequest(tournament_id=first))
    await organiser.call("tournaments", "TerminateTournament", T.TerminateTournamentRequest(tournament_id=second))

    # Correspondence: days a move (the shared lobby check), shown both ways.
    days = create_request(name="by post", format=T.TOURNAMENT_FORMAT_SWISS, rounds=2)
    days.time_control.Clear()
    days.time_control.days_per_move = 3
    made = (await organiser.call("tournaments", "CreateTournament", days)).tournament
    assert made.time_control.days_per_move == 3 and made.time_control.per_move.seconds == 3 * 86_400
    days.request_id = rid()
    days.time_control.days_per_move = 4
    assert (await refused(organiser, "CreateTournament", days))[:2] == (CODE.INVALID_ARGUMENT, "BAD_DAYS_PER_MOVE")
    for client in (organiser, a, b, c, d):
        await client.close()


async def test_organiser_and_admin_roles_direct_every_tournament(platform: Platform) -> None:
    creator = (await guests(platform, 1))[0]
    staff = []
    for role in ("organiser", "admin", "moderator"):
        client = Client(platform.addresses, 0)
        client._connect()
        name = f"d{role[:3]}{rid()[:10]}"
        made = await client.accounts.Register(play_pb2.RegisterRequest(username=name, password="password-123"))
        client.session = made.session
        await grant(platform.redis_url, name, role)
        staff.append(client)
    organiser, admin, moderator = staff
    tid = (await create(creator, format=T.TOURNAMENT_FORMAT_SWISS, rounds=2)).tournament_id

    async def directs(client: Client) -> bool:
        return (await get(client, tid)).can_direct

    await until(lambda: directs(organiser), timeout_s=20)  # the role reaches the gateway's tables
    await until(lambda: directs(admin), timeout_s=20)
    rename = T.UpdateTournamentRequest(tournament_id=tid, settings=T.CreateTournamentRequest(name="renamed"))
    rename.update_mask.paths.append("name")
    assert (await organiser.call("tournaments", "UpdateTournament", rename)).tournament.name == "renamed"
    assert (await admin.call("tournaments", "UpdateTournament", rename)).tournament.can_direct
    assert not await directs(moderator)
    assert (await refused(moderator, "UpdateTournament", rename))[:2] == (CODE.PERMISSION_DENIED, "NOT_ORGANISER")
    entries = await audit(creator, tid)
    assert [e.director.player_id for e in entries] == [organiser.player.player_id, admin.player.player_id]
    for client in (creator, *staff):
        await client.close()
