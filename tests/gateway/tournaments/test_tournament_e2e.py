"""Tournaments end to end: real rules services and two gateways on their own (emptied) keyspace, bots
that play random legal moves through the public API, an organiser, a watcher."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import AsyncIterator, Iterator

import grpc
import pytest
from redis.asyncio import Redis
from tafel.play.v1 import play_pb2, tournaments_pb2

from kit.redis.client import redis_client
from kit.redis.keys import meta_pattern, record_key
from kit.redis.keys import pool_key as rating_key
from kit.redis.keys import tournament_key as t_key
from tests.gateway.tournaments.e2e import Bot, Client, Platform, rid, watch_until_over
from tests.keyspace import emptied

pytestmark = pytest.mark.timeout(240)
DB = "swiss"
T = tournaments_pb2


@pytest.fixture(scope="module")
def platform(redis_url: str) -> Iterator[Platform]:
    made = Platform(emptied(redis_url, DB), ("connect4",))
    try:
        made.start_rules()
        made.start_gateways(2)
        yield made
    finally:
        made.stop()


@pytest.fixture
async def db(platform: Platform) -> AsyncIterator[Redis]:
    client = redis_client(platform.redis_url)  # redis+cluster:// too
    try:
        yield client
    finally:
        await client.aclose()


async def registered(platform: Platform, index: int) -> Client:
    """A registered (non-guest) player, so the tournament's games are rated."""
    client = Client(platform.addresses, index)
    client._connect()
    name = f"tb{rid()[:10]}"
    response = await client.accounts.Register(play_pb2.RegisterRequest(username=name, password="password-123"))
    client.session = response.session
    return client


async def create(
    organiser: Client, *, fmt: int, rounds: int = 0, per_move_s: float = 5.0, rated: bool = True, game: str = "connect4"
) -> T.Tournament:
    request = T.CreateTournamentRequest(
        request_id=rid(), name="e2e cup", game=game, format=fmt, rounds=rounds, rated=rated, capacity=16
    )
    request.time_control.per_move.FromMilliseconds(int(per_move_s * 1000))
    created = await organiser.call("tournaments", "CreateTournament", request)
    again = await organiser.call("tournaments", "CreateTournament", request)  # a retry: the same tournament
    assert again.tournament.tournament_id == created.tournament.tournament_id
    tournament: T.Tournament = created.tournament
    return tournament


def games_of(rounds: list[T.TournamentRound]) -> list[T.TournamentGame]:
    return [g for r in rounds for g in r.games]


async def all_rounds(client: Client, tid: str) -> list[T.TournamentRound]:
    info = await client.call("tournaments", "GetTournament", T.GetTournamentRequest(tournament_id=tid))
    out = []
    for number in range(1, info.tournament.current_round + 1):
        got = await client.call("tournaments", "GetRound", T.GetRoundRequest(tournament_id=tid, round=number))
        out.append(got.round)
    return out


