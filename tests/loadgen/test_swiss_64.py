"""A Swiss tournament of 64 bots over 6 rounds of Connect Four, played through the platform:
no repeat pairings, no byes (an even field), and the standings with their tie-breaks checked
against an independent calculation from the games' published results."""

from __future__ import annotations

import argparse

from tafel.client import TafelClient
from tafel.play.v1 import tournaments_pb2
from tafel_loadgen.tournament import run_tournament

from tests.gateway.tournaments.test_swiss import independent_standings
from tools.platform import Platform


async def test_swiss_of_64_bots_over_6_rounds(platform: Platform) -> None:
    args = argparse.Namespace(players=64, rounds=6, format="swiss", game="connect4", seed=64)
    stats = await run_tournament(platform.gateway_addresses, args)
    assert not stats.errors
    assert stats.games_finished == 6 * 32

    client = await TafelClient.connect(platform.gateway_addresses)
    await client.sign_in_as_guest()
    try:
        rows: list[tuple[str, str, float]] = []
        seen: set[frozenset[str]] = set()
        players: set[str] = set()
        for number in range(1, 7):
            response = await client._call(
                client.tournaments.GetRound,
                tournaments_pb2.GetRoundRequest(tournament_id=stats.tournament_id, round=number),
            )
            games = response.round.games
            assert len(games) == 32 and all(len(g.players) == 2 and g.game_id for g in games)
            in_round = [p.player_id for g in games for p in g.players]
            assert len(set(in_round)) == 64, "everyone plays once a round"
            for game in games:
                pair = frozenset(p.player_id for p in game.players)
                assert pair not in seen, f"repeat pairing in round {number}"
                seen.add(pair)
                white, black = (p.player_id for p in game.players)
                players.update((white, black))
                # The result as the finished game's record says, independently of the tournament.
                record = await client.get_record(game.game_id)
                ranks = list(record.outcome.ranks)
                rows.append((white, black, 1.0 if ranks[0] < ranks[1] else 0.0 if ranks[0] > ranks[1] else 0.5))
        expected = independent_standings(rows, [], sorted(players))
        standings = (await client.standings(stats.tournament_id)).standings
        assert len(standings) == 64
        for row in standings:
            assert (row.points, row.buchholz, row.sonneborn_berger) == expected[row.player.player_id]
        order = [row.player.player_id for row in standings]
        keys = [expected[p] for p in order]
        assert keys == sorted(keys, key=lambda k: (-k[0], -k[1], -k[2])), "ordered by points, Buchholz, SB"
    finally:
        await client.close()
