"""Blocked players are never matched: the matchmaking scripts against a real Redis (a
single one, and a Redis Cluster in `make test`'s second run), through the queue layer."""

from __future__ import annotations

import asyncio
import dataclasses
import itertools
import random

from redis.asyncio import Redis
from tafel.play.v1 import play_pb2

from gateway.matchmaking.claims import SearchClaims
from gateway.matchmaking.matchmaker import Matchmaker
from gateway.matchmaking.model import BucketSpec, FormedMatch, new_ticket_id
from gateway.matchmaking.queue import MatchQueue
from kit.redis.keys import bucket_keys, player_key
from kit.redis.layer import RedisLayer
from kit.redis.replies import text
from tests.gateway.lobby_helpers import FAST, FixedRatings, RecordingStarter, player, process_redis, spec

NOW = 1_700_000_000_000
# Every window at its widest from the start and leases longer than the run: only blocks keep two
# queued tickets apart, so any two that may meet must meet.
WIDE = dataclasses.replace(FAST, base_window=10_000, max_window=10_000, lease_s=3600, ticket_ttl_s=3600, fill_wait_s=0)


async def block(redis: Redis, blocker: str, blocked: str) -> None:
    """What the standing store writes for a block: the blocker's hash and the blocked one's set."""
    await redis.hset(player_key(blocker, "blocks"), blocked, f"name-{blocked}")
    await redis.sadd(player_key(blocked, "blocked-by"), blocker)


async def test_blocked_players_are_never_matched_in_1000_rounds(redis: Redis, layer: RedisLayer) -> None:
    rng = random.Random(35)
    queue = MatchQueue(layer, WIDE)
    claims = SearchClaims(layer, WIDE.lease_ms)
    pairs, tables = spec(), spec(3, 6)
    people = {b.bucket_id: [player() for _ in range(16)] for b in (pairs, tables)}
    apart: set[frozenset[str]] = set()  # the pairs that must never share a table, either way round

    for who in people.values():
        ids = [p.player_id for p in who]
        for a, b in rng.sample(list(itertools.combinations(ids, 2)), 24):
            how = rng.choice(("a", "b", "both"))
            if how in ("a", "both"):
                await block(redis, a, b)
            if how in ("b", "both"):
                await block(redis, b, a)
            apart.add(frozenset((a, b)))

    queued: dict[str, dict[str, str]] = {b.bucket_id: {} for b in (pairs, tables)}  # player id -> ticket
    seated = {b.bucket_id: 0 for b in (pairs, tables)}
    formed: list[tuple[str, FormedMatch]] = []  # this round's, started and told at its end

    def settle(bucket: BucketSpec, matches: tuple[FormedMatch, ...] | list[FormedMatch]) -> None:
        for match in matches:
            ids = [p.player_id for p in match.players]
            assert bucket.min_seats <= len(ids) <= bucket.max_seats and len(set(ids)) == len(ids)
            clash = [pair for pair in itertools.combinations(ids, 2) if frozenset(pair) in apart]
            assert clash == [], f"blocked players seated together: {clash}"
            for pid in ids:
                del queued[bucket.bucket_id][pid]
            seated[bucket.bucket_id] += len(ids)
            formed.append((bucket.bucket_id, match))

    async def search(bucket: BucketSpec, who: list[play_pb2.Player], now: int) -> None:
        waiting = queued[bucket.bucket_id]
        # Chosen first: a player seated by this round's searches searches again next round, once told.
        for each in [p for p in who if p.player_id not in waiting and rng.random() < 0.6]:
            ticket = new_ticket_id()
            waiting[each.player_id] = ticket
            if bucket is pairs:
                # As a gateway queues: paired at once in the same script; on one Redis with the claim,
                # the block lists read in that script (a cluster reads them first, MatchQueue.take).
                claim = None if layer.cluster else (claims.key(each.player_id, bucket.game), WIDE.lease_ms)
                taken = await queue.take(bucket.bucket_id, ticket, each, 1500, now, pairing=bucket, claim=claim)
                assert taken.queued and not taken.resumed
                settle(bucket, taken.matches)
            else:  # queued, then paired by the worker's pass: tables fill up to six
                assert await queue.enqueue(bucket.bucket_id, ticket, each, 1500, now) is None

    for round_ in range(1000):
        now = NOW + round_ * 100
        await asyncio.gather(*(search(b, people[b.bucket_id], now) for b in (pairs, tables)))
        for bucket in (pairs, tables):
            settle(bucket, await queue.pair(bucket, now + 50))
        # Started and told, as a gateway does: the players' next searches queue afresh.
        await asyncio.gather(*(queue.mark_started(b, m.game_id, m.tickets, told=m.tickets) for b, m in formed))
        formed.clear()
        # Two seats: whoever is left waiting is kept apart by a block from everyone else left.
        left = sorted(queued[pairs.bucket_id])
        assert all(frozenset(pair) in apart for pair in itertools.combinations(left, 2)), left
        if round_ % 100 == 50:
            # A block made while both wait: honoured from the renewal that reads the lists again.
            for bucket in (pairs, tables):
                waiting = queued[bucket.bucket_id]
                free = [pair for pair in itertools.combinations(sorted(waiting), 2) if frozenset(pair) not in apart]
                if free:
                    a, b = rng.choice(free)
                    await block(redis, a, b)
                    apart.add(frozenset((a, b)))
                    statuses = await queue.renew(bucket.bucket_id, list(waiting.values()), now, players=list(waiting))
                    assert {s.kind for s in statuses} == {"queued"}

    # Everyone not kept apart was seated, round after round (16 players a bucket, 1,000 rounds).
    assert seated[pairs.bucket_id] > 5000 and seated[tables.bucket_id] > 5000, seated
    for bucket in (pairs, tables):
        for ticket in queued[bucket.bucket_id].values():
            assert await queue.cancel(bucket.bucket_id, ticket)
        # Nothing of the lists outlives the tickets: no list, no count.
        fields = await redis.hkeys(bucket_keys(bucket.bucket_id).requests)
        assert [f for f in fields if text(f).startswith("a")] == []


