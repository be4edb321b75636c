"""`make run`'s data survives a stop and start of everything: the embedded Redis keeps an
AOF in the data folder, so accounts, ratings, records and tournaments are there again, a live game goes on from
where it was, and a turn clock that was running still fires."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from tafel.client import TafelClient
from tafel.connect4.v1 import connect4_pb2
from tafel.play.v1 import tournaments_pb2

from tests.platforms import ENV
from tools.platform import Platform


def started(data_dir: Path) -> Platform:
    # Embedded Redis (no redis_url), as `make run` starts it, but every process on a free port.
    return Platform(data_dir=data_dir, fixed_ports=False, extra_env=ENV, bot_pool=False).start()


async def registered(platform: Platform, name: str) -> TafelClient:
    client = await TafelClient.connect(platform.gateway_addresses)
    await client.register(name, f"{name}-password-1234")
    return client


async def signed_in(platform: Platform, name: str) -> TafelClient:
    client = await TafelClient.connect(platform.gateway_addresses)
    await client.sign_in(name, f"{name}-password-1234")
    return client


async def matched(a: TafelClient, b: TafelClient, per_move_s: float) -> tuple[str, dict[int, TafelClient]]:
    found = await asyncio.wait_for(
        asyncio.gather(a.find_match("connect4", per_move_s=per_move_s), b.find_match("connect4", per_move_s=per_move_s)),
        30,
    )
    return found[0].game_id, {found[0].seat: a, found[1].seat: b}


async def test_accounts_ratings_records_and_live_games_survive_a_restart_of_everything(tmp_path: Path) -> None:
    data = tmp_path / "redis"
    platform = started(data)
    try:
        ann, bob = await registered(platform, "ann"), await registered(platform, "bob")
        ann_id = (await ann.me()).player_id
        # A finished game: a record and two ratings.
        finished, seats = await matched(ann, bob, per_move_s=60)
        await seats[0].submit_move(finished, connect4_pb2.Move(column=3), expected_version=0)
        await seats[1].resign(finished)
        record_before = await ann.get_record(finished)
        board_before = await ann.leaderboard("connect4")
        assert {row.player.username for row in board_before.entries} >= {"ann", "bob"}
        # A tournament open for entries, with one player in.
        cup = await ann.create_tournament(
            name="kept cup", game="connect4", format=tournaments_pb2.TOURNAMENT_FORMAT_SWISS, rounds=1, capacity=8
        )
        await bob.join_tournament(cup.tournament_id)
        cup = await ann.get_tournament(cup.tournament_id)  # as its organiser sees it (can_direct)
        # A live game two moves in, with a long clock, and one whose clock runs out while we are down
        # (other players: ann and bob, rated apart now, would wait for the queue's window to widen).
        cat, dan = await registered(platform, "cat"), await registered(platform, "dan")
        eve, fay = await registered(platform, "eve"), await registered(platform, "fay")
        cat_id = (await cat.me()).player_id
        live, seats = await matched(cat, dan, per_move_s=120)
        await seats[0].submit_move(live, connect4_pb2.Move(column=0), expected_version=0)
        await seats[1].submit_move(live, connect4_pb2.Move(column=1), expected_version=1)
        deadline_before = (await cat.get_game(live)).summary.turn_deadline
        clocked, _ = await matched(eve, fay, per_move_s=8)
        assert not (await eve.get_game(clocked)).summary.status.over
        for client in (ann, bob, cat, dan, eve, fay):
            await client.close()
    finally:
        platform.stop()
    # Redis wrote its AOF there (and no RDB: every write is in the log).
    assert any(data.rglob("*.aof")), sorted(p.name for p in data.rglob("*"))

    restarting = time.time()
    platform = started(data)
    try:
        ann, cat, dan = [await signed_in(platform, name) for name in ("ann", "cat", "dan")]
        assert (await ann.me()).player_id == ann_id
        assert await ann.get_record(finished) == record_before
        assert await ann.get_tournament(cup.tournament_id) == cup
        board_after = await ann.leaderboard("connect4")
        assert [(r.player.player_id, r.rating) for r in board_after.entries] == [
            (r.player.player_id, r.rating) for r in board_before.entries
        ]
        # The live game goes on from move 2, its clock as it was.
        game = await ann.get_game(live)
        assert game.summary.status.version == 2 and not game.summary.status.over
        assert game.summary.turn_deadline == deadline_before
        seats = {sp.seat: cat if sp.player.player_id == cat_id else dan for sp in game.summary.players}
        answer = await seats[0].submit_move(live, connect4_pb2.Move(column=0), expected_version=2)
        assert answer.version == 3
        # The clock that was running fires: the game ends on time (forfeit), after the restart.
        async with asyncio.timeout(30):
            events = [event async for event in ann.watch(clocked)]
        ended = (await ann.get_game(clocked)).summary.status
        assert ended.over and ended.outcome.reason == "TIMEOUT", (ended, events[-1])
        assert (await ann.get_record(clocked)).ended_at.ToSeconds() >= int(restarting)
        for client in (ann, cat, dan):
            await client.close()
    finally:
        platform.stop()
