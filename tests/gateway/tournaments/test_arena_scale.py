"""An arena's wave at 2,000 players against a real Redis: the arena stored with ~10,000 games played and
1,000 being played, 50 of them just ended (their records written), and the driver's wave timed —
the EXISTS pipeline over the games being played, the records read, the pure wave, the
compare-and-set save, and the check that every game being played exists. Game creation is a
stand-in here (the end-to-end tests make real games); this measures the arena's own cost."""

from __future__ import annotations

import random
import time
from collections.abc import AsyncIterator
from typing import Any

import pytest
from redis.asyncio import Redis
from tafel.games.v1 import games_pb2
from tafel.play.v1 import play_pb2
from tafel.play.v1 import tournaments_pb2 as T

from gateway.tournaments import arena, engine
from gateway.tournaments.arena_runner import ArenaDriver
from gateway.tournaments.model import Config, Format, Game, Result, State
from gateway.tournaments.runner import result_of
from gateway.tournaments.store import Loaded, Spec, TournamentStore, now_ms
from kit.redis.client import redis_client
from kit.redis.keys import record_key, tournament_key, tournament_request_key
from kit.redis.layer import RedisLayer
from tests.gateway.tournaments.sim import entrants
from tests.keyspace import emptied

PLAYERS = 2000
TID = "t00000000000a2e0"


@pytest.fixture
async def layer(redis_url: str) -> AsyncIterator[RedisLayer]:
    client: Redis = redis_client(emptied(redis_url, "arena at scale"))
    opened = RedisLayer.around(client)
    try:
        yield opened
    finally:
        await opened.close()
        await client.aclose()


class Runner:
    """What the driver uses of TournamentRunner, with game creation left out."""

    def __init__(self, layer: RedisLayer) -> None:
        self.redis = layer
        self.store = TournamentStore(layer)
        self.created: list[str] = []

    async def advance(self, tid: str) -> None:
        raise AssertionError("the test drives the waves itself")

    async def _start_game(self, loaded: Loaded, state: State, game_id: str, g: Game) -> None:
        self.created.append(game_id)
        await self.store.mark_started(loaded.spec.tournament_id, game_id)


def played_arena(rng: random.Random) -> State:
    state = engine.start(Config(Format.ARENA), entrants(PLAYERS, rng))
    outcomes = [Result((1, 2)), Result((2, 1)), Result((1, 1))]
    step = arena.wave(state, {}, now_ms=0, ends_ms=10**13)
    state = step.state
    while len(arena.games(state)) < 10_000:
        results = {g.board: rng.choice(outcomes) for g in arena.playing(state)}
        state = arena.wave(state, results, now_ms=0, ends_ms=10**13).state
    return state


async def test_a_wave_at_2000_players(layer: RedisLayer) -> None:
    rng = random.Random(11)
    runner = Runner(layer)
    store = runner.store
    spec = Spec(
        tournament_id=TID,
        name="arena scale",
        game="connect4",
        options=b"",
        format=Format.ARENA,
        rounds=0,
        table_size=0,
        largest_table=0,
        per_move_ms=5000,
        capacity=4096,
        starts_at_ms=0,
        organiser=("org", "organiser", False),
        rated=False,
        created_ms=now_ms(),
        arena_ms=600_000,
    )
    await store.create(spec, tournament_request_key("org", "arena-scale"))
    state = played_arena(rng)
    for e in state.entrants:
        joined = T.TournamentEvent(
            player_joined=T.TournamentPlayerJoined(player=play_pb2.Player(player_id=e.player_id))
        )
        await store.join(TID, (e.player_id, e.username, False), 4096, joined)
    loaded = await store.load(TID)
    assert loaded is not None
    assert await store.start(loaded, state, []) == 1
    driver = ArenaDriver(runner, result_of=result_of, standings_s=0.0)
    playing = arena.playing(state)
    assert len(playing) >= 900
    timings: list[dict[str, float]] = []
    games = 0
    for wave in range(4):
        ended = playing[wave * 50 : wave * 50 + 50]
        for g in ended:
            record = play_pb2.GameRecord(game_id=engine.game_id(TID, 0, g))
            for seat, pid in enumerate(g.seats):
                record.players.add(seat=seat, player=play_pb2.Player(player_id=pid))
            record.outcome.CopyFrom(games_pb2.Outcome(ranks=[1, 2]))
            await layer.call("SET", record_key(record.game_id), record.SerializeToString())
        before = await store.load(TID)
        assert before is not None and before.state is not None
        started = time.perf_counter()
        if wave == 0:  # read in full, as a replica does when it takes an arena over
            loaded = await store.load(TID)
            assert loaded is not None
            await driver.wave(loaded)
        else:  # the holder of the lease: the arena as it saved it last (the revision checked)
            assert driver.keeps(TID)
            await driver.wave_kept(TID)
        total_ms = (time.perf_counter() - started) * 1000
        after = await store.load(TID)
        assert after is not None and after.state is not None
        decided = sum(1 for g in arena.games(after.state) if g.result is not None)
        games = len(arena.games(after.state))
        paired = games - len(arena.games(before.state))
        timings.append({"total": total_ms, "paired": paired, "kept": float(wave > 0)})
        assert decided >= 50 * (wave + 1) and after.rev == before.rev + 1
    # The first wave also created every game being played (none was marked started): later ones only new.
    assert len(set(runner.created)) == len(runner.created)
    raw: Any = await layer.call("HGET", tournament_key(TID), "state")
    print(
        f"\n2,000-player arena, {games} games, state {len(raw) / 1e6:.2f} MB: "
        + "; ".join(
            f"wave {t['total']:.0f} ms ({'kept' if t['kept'] else 'read in full'}, 50 results, {t['paired']:.0f} paired)"
            for t in timings
        )
    )
    assert all(t["total"] < 8000 for t in timings), "a wave stays seconds at most on a busy machine"