async def test_swiss_with_an_idle_player_is_withdrawn_and_finishes(platform: Platform, db: Redis) -> None:
    organiser = await registered(platform, 0)
    players = [await registered(platform, i) for i in range(6)]
    idle = players[0]
    watcher = await Client(platform.addresses, 1).sign_in()
    tournament = await create(organiser, fmt=T.TOURNAMENT_FORMAT_SWISS, rounds=3, per_move_s=0.6)
    tid = tournament.tournament_id
    assert tournament.state == T.TOURNAMENT_STATE_REGISTERING
    for p in players:
        await p.call("tournaments", "JoinTournament", T.JoinTournamentRequest(tournament_id=tid))
    # Join is idempotent; leaving before the start unregisters; joining again is fine.
    await players[1].call("tournaments", "JoinTournament", T.JoinTournamentRequest(tournament_id=tid))
    left = await players[5].call("tournaments", "LeaveTournament", T.LeaveTournamentRequest(tournament_id=tid))
    assert len(left.tournament.players) == 5
    joined = await players[5].call("tournaments", "JoinTournament", T.JoinTournamentRequest(tournament_id=tid))
    assert [p.player_id for p in joined.tournament.players] == [p.player.player_id for p in players]
    # Only the organiser starts it.
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await players[1].call("tournaments", "StartTournament", T.StartTournamentRequest(tournament_id=tid))
    assert refused.value.code() == grpc.StatusCode.PERMISSION_DENIED

    events: list[T.TournamentEvent] = []
    watching = asyncio.create_task(watch_until_over(watcher, tid, events))
    stop = asyncio.Event()
    bots = [Bot(p, seed=i, idle=p is idle) for i, p in enumerate(players)]
    running = [asyncio.create_task(b.run(stop)) for b in bots]
    started = await organiser.call("tournaments", "StartTournament", T.StartTournamentRequest(tournament_id=tid))
    assert started.tournament.state == T.TOURNAMENT_STATE_RUNNING and started.tournament.current_round == 1
    with pytest.raises(grpc.aio.AioRpcError) as late:
        await watcher.call("tournaments", "JoinTournament", T.JoinTournamentRequest(tournament_id=tid))
    assert late.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    try:
        await asyncio.wait_for(watching, 150)
    finally:
        stop.set()
        await asyncio.gather(*running)

    final = await organiser.call("tournaments", "GetStandings", T.GetStandingsRequest(tournament_id=tid))
    assert final.final and final.rounds_completed == 3
    rounds = await all_rounds(organiser, tid)
    assert [r.number for r in rounds] == [1, 2, 3] and all(r.finished for r in rounds)
    # Pairings: no repeats; the idle player in rounds 1 and 2 only, missing both, then withdrawn.
    pairs = [
        frozenset(p.player_id for p in g.players) for g in games_of(rounds) if g.state != T.TOURNAMENT_GAME_STATE_BYE
    ]
    assert len(pairs) == len(set(pairs)) == 3 + 3 + 2
    me = idle.player.player_id
    idle_games = [(r.number, g) for r in rounds for g in r.games if me in [p.player_id for p in g.players]]
    assert [n for n, _ in idle_games] == [1, 2]
    for _, g in idle_games:
        seat = [p.player_id for p in g.players].index(me)
        assert g.missed[seat] and g.ranks[seat] == 2 and g.state == T.TOURNAMENT_GAME_STATE_FINISHED
    assert sum(1 for g in rounds[2].games if g.state == T.TOURNAMENT_GAME_STATE_BYE) == 1
    row = next(s for s in final.standings if s.player.player_id == me)
    assert row.withdrawn and row.points == 0 and row.losses == 2
    assert sum(s.points for s in final.standings) == 8 + 1  # 8 games and one bye
    ranks = [s.rank for s in final.standings]
    assert ranks == sorted(ranks) and ranks[0] == 1

    # The watcher saw it all, in order, once.
    kinds = [e.WhichOneof("kind") for e in events]
    begin = kinds.index("started")
    assert kinds[:begin].count("player_joined") == 7 and kinds[:begin].count("player_left") == 1
    assert kinds[-1] == "finished" and kinds[begin + 1] == "round_started"
    assert kinds.count("round_started") == 3 and kinds.count("game_finished") == 8
    left_events = [e.player_left for e in events if e.WhichOneof("kind") == "player_left" and e.player_left.withdrawn]
    assert [(x.player.player_id, x.missed_games) for x in left_events] == [(me, True)]
    ids = [e.event_id for e in events]
    assert len(ids) == len(set(ids))
    finished_games = [e.game_finished.game.game_id for e in events if e.WhichOneof("kind") == "game_finished"]
    assert sorted(finished_games) == sorted(g.game_id for g in games_of(rounds) if g.game_id)

    # Ratings: every rated game applied exactly once for each of its players. The idle player's
    # games are not rated: a seat that timed out without ever acting never arrived (the no-show
    # rule, gateway/README.md), though the tournament counts them as lost.
    played: Counter[str] = Counter()
    for g in games_of(rounds):
        if g.game_id:
            applied = await db.exists(rating_key("connect4", f"applied:{g.game_id}"))
            if me in [p.player_id for p in g.players]:
                assert not applied
                continue
            played.update(p.player_id for p in g.players)
            assert applied
    for p in players:
        got = await organiser.call("ratings", "GetRatings", T.GetRatingsRequest(player_id=p.player.player_id))
        c4 = [r for r in got.ratings if r.leaderboard == "connect4" and r.games]
        assert (c4[0].games if c4 else 0) == played[p.player.player_id]
    board = await players[1].call(
        "ratings", "GetLeaderboard", T.GetLeaderboardRequest(leaderboard="connect4", include_provisional=True)
    )
    assert board.total >= 5 and board.me.player.player_id == players[1].player.player_id  # all but the idle one
    for client in (organiser, watcher, *players):
        await client.close()


