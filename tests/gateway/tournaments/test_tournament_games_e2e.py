"""Tournaments of the other games end to end: a Plus 4 knockout with byes, Colour Square tables."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest
from tafel.play.v1 import tournaments_pb2 as T

from tests.gateway.tournaments.e2e import Bot, Client, Platform, rid, watch_until_over
from tests.keyspace import emptied

pytestmark = pytest.mark.timeout(240)
DB = "tournament games"


@pytest.fixture(scope="module")
def platform(redis_url: str) -> Iterator[Platform]:
    made = Platform(emptied(redis_url, DB), ("plus4", "coloursquare"))
    try:
        made.start_rules()
        made.start_gateways(2)
        yield made
    finally:
        made.stop()


async def run_tournament(platform: Platform, count: int, request: T.CreateTournamentRequest) -> list[T.TournamentRound]:
    organiser = await Client(platform.addresses, 0).sign_in()
    players = [await Client(platform.addresses, i).sign_in() for i in range(count)]
    created = await organiser.call("tournaments", "CreateTournament", request)
    tid = created.tournament.tournament_id
    for p in players:
        await p.call("tournaments", "JoinTournament", T.JoinTournamentRequest(tournament_id=tid))
    stop = asyncio.Event()
    running = [asyncio.create_task(Bot(p, seed=i).run(stop)) for i, p in enumerate(players)]
    events: list[T.TournamentEvent] = []
    watching = asyncio.create_task(watch_until_over(organiser, tid, events))
    await organiser.call("tournaments", "StartTournament", T.StartTournamentRequest(tournament_id=tid))
    try:
        await asyncio.wait_for(watching, 200)
    finally:
        stop.set()
        await asyncio.gather(*running)
    info = await organiser.call("tournaments", "GetTournament", T.GetTournamentRequest(tournament_id=tid))
    assert info.tournament.state == T.TOURNAMENT_STATE_FINISHED
    rounds = []
    for number in range(1, info.tournament.current_round + 1):
        rounds.append(
            (await organiser.call("tournaments", "GetRound", T.GetRoundRequest(tournament_id=tid, round=number))).round
        )
    standings = await organiser.call("tournaments", "GetStandings", T.GetStandingsRequest(tournament_id=tid))
    assert standings.final and len(standings.standings) == count
    for client in (organiser, *players):
        await client.close()
    return rounds


async def test_plus4_knockout_of_5_with_byes(platform: Platform) -> None:
    request = T.CreateTournamentRequest(
        request_id=rid(), name="p4 ko", game="plus4", format=T.TOURNAMENT_FORMAT_KNOCKOUT
    )
    request.time_control.per_move.FromSeconds(10)
    rounds = await run_tournament(platform, 5, request)
    assert len(rounds) == 3
    first = rounds[0]
    assert sum(1 for g in first.games if g.state == T.TOURNAMENT_GAME_STATE_BYE) == 3
    alive = 5
    for rnd in rounds:
        boards = {g.board for g in rnd.games}
        alive = len(boards)
        for g in rnd.games:
            if g.state == T.TOURNAMENT_GAME_STATE_FINISHED and g.decider:
                earlier = next(x for x in rnd.games if x.board == g.board and x.decider == g.decider - 1)
                assert list(earlier.ranks) == [1, 1], "a decider only after a draw"
    assert alive == 1


async def test_coloursquare_tables_of_3(platform: Platform) -> None:
    request = T.CreateTournamentRequest(
        request_id=rid(),
        name="cs tables",
        game="coloursquare",
        format=T.TOURNAMENT_FORMAT_TABLES,
        rounds=2,
        table_size=3,
    )
    request.time_control.per_move.FromSeconds(10)
    rounds = await run_tournament(platform, 6, request)
    assert len(rounds) == 2
    for rnd in rounds:
        assert [len(g.players) for g in rnd.games] == [3, 3]
        for g in rnd.games:
            assert g.state == T.TOURNAMENT_GAME_STATE_FINISHED and len(g.scores) == 3 and len(g.ranks) == 3
            assert sum(g.points) == pytest.approx(1.5)
