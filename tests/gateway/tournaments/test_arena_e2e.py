"""Arenas end to end through the public API: real Redis, two gateways, the Connect Four rules service
and bots playing random legal moves. A short arena (TAFEL_ARENA_MIN_S lets it last seconds) in which
players are paired again as they get free, one pauses and comes back, a gateway is killed and
replaced mid-arena, the end lets the games being played finish and count, and the standings are
checked against a recount from the games' records."""

from __future__ import annotations

import asyncio
import itertools
import time
from collections import defaultdict
from collections.abc import AsyncIterator, Iterator

import grpc
import pytest
from redis.asyncio import Redis
from tafel.play.v1 import play_pb2, tournaments_pb2

from kit.errors import reason_of
from kit.redis.client import redis_client
from kit.redis.keys import meta_pattern, record_key
from kit.redis.keys import tournament_key as t_key
from kit.redis.replies import text
from tests.gateway.harness import spawn_gateway
from tests.gateway.tournaments.e2e import EXTRA_ENV, Bot, Client, Platform, rid, watch_until_over
from tests.keyspace import emptied

pytestmark = pytest.mark.timeout(240)
DB = "arena"
T = tournaments_pb2
ARENA_ENV = {**EXTRA_ENV, "TAFEL_ARENA_MIN_S": "1", "TAFEL_ARENA_WAVE_S": "0.3", "TAFEL_ARENA_STANDINGS_S": "0"}


def gateway(platform: Platform, index: int) -> None:
    proc = spawn_gateway(platform.redis_url, platform.routes(), name=f"arena-gateway-{index}", **ARENA_ENV)
    if index < len(platform.gateways):
        platform.gateways[index] = proc
    else:
        platform.gateways.append(proc)


@pytest.fixture(scope="module")
def platform(redis_url: str) -> Iterator[Platform]:
    made = Platform(emptied(redis_url, DB), ("connect4",))
    try:
        made.start_rules()
        gateway(made, 0)
        gateway(made, 1)
        yield made
    finally:
        made.stop()


@pytest.fixture
async def db(platform: Platform) -> AsyncIterator[Redis]:
    client = redis_client(platform.redis_url)
    try:
        yield client
    finally:
        await client.aclose()


async def create_arena(organiser: Client, seconds: float, per_move_s: float = 5.0) -> T.Tournament:
    request = T.CreateTournamentRequest(
        request_id=rid(), name="e2e arena", game="connect4", format=T.TOURNAMENT_FORMAT_ARENA, capacity=16
    )
    request.time_control.per_move.FromMilliseconds(int(per_move_s * 1000))
    request.arena_duration.FromMilliseconds(int(seconds * 1000))
    created = await organiser.call("tournaments", "CreateTournament", request)
    tournament: T.Tournament = created.tournament
    return tournament


def recount(games: list[T.TournamentGame], outcomes: dict[str, list[int]]) -> dict[str, dict[str, int]]:
    """Points, streaks and results from the records alone, replaying the arena's rules."""
    tally: dict[str, dict[str, int]] = defaultdict(lambda: dict(points=0, streak=0, games=0, wins=0, draws=0))
    for g in sorted(games, key=lambda g: g.board):
        ranks = outcomes[g.game_id]
        for seat, p in enumerate(g.players):
            t = tally[p.player_id]
            mine, theirs = ranks[seat], ranks[1 - seat]
            base = 2 if mine < theirs else (1 if mine == theirs else 0)
            t["points"] += base * (2 if t["streak"] >= 2 else 1)
            t["streak"] = t["streak"] + 1 if mine < theirs else 0
            t["games"] += 1
            t["wins"] += mine < theirs
            t["draws"] += mine == theirs
    return tally