async def test_a_block_read_again_keeps_two_waiting_players_apart(redis: Redis, layer: RedisLayer) -> None:
    queue = MatchQueue(layer, WIDE)
    bucket = spec()
    me, you, third = player(), player(), player()
    mine = new_ticket_id()
    assert await queue.enqueue(bucket.bucket_id, mine, me, 1500, NOW) is None
    # Blocked after my ticket was queued, and by thousands of others (the lists are read in slices).
    await block(redis, me.player_id, you.player_id)
    await redis.sadd(player_key(me.player_id, "blocked-by"), *(f"other-{i}" for i in range(5000)))
    # Your own search reads your lists (blocked by me): we are kept apart, though mine predates it.
    yours = new_ticket_id()
    taken = await queue.take(bucket.bucket_id, yours, you, 1500, NOW + 1, pairing=bucket)
    assert taken.queued and taken.matches == ()
    assert await queue.pair(bucket, NOW + 2) == []
    # Lifted and read again on both tickets' renewal: we may meet.
    await redis.hdel(player_key(me.player_id, "blocks"), you.player_id)
    await redis.srem(player_key(you.player_id, "blocked-by"), me.player_id)
    await queue.renew(bucket.bucket_id, [mine, yours], NOW + 3, players=[me.player_id, you.player_id])
    (match,) = await queue.pair(bucket, NOW + 4)
    assert {p.player_id for p in match.players} == {me.player_id, you.player_id}

    # Both waiting (queued without pairing), then one blocks the other: the renewal that reads the
    # lists again keeps them apart, and a third player still meets one of them.
    ann, ben = player(), player()
    first, second = new_ticket_id(), new_ticket_id()
    assert await queue.enqueue(bucket.bucket_id, first, ann, 1500, NOW + 10) is None
    assert await queue.enqueue(bucket.bucket_id, second, ben, 1500, NOW + 11) is None
    await block(redis, ben.player_id, ann.player_id)
    statuses = await queue.renew(bucket.bucket_id, [first, second], NOW + 12, players=[ann.player_id, ben.player_id])
    assert [s.kind for s in statuses] == ["queued", "queued"]
    assert await queue.pair(bucket, NOW + 13) == []
    taken = await queue.take(bucket.bucket_id, new_ticket_id(), third, 1500, NOW + 14, pairing=bucket)
    (match,) = taken.matches
    met = {p.player_id for p in match.players}
    assert third.player_id in met and len(met & {ann.player_id, ben.player_id}) == 1


async def test_a_gateway_reads_the_lists_again_while_its_players_wait(redis_url: str, redis: Redis) -> None:
    # 400 points apart: their windows (100 + 300 a second) meet after a second of waiting; the
    # block comes before that, after both queued, and only the worker's renewal can learn it.
    settings = dataclasses.replace(FAST, widen_per_s=300.0)
    me, you, third = player(), player(), player()
    ratings = FixedRatings({me.player_id: 1500, you.player_id: 1900, third.player_id: 1700})
    bucket = spec()
    seen: dict[str, list[play_pb2.FindMatchResponse]] = {p.player_id: [] for p in (me, you, third)}
    queued = {p.player_id: asyncio.Event() for p in (me, you, third)}
    matched = {p.player_id: asyncio.Event() for p in (me, you, third)}

    async def follow(matchmaker: Matchmaker, who: play_pb2.Player) -> None:
        async for message in matchmaker.find(bucket, who):
            seen[who.player_id].append(message)
            (matched if message.HasField("matched") else queued)[who.player_id].set()

    async with process_redis(redis_url) as (layer, pubsub):
        matchmaker = Matchmaker(layer, pubsub, RecordingStarter(), ratings, settings)
        await matchmaker.listen()
        tasks = [asyncio.create_task(follow(matchmaker, p)) for p in (me, you)]
        try:
            await asyncio.wait_for(asyncio.gather(queued[me.player_id].wait(), queued[you.player_id].wait()), 5)
            await block(redis, me.player_id, you.player_id)
            await asyncio.sleep(2.0)  # both windows are 700 wide by now
            assert not matched[me.player_id].is_set() and not matched[you.player_id].is_set()
            tasks.append(asyncio.create_task(follow(matchmaker, third)))
            await asyncio.wait_for(matched[third.player_id].wait(), 5)
            (found,) = [m.matched for m in seen[third.player_id] if m.HasField("matched")]
            met = {p.player.player_id for p in found.players} - {third.player_id}
            assert len(met) == 1 and met <= {me.player_id, you.player_id}
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            await matchmaker.close()
