"""A player who withdraws while their round's game is still being created (by another replica, slow
under load) has that game resigned, not left to time out as a missed game. Seen in
test_tournament_e2e's scheduled start: the withdrawal found no game to resign, the game was created
a moment later and its seat timed out."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any, cast

from tafel.play.v1 import play_pb2
from tafel.play.v1 import tournaments_pb2 as T

from gateway.actions import Actions
from gateway.clocks import Clocks
from gateway.games import GameDirectory
from gateway.records import Records
from gateway.tournaments import engine
from gateway.tournaments.model import Format
from gateway.tournaments.runner import TournamentRunner
from gateway.tournaments.store import Spec, TournamentStore, now_ms
from kit.redis.keys import record_key, tournament_request_key
from tests.gateway.harness import Seating


class HeldStarts:
    """A replica's game directory whose game creation waits at a gate (a slow start)."""

    def __init__(self, directory: GameDirectory) -> None:
        self.directory = directory
        self.entered = asyncio.Event()
        self.gate = asyncio.Event()

    async def start_game(self, **request: Any) -> str:
        self.entered.set()
        await self.gate.wait()
        return await self.directory.start_game(**request)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.directory, name)


def two_player_swiss(tid: str) -> Spec:
    return Spec(
        tournament_id=tid,
        name="withdraw while starting",
        game="connect4",
        options=b"",
        format=Format.SWISS,
        rounds=1,
        table_size=0,
        largest_table=0,
        per_move_ms=60_000,  # a timeout could not end the game within the test
        capacity=4,
        starts_at_ms=0,
        organiser=("org", "organiser", False),
        rated=False,
        created_ms=now_ms(),
    )


async def test_a_withdrawal_resigns_the_game_another_replica_is_still_creating(seats: Seating) -> None:
    layer = seats.directory.layer
    store = TournamentStore(layer)
    clocks = Clocks(layer, ttl_s=3600)
    actions = Actions(seats.directory, seats.router, clocks, Records(layer, seats.reads, ttl_s=3600))
    held = HeldStarts(seats.directory)
    starting = TournamentRunner(layer, store, cast(GameDirectory, held), None, None)
    withdrawing = TournamentRunner(layer, store, seats.directory, actions, None)

    tid = "t" + uuid.uuid4().hex[:16]
    players = [play_pb2.Player(player_id=f"w{uuid.uuid4().hex[:10]}", username=f"w{i}") for i in range(2)]
    assert await store.create(two_player_swiss(tid), tournament_request_key("org", tid)) == tid
    for p in players:
        joined = T.TournamentEvent(player_joined=T.TournamentPlayerJoined(player=p))
        assert await store.join(tid, (p.player_id, p.username, False), 4, joined) == 1

    start = asyncio.create_task(starting.start_tournament(tid, by=None))
    await asyncio.wait_for(held.entered.wait(), 10)  # round 1 paired, its game not yet created
    loaded = await store.load(tid)
    assert loaded is not None and loaded.state is not None and loaded.state.current is not None
    (game,) = loaded.state.current.games
    game_id = engine.game_id(tid, 1, game)
    quitter = players[0]
    await withdrawing.withdraw(tid, quitter)
    held.gate.set()
    await asyncio.wait_for(start, 10)

    raw = await seats.redis.get(record_key(game_id))
    assert raw is not None, "the withdrawn player's game was left running"
    record = play_pb2.GameRecord.FromString(raw)
    seat = [p.player.player_id for p in record.players].index(quitter.player_id)
    assert record.outcome.reason == "RESIGNED" and record.outcome.ranks[seat] == 2
    assert not any(a.WhichOneof("action") == "timed_out" for a in record.actions)