async def test_arena_pairs_as_players_get_free_pause_restart_and_the_end(platform: Platform, db: Redis) -> None:
    organiser = await Client(platform.addresses, 0).sign_in()
    players = [await Client(platform.addresses, i).sign_in() for i in range(6)]
    seconds = 16.0
    tournament = await create_arena(organiser, seconds)
    tid = tournament.tournament_id
    assert tournament.format == T.TOURNAMENT_FORMAT_ARENA and tournament.arena_duration.ToMilliseconds() == 16_000
    for p in players:
        await p.call("tournaments", "JoinTournament", T.JoinTournamentRequest(tournament_id=tid))
    stop = asyncio.Event()
    bots = [Bot(p, seed=40 + i, think_s=0.08) for i, p in enumerate(players)]
    running = [asyncio.create_task(b.run(stop)) for b in bots]
    events: list[T.TournamentEvent] = []
    watching = asyncio.create_task(watch_until_over(organiser, tid, events))
    started = await organiser.call("tournaments", "StartTournament", T.StartTournamentRequest(tournament_id=tid))
    ends_ms = started.tournament.ends_at.ToMilliseconds()
    assert started.tournament.current_round == 0
    assert ends_ms == started.tournament.started_at.ToMilliseconds() + 16_000
    pauser = players[5]
    me = pauser.player.player_id
    try:
        await asyncio.sleep(4)
        paused = await pauser.call(
            "tournaments", "PauseArenaPlay", T.PauseArenaPlayRequest(tournament_id=tid, paused=True)
        )
        paused_at = time.time() * 1000
        assert paused.tournament.tournament_id == tid
        row = next(
            s
            for s in (
                await organiser.call("tournaments", "GetStandings", T.GetStandingsRequest(tournament_id=tid))
            ).standings
            if s.player.player_id == me
        )
        assert row.paused
        # A gateway killed and replaced mid-arena: the other one and then the new one go on.
        await asyncio.sleep(1.5)
        platform.gateways[0].kill()
        await asyncio.sleep(1.0)
        gateway(platform, 0)
        await asyncio.sleep(1.5)
        back_sent = time.time() * 1000  # a wave may pair them before the answer arrives
        back = await pauser.call(
            "tournaments", "PauseArenaPlay", T.PauseArenaPlayRequest(tournament_id=tid, paused=False)
        )
        assert back.tournament.state == T.TOURNAMENT_STATE_RUNNING
        await asyncio.wait_for(watching, 150)
    finally:
        stop.set()
        await asyncio.gather(*running)

    info = await organiser.call("tournaments", "GetTournament", T.GetTournamentRequest(tournament_id=tid))
    assert info.tournament.state == T.TOURNAMENT_STATE_FINISHED
    rnd = (await organiser.call("tournaments", "GetRound", T.GetRoundRequest(tournament_id=tid))).round
    games = list(rnd.games)
    assert rnd.number == 0 and all(g.round == 0 for g in games)
    assert [g.board for g in games] == list(range(1, len(games) + 1))
    assert all(g.state == T.TOURNAMENT_GAME_STATE_FINISHED for g in games), "every game finished and counted"
    assert len(games) >= 9, f"players were paired again and again ({len(games)} games)"
    # Exactly these games exist (no second game for a pairing after the restart), each with a record.
    ids = [g.game_id for g in games]
    assert len(set(ids)) == len(ids) and all(i.startswith(f"{tid}-r0b") for i in ids)
    assert {text(x) for x in await db.hkeys(t_key(tid, "started"))} == set(ids)
    assert len([k async for k in db.scan_iter(match=meta_pattern(f"{tid}-*"))]) == len(ids)
    outcomes: dict[str, list[int]] = {}
    for g in games:
        raw = await db.get(record_key(g.game_id))
        assert isinstance(raw, bytes)
        record = play_pb2.GameRecord.FromString(raw)
        outcomes[g.game_id] = list(record.outcome.ranks)
        assert list(g.ranks) == outcomes[g.game_id]
    # Never the same opponent twice in a row; never two games at once.
    opponents: dict[str, list[str]] = defaultdict(list)
    for g in games:
        a, b = (p.player_id for p in g.players)
        opponents[a].append(b)
        opponents[b].append(a)
    for seq in opponents.values():
        assert all(x != y for x, y in itertools.pairwise(seq))
    starts = {
        e.arena_game_started.game.board: e.at.ToMilliseconds() for e in events if e.HasField("arena_game_started")
    }
    ends = {e.game_finished.game.board: e.at.ToMilliseconds() for e in events if e.HasField("game_finished")}
    assert set(starts) == set(ends) == {g.board for g in games}, "each game started and finished once in the events"
    for player_id in opponents:
        mine = sorted(g.board for g in games if player_id in {p.player_id for p in g.players})
        for earlier, later in itertools.pairwise(mine):
            assert starts[later] >= ends[earlier], "paired again only once free"
    # Paused: no game of theirs started while away, and one after they came back.
    theirs = [starts[g.board] for g in games if me in {p.player_id for p in g.players}]
    assert not [t for t in theirs if paused_at < t < back_sent], (
        paused_at,
        back_sent,
        [(g.board, starts[g.board], ends[g.board]) for g in games if me in {p.player_id for p in g.players}],
    )
    assert [t for t in theirs if t > back_sent], "paired again after coming back"
    # The end: nothing started after it; a game being played then finished and counted.
    assert max(starts.values()) < ends_ms
    assert [b for b, t in ends.items() if t > ends_ms and starts[b] < ends_ms], "a game in progress at the end"
    # Standings exact: points, streaks and results recounted from the records.
    final = await organiser.call("tournaments", "GetStandings", T.GetStandingsRequest(tournament_id=tid))
    assert final.final and len(final.standings) == 6
    expected = recount(games, outcomes)
    for row in final.standings:
        t = expected[row.player.player_id]
        assert (row.points, row.streak, row.games, row.wins, row.draws) == (
            t["points"],
            t["streak"],
            t["games"],
            t["wins"],
            t["draws"],
        ), row.player.username
    points = [s.points for s in final.standings]
    assert points == sorted(points, reverse=True)
    game_points: dict[str, float] = defaultdict(float)
    for g in games:
        for p, got in zip(g.players, g.points, strict=True):
            game_points[p.player_id] += got
    assert {s.player.player_id: s.points for s in final.standings} == {
        p: game_points.get(p, 0.0) for p in (s.player.player_id for s in final.standings)
    }
    print(
        f"\n{len(games)} games; {len(ends)} finished, in progress at the end: {sum(t > ends_ms for t in ends.values())}"
    )
    for proc in platform.gateways:
        troubles = [line for line in proc.output if "Traceback" in line or "arena" in line.lower()]
        assert not troubles, troubles[:5]
    kinds = [e.WhichOneof("kind") for e in events]
    assert kinds[-1] == "finished" and "standings_changed" in kinds
    for client in (organiser, *players):
        await client.close()


