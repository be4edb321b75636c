"""A tournament's standings checked against its games' records: every game of every round read
back (GetGameRecord, the record the rules service's result was written to), the standings
recomputed from those results with the pure engine (gateway/tournaments/engine.py), and compared
with what GetStandings says, row by row (rank, points, Buchholz, Sonneborn-Berger, order).

No game lost: every paired game that should have been played has a finished record whose players
are the pairing's, and the tournament's own result for it (GetRound) is the record's.

    python -m tools.check_tournament --gateway 127.0.0.1:50051 TOURNAMENT_ID

Prints one JSON line ({"ok": ..., "games": ..., "problems": [...]}); exit status 1 on a problem.
Two-seat formats only (Swiss, round robin, knockout); byes and forfeits come from the pairing,
since no game record exists for them.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from typing import Any

from tafel.client import TafelClient
from tafel.errors import TafelError
from tafel.play.v1 import play_pb2, tournaments_pb2

from gateway.tournaments import engine
from gateway.tournaments.model import Config, Entrant, Format, Game, Result, Round, State

FORMATS = {
    tournaments_pb2.TOURNAMENT_FORMAT_SWISS: Format.SWISS,
    tournaments_pb2.TOURNAMENT_FORMAT_ROUND_ROBIN: Format.ROUND_ROBIN,
    tournaments_pb2.TOURNAMENT_FORMAT_KNOCKOUT: Format.KNOCKOUT,
}
READ_AT_ONCE = 64
PROBLEMS_SHOWN = 20


async def _records(client: TafelClient, ids: list[str]) -> dict[str, play_pb2.GameRecord | None]:
    out: dict[str, play_pb2.GameRecord | None] = {}

    async def one(game_id: str) -> None:
        try:
            out[game_id] = await client.get_record(game_id)
        except TafelError:
            out[game_id] = None

    for index in range(0, len(ids), READ_AT_ONCE):
        await asyncio.gather(*(one(game_id) for game_id in ids[index : index + READ_AT_ONCE]))
    return out


def _missed(record: play_pb2.GameRecord) -> bool:
    """A seat timed out without a move (in a benchmark: a bot that did not play)."""
    moved = {a.seat for a in record.actions if a.WhichOneof("action") == "move"}
    return any(a.WhichOneof("action") == "timed_out" and a.seat not in moved for a in record.actions)


def _result_from_record(record: play_pb2.GameRecord) -> Result:
    return Result(ranks=tuple(int(r) for r in record.outcome.ranks))


async def check_tournament(client: TafelClient, tournament_id: str) -> dict[str, Any]:
    problems: list[str] = []
    tournament = await client.get_tournament(tournament_id)
    table = await client.standings(tournament_id)
    if tournament.format not in FORMATS:
        return {"ok": False, "problems": [f"format {tournament.format} is not checked here"]}
    entrants = tuple(
        Entrant(row.player.player_id, row.player.username, row.rating, row.player.guest)
        for row in sorted(table.standings, key=lambda row: row.seed)
    )
    rounds: list[Round] = []
    games = played = missed = 0
    for number in range(1, table.rounds_completed + 1):
        response = await client._call(
            client.tournaments.GetRound,
            tournaments_pb2.GetRoundRequest(tournament_id=tournament_id, round=number),
        )
        paired = list(response.round.games)
        records = await _records(client, [g.game_id for g in paired if g.game_id])
        made: list[Game] = []
        for g in paired:
            seats = tuple(p.player_id for p in g.players)
            games += 1
            if g.state == tournaments_pb2.TOURNAMENT_GAME_STATE_BYE:
                made.append(Game(g.board, seats, g.decider, bye=True))
                continue
            if not g.game_id:  # a forfeit: nothing was played
                made.append(
                    Game(g.board, seats, g.decider, result=Result(ranks=tuple(g.ranks), absent=tuple(g.absent)))
                )
                continue
            record = records.get(g.game_id)
            if record is None or not record.outcome.ranks:
                problems.append(f"round {number} board {g.board}: game {g.game_id} has no finished record")
                continue
            if [p.player.player_id for p in record.players] != list(seats):
                problems.append(f"round {number} board {g.board}: the record's players are not the pairing's")
            missed += _missed(record)
            result = _result_from_record(record)
            if tuple(g.ranks) != result.ranks:
                where = f"round {number} board {g.board}"
                problems.append(f"{where}: the tournament has {list(g.ranks)}, the record {list(result.ranks)}")
            played += 1
            made.append(Game(g.board, seats, g.decider, result=result))
        rounds.append(Round(number, tuple(made)))
        seated = [p for game in made for p in game.seats]
        if len(seated) != len(set(seated)):
            problems.append(f"round {number}: a player is paired twice")
    withdrawn = tuple(row.player.player_id for row in table.standings if row.withdrawn)
    config = Config(FORMATS[tournament.format], rounds=tournament.rounds)
    state = State(config, entrants, tuple(rounds), withdrawn=withdrawn, finished=table.final)
    expected = engine.standings(state)
    if len(expected) != len(table.standings):
        problems.append(f"{len(table.standings)} standings, {len(expected)} recomputed")
    for position, (mine, theirs) in enumerate(zip(expected, table.standings, strict=False), start=1):
        got = (theirs.player.player_id, theirs.rank, theirs.points, theirs.buchholz, theirs.sonneborn_berger)
        want = (mine.player_id, mine.rank, mine.points, mine.buchholz, mine.sonneborn_berger)
        if got != want:
            problems.append(f"place {position}: GetStandings {got}, recomputed {want}")
    return {
        "ok": not problems,
        "tournament_id": tournament_id,
        "rounds": table.rounds_completed,
        "final": table.final,
        "players": len(table.standings),
        "games": games,
        "records_read": played,
        # Games a player lost on time without a move: not a standings problem, but in a benchmark
        # a bot that never played (tools.bench_tournament fails on any).
        "missed_games": missed,
        "problems_count": len(problems),
        "problems": problems[:PROBLEMS_SHOWN],
    }


async def _main(gateway: str, tournament_id: str) -> dict[str, Any]:
    client = await TafelClient.connect(gateway)
    try:
        await client.sign_in_as_guest()
        return await check_tournament(client, tournament_id)
    finally:
        await client.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--gateway", default="127.0.0.1:50051")
    parser.add_argument("tournament_id")
    args = parser.parse_args()
    report = asyncio.run(_main(args.gateway, args.tournament_id))
    print(json.dumps(report))
    return 0 if report["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