async def test_every_process_killed_mid_round_finishes_with_the_same_games(platform: Platform, db: Redis) -> None:
    organiser = await registered(platform, 0)
    players = [await Client(platform.addresses, i).sign_in() for i in range(4)]
    tournament = await create(organiser, fmt=T.TOURNAMENT_FORMAT_ROUND_ROBIN, per_move_s=10, rated=False)
    tid = tournament.tournament_id
    for p in players:
        await p.call("tournaments", "JoinTournament", T.JoinTournamentRequest(tournament_id=tid))
    stop = asyncio.Event()
    bots = [Bot(p, seed=10 + i, think_s=0.04) for i, p in enumerate(players)]
    running = [asyncio.create_task(b.run(stop)) for b in bots]
    await organiser.call("tournaments", "StartTournament", T.StartTournamentRequest(tournament_id=tid))
    round1 = (await all_rounds(organiser, tid))[0]
    planned = {g.game_id for g in round1.games}
    assert len(planned) == 2
    # Mid-round: some moves made, the round not over.
    for _ in range(200):
        if sum(b.moves for b in bots) >= 6:
            break
        await asyncio.sleep(0.05)
    assert not (await all_rounds(organiser, tid))[0].finished
    platform.kill_all()
    await asyncio.sleep(0.5)
    platform.start_rules()
    platform.start_gateways(2)
    events: list[T.TournamentEvent] = []
    watcher = await Client(platform.addresses, 1).sign_in()
    try:
        await asyncio.wait_for(watch_until_over(watcher, tid, events), 150)
    finally:
        stop.set()
        await asyncio.gather(*running)
    rounds = await all_rounds(organiser, tid)
    assert len(rounds) == 3 and all(r.finished for r in rounds)
    assert {g.game_id for g in rounds[0].games} == planned, "round 1 kept its games"
    games = games_of(rounds)
    ids = [g.game_id for g in games]
    assert len(ids) == len(set(ids)) == 6 and all(g.state == T.TOURNAMENT_GAME_STATE_FINISHED for g in games)
    # Everyone met everyone once.
    assert len({frozenset(p.player_id for p in g.players) for g in games}) == 6
    # Exactly these games were created, each has one record, and no other game carries this tournament.
    raw = await db.hkeys(t_key(tid, "started"))
    assert {x.decode() for x in raw} == set(ids)
    for game_id in ids:
        assert await db.exists(record_key(game_id))
    others = [k async for k in db.scan_iter(match=meta_pattern(f"{tid}-*"))]
    assert len(others) == 6
    events_seen = [e.WhichOneof("kind") for e in events]
    assert events_seen.count("round_started") == 3 and events_seen[-1] == "finished"
    for client in (organiser, watcher, *players):
        await client.close()


async def test_scheduled_start_withdrawal_and_cancellation(platform: Platform) -> None:
    import time

    organiser = await Client(platform.addresses, 0).sign_in()
    players = [await Client(platform.addresses, i).sign_in() for i in range(4)]
    soon = T.CreateTournamentRequest(
        request_id=rid(), name="at a time", game="connect4", format=T.TOURNAMENT_FORMAT_SWISS, rounds=2
    )
    # A long clock: the quitter never moves, and must leave (resign) before its clock could run out
    # even on a loaded machine — a timeout there would count as a missed game instead.
    soon.time_control.per_move.FromSeconds(30)
    soon.starts_at.FromMilliseconds(int(time.time() * 1000) + 800)
    tid = (await organiser.call("tournaments", "CreateTournament", soon)).tournament.tournament_id
    lonely = T.CreateTournamentRequest(
        request_id=rid(), name="nobody came", game="connect4", format=T.TOURNAMENT_FORMAT_KNOCKOUT
    )
    lonely.starts_at.FromMilliseconds(int(time.time() * 1000) + 300)
    empty = (await organiser.call("tournaments", "CreateTournament", lonely)).tournament.tournament_id
    await players[0].call("tournaments", "JoinTournament", T.JoinTournamentRequest(tournament_id=empty))
    for p in players:
        await p.call("tournaments", "JoinTournament", T.JoinTournamentRequest(tournament_id=tid))
    quitter = players[3]
    stop = asyncio.Event()
    running = [asyncio.create_task(Bot(p, seed=i).run(stop)) for i, p in enumerate(players[:3])]
    events: list[T.TournamentEvent] = []
    watching = asyncio.create_task(watch_until_over(organiser, tid, events))
    try:
        for _ in range(100):
            info = await organiser.call("tournaments", "GetTournament", T.GetTournamentRequest(tournament_id=tid))
            if info.tournament.state == T.TOURNAMENT_STATE_RUNNING:
                break
            await asyncio.sleep(0.1)
        assert info.tournament.state == T.TOURNAMENT_STATE_RUNNING, "started by itself at its time"
        # Withdrawing mid-round resigns the running game at once.
        left = await quitter.call("tournaments", "LeaveTournament", T.LeaveTournamentRequest(tournament_id=tid))
        assert left.tournament.state == T.TOURNAMENT_STATE_RUNNING
        await asyncio.wait_for(watching, 120)
    finally:
        stop.set()
        await asyncio.gather(*running)
    rounds = await all_rounds(organiser, tid)
    me = quitter.player.player_id
    first = next(g for g in rounds[0].games if me in [p.player_id for p in g.players])
    seat = [p.player_id for p in first.players].index(me)
    assert first.ranks[seat] == 2 and not first.missed[seat]
    record = await organiser.call("games", "GetGameRecord", play_pb2.GetGameRecordRequest(game_id=first.game_id))
    assert record.record.outcome.reason == "RESIGNED"
    assert all(me not in [p.player_id for p in g.players] for g in rounds[1].games)
    standings = await organiser.call("tournaments", "GetStandings", T.GetStandingsRequest(tournament_id=tid))
    assert next(s for s in standings.standings if s.player.player_id == me).withdrawn
    gone = await organiser.call("tournaments", "GetTournament", T.GetTournamentRequest(tournament_id=empty))
    assert gone.tournament.state == T.TOURNAMENT_STATE_CANCELLED
    listed = await organiser.call(
        "tournaments", "ListTournaments", T.ListTournamentsRequest(state=T.TOURNAMENT_STATE_CANCELLED, page_size=100)
    )
    assert empty in [t.tournament_id for t in listed.tournaments]
    for client in (organiser, *players):
        await client.close()