async def test_arena_refusals(platform: Platform) -> None:
    organiser = await Client(platform.addresses, 0).sign_in()
    outsider = await Client(platform.addresses, 1).sign_in()
    for ms in (0, 25 * 3_600_000):
        request = T.CreateTournamentRequest(
            request_id=rid(), name="bad arena", game="connect4", format=T.TOURNAMENT_FORMAT_ARENA
        )
        request.arena_duration.FromMilliseconds(ms)
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await organiser.call("tournaments", "CreateTournament", request)
        assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert reason_of(refused.value) == "BAD_ARENA_DURATION"
    swiss = await organiser.call(
        "tournaments",
        "CreateTournament",
        T.CreateTournamentRequest(
            request_id=rid(), name="swiss", game="connect4", format=T.TOURNAMENT_FORMAT_SWISS, rounds=1
        ),
    )
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await organiser.call(
            "tournaments", "PauseArenaPlay", T.PauseArenaPlayRequest(tournament_id=swiss.tournament.tournament_id)
        )
    assert refused.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert reason_of(refused.value) == "NOT_ARENA"
    arena = await create_arena(organiser, 60)
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await outsider.call("tournaments", "PauseArenaPlay", T.PauseArenaPlayRequest(tournament_id=arena.tournament_id))
    assert reason_of(refused.value) == "NOT_RUNNING"
    for client in (organiser, outsider):
        await client.close()


