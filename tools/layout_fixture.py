"""The fixture of a platform's Redis at one layout version, and its loader (docs/migrations.md).

`python -m tools.layout_fixture [--out tests/data/layout/v1.json]` starts a real platform on a fresh
Redis, drives it through the public API only (three accounts, a rated Connect Four game played to
its end, a live game of every game stopped mid-play, a tournament open for registration), stops it
and writes every tafel key (type, value, remaining TTL) as JSON. tests/test_upgrade_fixture.py loads
the file into an empty Redis, migrates it and plays every live game on. A fixture is written once
per layout version and then kept as it is: it is the data of that version a later migration must
carry.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import time
from pathlib import Path
from typing import Any, cast

import redis as redis_sync
from tafel.autoplay import play_game
from tafel.botplay import strategy_for
from tafel.client import TafelClient
from tafel.play.v1 import tournaments_pb2

from kit.redis.cluster import ClusterAddress, is_cluster_url
from kit.redis.migrations import CURRENT
from tools.platform import Platform
from tools.redis_server import start_redis

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUT = ROOT / "tests" / "data" / "layout" / f"v{CURRENT}.json"
PASSWORD = "fixture-password-1"
PLAYERS = ("fx-ada", "fx-bo", "fx-cy")
LIVE_ACTIONS = {"connect4": 5, "plus4": 4, "coloursquare": 4}  # actions made before the capture
PER_MOVE_S = 24 * 3600.0  # no clock runs out while the fixture is made


def sync_client(url: str) -> redis_sync.Redis:
    """redis-py's blocking client; on a cluster its cluster client (it scans every primary)."""
    if not is_cluster_url(url):
        return redis_sync.Redis.from_url(url)
    address = ClusterAddress.parse(url)
    nodes = [redis_sync.cluster.ClusterNode(host, port) for host, port in address.nodes]  # type: ignore[no-untyped-call]
    cluster = redis_sync.RedisCluster(
        startup_nodes=nodes, username=address.username or None, password=address.password or None, ssl=address.tls
    )
    return cast(redis_sync.Redis, cluster)


# ---------------------------------------------------------------------------------------------
# Values: text where it is UTF-8 without control characters, {"b64": ...} otherwise.


def encode(value: bytes) -> Any:
    try:
        text = value.decode()
    except UnicodeDecodeError:
        return {"b64": base64.b64encode(value).decode()}
    if any(ord(ch) < 32 for ch in text):
        return {"b64": base64.b64encode(value).decode()}
    return text


def decode(value: Any) -> bytes:
    return base64.b64decode(value["b64"]) if isinstance(value, dict) else str(value).encode()


def dump(url: str) -> dict[str, Any]:
    """Every tafel key (every master of a cluster), sorted, with its type, value and PTTL (-1 none)."""
    client: Any = sync_client(url)  # (redis-py's sync stubs type every reply as a union)
    keys: dict[str, Any] = {}
    try:
        for raw in sorted(set(client.scan_iter(match="tafel:*", count=1000))):
            key = raw.decode()
            kind = client.type(raw).decode()
            value: Any
            if kind == "string":
                value = encode(client.get(raw))
            elif kind == "hash":
                value = [[encode(f), encode(v)] for f, v in sorted(client.hgetall(raw).items())]
            elif kind == "list":
                value = [encode(v) for v in client.lrange(raw, 0, -1)]
            elif kind == "set":
                value = sorted(encode(v) for v in client.smembers(raw))
            elif kind == "zset":
                value = [[encode(m), s] for m, s in client.zrange(raw, 0, -1, withscores=True)]
            elif kind == "stream":
                value = [
                    [i.decode(), [[encode(f), encode(v)] for f, v in fields.items()]]
                    for i, fields in client.xrange(raw, "-", "+")
                ]
            else:
                raise ValueError(f"{key}: a {kind} key; the fixture knows strings, hashes, lists, sets, zsets, streams")
            keys[key] = {"type": kind, "pttl": int(client.pttl(raw)), "value": value}
    finally:
        client.close()
    return keys


def _clock_key(key: str) -> bool:
    return key.startswith("tafel:{gs:") and (key.endswith(":clocks") or key.endswith(":clocks:claimed"))