async def rounds_games(client: Client, tid: str) -> list[T.TournamentGame]:
    return list((await client.call("tournaments", "GetRound", T.GetRoundRequest(tournament_id=tid))).round.games)


async def settled(client: Client, tid: str, timeout_s: float = 30.0) -> list[T.TournamentGame]:
    """The arena's games once none is being played."""
    deadline = time.monotonic() + timeout_s
    while True:
        games = await rounds_games(client, tid)
        if all(g.state != T.TOURNAMENT_GAME_STATE_PLAYING for g in games) or time.monotonic() > deadline:
            return games
        await asyncio.sleep(0.2)


async def test_directors_tools_on_an_arena(platform: Platform, db: Redis) -> None:
    """A director's pause pairs no one (games being played go on), resume pairs again, a removed
    player is paired no more, a corrected result recounts the points, terminate ends it (games
    being played aborted, not counted)."""
    organiser = await Client(platform.addresses, 0).sign_in()
    players = [await Client(platform.addresses, i).sign_in() for i in range(6)]
    tournament = await create_arena(organiser, 120)
    tid = tournament.tournament_id
    for p in players:
        await p.call("tournaments", "JoinTournament", T.JoinTournamentRequest(tournament_id=tid))
    stop = asyncio.Event()
    running = [asyncio.create_task(Bot(p, seed=70 + i, think_s=0.05).run(stop)) for i, p in enumerate(players)]
    await organiser.call("tournaments", "StartTournament", T.StartTournamentRequest(tournament_id=tid))
    try:
        await asyncio.sleep(3)
        await organiser.call("tournaments", "PauseTournament", T.PauseTournamentRequest(tournament_id=tid))
        held = await settled(organiser, tid)
        await asyncio.sleep(1.5)  # waves come and go: none pairs
        assert len(await rounds_games(organiser, tid)) == len(held), "a paused arena pairs no one"
        await organiser.call("tournaments", "ResumeTournament", T.ResumeTournamentRequest(tournament_id=tid))
        for _ in range(50):
            if len(await rounds_games(organiser, tid)) > len(held):
                break
            await asyncio.sleep(0.1)
        assert len(await rounds_games(organiser, tid)) > len(held), "paired again once resumed"
        gone = players[0].player.player_id
        await organiser.call(
            "tournaments", "RemovePlayer", T.RemovePlayerRequest(tournament_id=tid, player_id=gone, reason="test")
        )
        removed_at = len(await rounds_games(organiser, tid))
        await asyncio.sleep(2.5)
        first = held[0]
        flipped = list(reversed(first.ranks)) if first.ranks[0] != first.ranks[1] else [1, 2]
        corrected = await organiser.call(
            "tournaments",
            "CorrectResult",
            T.CorrectResultRequest(tournament_id=tid, round=0, board=first.board, ranks=flipped, reason="dispute"),
        )
        assert corrected.game.state == T.TOURNAMENT_GAME_STATE_CORRECTED and list(corrected.game.ranks) == flipped
        await organiser.call(
            "tournaments", "TerminateTournament", T.TerminateTournamentRequest(tournament_id=tid, reason="done")
        )
    finally:
        stop.set()
        await asyncio.gather(*running)
    info = await organiser.call("tournaments", "GetTournament", T.GetTournamentRequest(tournament_id=tid))
    assert info.tournament.state == T.TOURNAMENT_STATE_FINISHED and info.tournament.terminated
    games = await rounds_games(organiser, tid)
    assert not [g for g in games[removed_at:] if gone in {p.player_id for p in g.players}], "removed: paired no more"
    await asyncio.sleep(1.0)
    assert len(await rounds_games(organiser, tid)) == len(games), "nothing paired after the end"
    counted = [g for g in games if g.state in (T.TOURNAMENT_GAME_STATE_FINISHED, T.TOURNAMENT_GAME_STATE_CORRECTED)]
    assert all(
        g.state
        in (T.TOURNAMENT_GAME_STATE_FINISHED, T.TOURNAMENT_GAME_STATE_CORRECTED, T.TOURNAMENT_GAME_STATE_ABORTED)
        for g in games
    )
    outcomes = {g.game_id: list(g.ranks) for g in counted}
    for g in counted:
        if g.state == T.TOURNAMENT_GAME_STATE_FINISHED:
            raw = await db.get(record_key(g.game_id))
            assert isinstance(raw, bytes)
            assert list(play_pb2.GameRecord.FromString(raw).outcome.ranks) == outcomes[g.game_id]
    assert outcomes[first.game_id] == flipped
    expected = recount(counted, outcomes)
    final = await organiser.call("tournaments", "GetStandings", T.GetStandingsRequest(tournament_id=tid))
    assert final.final
    for row in final.standings:
        t = expected[row.player.player_id]
        assert (row.points, row.streak, row.games) == (t["points"], t["streak"], t["games"]), row.player.username
        assert row.withdrawn == (row.player.player_id == gone)
    for client in (organiser, *players):
        await client.close()


async def test_a_player_who_misses_a_game_is_paused_and_comes_back(platform: Platform) -> None:
    """No move made, the game lost on time: paused (not paired again) until PauseArenaPlay(false)."""
    organiser = await Client(platform.addresses, 0).sign_in()
    players = [await Client(platform.addresses, i).sign_in() for i in range(4)]
    tournament = await create_arena(organiser, 30, per_move_s=1.0)
    tid = tournament.tournament_id
    for p in players:
        await p.call("tournaments", "JoinTournament", T.JoinTournamentRequest(tournament_id=tid))
    stop = asyncio.Event()
    idle = players[0]
    me = idle.player.player_id
    bots = [Bot(p, seed=90 + i, think_s=0.05, idle=p is idle) for i, p in enumerate(players)]
    running = [asyncio.create_task(b.run(stop)) for b in bots]
    await organiser.call("tournaments", "StartTournament", T.StartTournamentRequest(tournament_id=tid))

    async def row() -> T.Standing:
        got = await organiser.call("tournaments", "GetStandings", T.GetStandingsRequest(tournament_id=tid))
        found: T.Standing = next(s for s in got.standings if s.player.player_id == me)
        return found

    try:
        for _ in range(100):
            if (await row()).paused:
                break
            await asyncio.sleep(0.1)
        missed = await row()
        assert missed.paused and missed.games == 1 and missed.losses == 1
        (first,) = [g for g in await rounds_games(organiser, tid) if me in {p.player_id for p in g.players}]
        assert list(first.missed) == [p.player_id == me for p in first.players]
        await asyncio.sleep(1.5)
        assert len([g for g in await rounds_games(organiser, tid) if me in {p.player_id for p in g.players}]) == 1
        bots[0].idle = False
        await idle.call("tournaments", "PauseArenaPlay", T.PauseArenaPlayRequest(tournament_id=tid, paused=False))
        for _ in range(100):
            mine = [g for g in await rounds_games(organiser, tid) if me in {p.player_id for p in g.players}]
            if len(mine) > 1:
                break
            await asyncio.sleep(0.1)
        assert len(mine) > 1 and not (await row()).paused, "back in the pairing"
        await organiser.call(
            "tournaments", "TerminateTournament", T.TerminateTournamentRequest(tournament_id=tid, reason="enough")
        )
    finally:
        stop.set()
        await asyncio.gather(*running)
    for client in (organiser, *players):
        await client.close()