def load(url: str, fixture: dict[str, Any], now_ms: int | None = None) -> int:
    """Write the fixture's keys into `url` (an empty Redis). Turn deadlines are absolute times, so
    they move by the time passed since the capture (a clock that had 24 h left still has them);
    everything else is written as it was, each key with the TTL it had left. Returns the key count."""
    shift = (now_ms if now_ms is not None else int(time.time() * 1000)) - int(fixture["captured_ms"])
    client: Any = sync_client(url)
    try:
        for key, entry in fixture["keys"].items():
            kind, value = entry["type"], entry["value"]
            if kind == "string":
                client.set(key, decode(value))
            elif kind == "hash":
                fields = {decode(f): decode(v) for f, v in value}
                if key.endswith(":clock") and key.startswith("tafel:{gs:"):
                    for name in (b"d", b"x"):  # the deadline and its last refresh, both ms
                        if int(fields.get(name, b"0") or 0) > 0:
                            fields[name] = str(int(fields[name]) + shift).encode()
                client.hset(key, mapping=fields)
            elif kind == "list":
                client.rpush(key, *[decode(v) for v in value])
            elif kind == "set":
                client.sadd(key, *[decode(v) for v in value])
            elif kind == "zset":
                moved = shift if _clock_key(key) else 0
                client.zadd(key, {decode(m): float(s) + moved for m, s in value})
            elif kind == "stream":
                for entry_id, fields in value:
                    client.xadd(key, {decode(f): decode(v) for f, v in fields}, id=entry_id)
            if entry["pttl"] > 0:
                client.pexpire(key, entry["pttl"])
    finally:
        client.close()
    return len(fixture["keys"])


# ---------------------------------------------------------------------------------------------
# Driving a platform through the public API.


async def act(clients: dict[str, TafelClient], game_id: str, game: str, actions: int) -> None:
    """Make `actions` moves in the game, each by a seat it waits on (the level-1 bot's choice)."""
    made = 0
    choose = strategy_for(game, 1, seed=7)
    while made < actions:
        progressed = False
        for client in clients.values():
            seen = await client.get_game(game_id)
            status = seen.summary.status
            if status.over:
                raise RuntimeError(f"{game} game {game_id} ended while the fixture was being made")
            if seen.HasField("seat") and seen.seat in status.to_act:
                await client.submit_move(game_id, choose(seen.view), expected_version=status.version)
                made += 1
                progressed = True
                if made == actions:
                    return
        if not progressed:
            await asyncio.sleep(0.05)


async def drive(gateway: str) -> dict[str, Any]:
    """The platform's story; returns what the test needs to carry on (ids, seats, passwords)."""
    clients = {name: await TafelClient.connect(gateway, own_connection=True) for name in PLAYERS}
    try:
        for name, client in clients.items():
            await client.register(name, PASSWORD)
        ada, bo, cy = (clients[name] for name in PLAYERS)
        # A rated game played to its end: a record, ratings, a leaderboard.
        first, second = await asyncio.gather(ada.find_match("connect4"), bo.find_match("connect4"))
        await asyncio.gather(
            play_game(ada, first.game_id, first.seat, strategy_for("connect4", 1, seed=1)),
            play_game(bo, second.game_id, second.seat, strategy_for("connect4", 1, seed=2)),
        )
        deadline = time.monotonic() + 30
        while len((await cy.leaderboard("connect4")).entries) < 2:  # the game's end is rated after it
            if time.monotonic() > deadline:
                raise RuntimeError("the finished game was not rated within 30 s")
            await asyncio.sleep(0.2)
        live: dict[str, Any] = {}
        for game, actions in LIVE_ACTIONS.items():
            room = await ada.create_room(game, per_move_s=PER_MOVE_S)
            await bo.join_room(room.code)
            started = await ada.start_room(room.code)
            if not started.game_id:
                started = await ada.wait_room_started(room.code)
            await ada.wait_for_game(started.game_id)
            players = {name: clients[name] for name in ("fx-ada", "fx-bo")}
            await act(players, started.game_id, game, actions)
            seats = {name: (await c.get_game(started.game_id)).seat for name, c in players.items()}
            live[game] = {"game_id": started.game_id, "seats": seats}
        tournament = await ada.create_tournament(
            name="Fixture cup", game="connect4", format=tournaments_pb2.TOURNAMENT_FORMAT_ROUND_ROBIN, capacity=8
        )
        await bo.join_tournament(tournament.tournament_id)
        await cy.join_tournament(tournament.tournament_id)
        return {
            "players": list(PLAYERS),
            "password": PASSWORD,
            "finished_game": first.game_id,
            "live_games": live,
            "tournament": tournament.tournament_id,
        }
    finally:
        for client in clients.values():
            await client.close()


def make(out: Path) -> None:
    redis = start_redis()
    try:
        platform = Platform(redis_url=redis.url, fixed_ports=False, bot_pool=False).start()
        try:
            story = asyncio.run(drive(platform.gateway_addresses[0]))
        finally:
            platform.stop()
        captured_ms = int(time.time() * 1000)
        keys = dump(redis.url)
        fixture = {
            "layout_version": CURRENT,
            "captured_ms": captured_ms,
            "made_by": "python -m tools.layout_fixture",
            "story": story,
            "keys": keys,
        }
    finally:
        redis.stop()
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(fixture, indent=1, sort_keys=False) + "\n")
    print(f"wrote {out} ({len(keys)} keys, layout version {CURRENT})")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.layout_fixture", description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args(argv)
    make(args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
