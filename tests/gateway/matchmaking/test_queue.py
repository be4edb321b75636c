"""The matchmaking scripts against a real Redis: atomic pairing, rating windows, tables, expiry,
cancellation, one ticket per player."""

from __future__ import annotations

import asyncio
import dataclasses
import random
from collections import Counter

from redis.asyncio import Redis

from gateway.matchmaking.model import FormedMatch, new_ticket_id
from gateway.matchmaking.queue import MAX_MATCHES_PER_PAIRING, MatchQueue
from kit.redis.keys import bucket_keys
from kit.redis.layer import RedisLayer
from tests.gateway.lobby_helpers import FAST, player, spec

NOW = 1_700_000_000_000
# Long leases, so tests can move the clock by minutes without renewing.
LONG = dataclasses.replace(FAST, lease_s=600, ticket_ttl_s=600)


async def queue_tickets(queue: MatchQueue, bucket_id: str, ratings: list[float], now: int = NOW) -> list[str]:
    tickets = []
    for i, rating in enumerate(ratings):
        ticket = new_ticket_id()
        assert await queue.enqueue(bucket_id, ticket, player(), rating, now + i) is None
        tickets.append(ticket)
    return tickets


def seated(matches: list[FormedMatch]) -> list[str]:
    return [t for m in matches for t in m.tickets]


async def test_200_tickets_from_two_connections_are_each_paired_exactly_once(redis_url: str) -> None:
    # Two separate clients, each with a small pool, as two gateway processes would have.
    a = RedisLayer.connect(redis_url, max_connections=8)
    b = RedisLayer.connect(redis_url, max_connections=8)
    try:
        settings = dataclasses.replace(FAST, lease_s=600, ticket_ttl_s=600)
        queues = [MatchQueue(a, settings), MatchQueue(b, settings)]
        bucket = spec()
        rng = random.Random(7)
        ratings = [rng.gauss(1500, 250) for _ in range(200)]
        tickets = [new_ticket_id() for _ in range(200)]
        formed: list[FormedMatch] = []
        stop = asyncio.Event()

        async def enqueue(i: int) -> None:
            await asyncio.sleep(rng.random() * 0.05)
            q = queues[i % 2]
            assert await q.enqueue(bucket.bucket_id, tickets[i], player(f"u{i}"), ratings[i], NOW + i) is None

        async def pairer(q: MatchQueue) -> None:
            # Pair over and over while tickets arrive, with time far enough on that every window
            # is at its widest: everything that can pair must pair.
            while not stop.is_set():
                formed.extend(await q.pair(bucket, NOW + 200_000))
                await asyncio.sleep(0)

        pairers = [asyncio.create_task(pairer(q)) for q in queues for _ in range(3)]
        await asyncio.gather(*(enqueue(i) for i in range(200)))
        for _ in range(3):
            formed.extend(await queues[0].pair(bucket, NOW + 200_000))
        stop.set()
        await asyncio.gather(*pairers)

        counts = Counter(seated(formed))
        assert all(n == 1 for n in counts.values()), [t for t, n in counts.items() if n > 1]
        assert len(formed) == 100
        assert set(counts) == set(tickets)
        assert len({m.game_id for m in formed}) == 100
        for m in formed:
            assert len(m.tickets) == 2 and len(set(p.player_id for p in m.players)) == 2
        # Each ticket's recorded result names its own match and seat.
        keys = bucket_keys(bucket.bucket_id)
        for m in formed:
            for seat, t in enumerate(m.tickets):
                assert await a.client.hget(keys.results, t) == f"{m.game_id}|{seat}".encode()
        assert await a.client.zcard(keys.queue) == 0
        # Each player's paired ticket stays theirs (a search of theirs would attach to the match)
        # until a search tells them; then nothing is left but the results.
        assert {t.decode() for t in (await a.client.hgetall(keys.owners)).values()} == set(tickets)
        await asyncio.gather(*(queues[0].told(bucket.bucket_id, t) for t in tickets))
        assert await a.client.hlen(keys.owners) == 0
        assert not [f for f in await a.client.hkeys(keys.requests) if f.startswith(b"p|")]
    finally:
        await a.close()
        await b.close()


async def test_close_ratings_are_preferred(redis: Redis, layer: RedisLayer) -> None:
    queue = MatchQueue(layer, LONG)
    bucket = spec()
    t1500, t1800, t1510 = await queue_tickets(queue, bucket.bucket_id, [1500, 1800, 1510])
    matches = await queue.pair(bucket, NOW + 10)
    assert len(matches) == 1
    assert set(matches[0].tickets) == {t1500, t1510}
    statuses = await queue.renew(bucket.bucket_id, [t1800], NOW + 10)
    assert statuses[0].kind == "queued"


async def test_the_rating_window_widens_with_waiting(redis: Redis, layer: RedisLayer) -> None:
    queue = MatchQueue(layer, LONG)
    bucket = spec()
    low, high = await queue_tickets(queue, bucket.bucket_id, [1500, 1800])
    # 300 apart: windows are 100 at first, 100 + 10/s: 20 s later still 300 - not quite ...
    assert await queue.pair(bucket, NOW + 1_000) == []
    assert await queue.pair(bucket, NOW + 19_000) == []
    # ... 21 s later the window (310) covers the distance.
    matches = await queue.pair(bucket, NOW + 21_000)
    assert [set(m.tickets) for m in matches] == [{low, high}]


async def test_a_long_wait_accepts_a_newcomer_far_away(redis: Redis, layer: RedisLayer) -> None:
    queue = MatchQueue(layer, LONG)
    bucket = spec()
    (old,) = await queue_tickets(queue, bucket.bucket_id, [2300], now=NOW)
    (new,) = await queue_tickets(queue, bucket.bucket_id, [1500], now=NOW + 90_000)
    # The old ticket has waited 90 s: window 1000 > 800.
    matches = await queue.pair(bucket, NOW + 90_001)
    assert [set(m.tickets) for m in matches] == [{old, new}]


async def test_windows_never_exceed_the_maximum(redis: Redis, layer: RedisLayer) -> None:
    queue = MatchQueue(layer, LONG)
    bucket = spec()
    await queue_tickets(queue, bucket.bucket_id, [1000, 2200])
    assert await queue.pair(bucket, NOW + 59_000) == []


async def test_tables_fill_to_the_maximum(redis: Redis, layer: RedisLayer) -> None:
    queue = MatchQueue(layer, LONG)
    bucket = spec(2, 6, game="coloursquare")
    tickets = await queue_tickets(queue, bucket.bucket_id, [1500 + i for i in range(13)])
    matches = await queue.pair(bucket, NOW + 100)
    assert [len(m.tickets) for m in matches] == [6, 6]
    assert set(seated(matches)) < set(tickets)
    (left,) = set(tickets) - set(seated(matches))
    assert (await queue.renew(bucket.bucket_id, [left], NOW + 100))[0].kind == "queued"
    # Alone it never starts, whatever the wait.
    assert await queue.pair(bucket, NOW + 50_000) == []


async def test_a_table_starts_at_its_minimum_after_the_fill_wait(redis: Redis, layer: RedisLayer) -> None:
    queue = MatchQueue(layer, LONG)
    bucket = spec(3, 6, game="coloursquare")
    tickets = await queue_tickets(queue, bucket.bucket_id, [1500, 1510, 1490])
    assert await queue.pair(bucket, NOW + 100) == []  # at the minimum, not full, no wait yet
    assert await queue.pair(bucket, NOW + 14_900) == []
    matches = await queue.pair(bucket, NOW + 15_000)  # the oldest has waited 15 s
    assert [set(m.tickets) for m in matches] == [set(tickets)]
    assert [len(m.players) for m in matches] == [3]


async def test_below_the_minimum_a_table_never_starts(redis: Redis, layer: RedisLayer) -> None:
    queue = MatchQueue(layer, FAST)
    bucket = spec(3, 6, game="coloursquare")
    tickets = await queue_tickets(queue, bucket.bucket_id, [1500, 1510])
    for t in range(0, 60_000, 4_000):
        assert await queue.pair(bucket, NOW + t) == []
        await queue.renew(bucket.bucket_id, tickets, NOW + t)


async def test_tables_of_every_size_from_2_to_6(redis: Redis, layer: RedisLayer) -> None:
    for size in range(2, 7):
        queue = MatchQueue(layer, LONG)
        bucket = spec(size, size, game="coloursquare")
        tickets = await queue_tickets(queue, bucket.bucket_id, [1500.0] * (size * 3 + 1))
        matches = await queue.pair(bucket, NOW + 100)
        assert [len(m.tickets) for m in matches] == [size] * 3
        assert len(set(seated(matches))) == size * 3
        assert len(set(tickets) - set(seated(matches))) == 1
        for m in matches:
            seats = [
                int((await redis.hget(bucket_keys(bucket.bucket_id).results, t) or b"").split(b"|")[1])
                for t in m.tickets
            ]
            assert seats == list(range(size))


async def test_a_table_keeps_to_its_rating_window(redis: Redis, layer: RedisLayer) -> None:
    queue = MatchQueue(layer, LONG)
    bucket = spec(2, 4, game="coloursquare")
    near = await queue_tickets(queue, bucket.bucket_id, [1500, 1520, 1540, 1560])
    far = await queue_tickets(queue, bucket.bucket_id, [2500, 2510])
    matches = await queue.pair(bucket, NOW + 100)
    assert [set(m.tickets) for m in matches] == [set(near)]
    # The far pair is below a full table; after the fill wait it starts at two.
    matches = await queue.pair(bucket, NOW + 15_010)
    assert [set(m.tickets) for m in matches] == [set(far)]


async def test_cancel_removes_the_ticket(redis: Redis, layer: RedisLayer) -> None:
    queue = MatchQueue(layer, FAST)
    bucket = spec()
    first, second = await queue_tickets(queue, bucket.bucket_id, [1500, 2500])
    assert await queue.cancel(bucket.bucket_id, first) is True
    assert await queue.cancel(bucket.bucket_id, first) is False
    (third,) = await queue_tickets(queue, bucket.bucket_id, [2500])
    matches = await queue.pair(bucket, NOW + 10)
    assert [set(m.tickets) for m in matches] == [{second, third}]
    assert await queue.cancel(bucket.bucket_id, second) is False  # already paired
    keys = bucket_keys(bucket.bucket_id)
    assert await redis.zcard(keys.queue) == 0 and await redis.hlen(keys.tickets) == 0


async def test_a_ticket_whose_lease_lapses_is_gone(redis: Redis, layer: RedisLayer) -> None:
    queue = MatchQueue(layer, FAST)
    bucket = spec()
    (ghost,) = await queue_tickets(queue, bucket.bucket_id, [1500])
    # Its gateway died: nobody renews it. After the lease (5 s) it is gone, never paired.
    (live,) = await queue_tickets(queue, bucket.bucket_id, [1500], now=NOW + 5_001)
    assert await queue.pair(bucket, NOW + 5_002) == []
    statuses = await queue.renew(bucket.bucket_id, [ghost, live], NOW + 5_003)
    assert [s.kind for s in statuses] == ["gone", "queued"]
    keys = bucket_keys(bucket.bucket_id)
    assert await redis.hexists(keys.tickets, ghost) == 0
    assert await redis.hexists(keys.players, ghost) == 0


async def test_renewed_tickets_still_expire_at_the_hard_limit(redis: Redis, layer: RedisLayer) -> None:
    queue = MatchQueue(layer, FAST)
    bucket = spec()
    (ticket,) = await queue_tickets(queue, bucket.bucket_id, [1500])
    for t in range(0, 60_000, 4_000):
        assert (await queue.renew(bucket.bucket_id, [ticket], NOW + t))[0].kind == "queued"
    assert (await queue.renew(bucket.bucket_id, [ticket], NOW + 60_001))[0].kind == "gone"


async def test_the_bucket_keys_expire(redis: Redis, layer: RedisLayer) -> None:
    queue = MatchQueue(layer, FAST)
    bucket = spec()
    await queue_tickets(queue, bucket.bucket_id, [1500])
    ttl = await redis.pttl(bucket_keys(bucket.bucket_id).queue)
    assert 0 < ttl <= (FAST.ticket_ttl_s + FAST.result_ttl_s + FAST.lease_s) * 1000


async def test_every_bucket_key_holding_data_has_its_ttl_through_a_bucket_s_life(
    redis: Redis, layer: RedisLayer
) -> None:
    # The scripts touch only the keys they write: a key emptied (the queue when its last ticket
    # pairs) and re-created by a later write must get its TTL again, and so must every key a
    # take-over, a renewal or a pairing writes first.
    queue = MatchQueue(layer, FAST)
    bucket = spec()
    bound = (FAST.ticket_ttl_s + FAST.result_ttl_s + FAST.lease_s) * 1000
    keys = bucket_keys(bucket.bucket_id)

    async def all_expire() -> set[str]:
        alive = set()
        for key in keys.all():
            ttl = await redis.pttl(key)
            assert ttl == -2 or 0 < ttl <= bound, (key, ttl)
            if ttl > 0:
                alive.add(key)
        return alive

    me, you = player(), player()
    a = await queue.take(bucket.bucket_id, new_ticket_id(), me, 1500, NOW, request_id="r1", owner="o1")
    await all_expire()
    await queue.take(bucket.bucket_id, new_ticket_id(), you, 1500, NOW + 1)
    (match,) = await queue.pair(bucket, NOW + 2)
    assert await redis.exists(keys.queue) == 0  # emptied: gone with its TTL
    assert await all_expire() >= {keys.results, keys.matches, keys.gc, keys.players}
    assert await queue.mark_started(bucket.bucket_id, match.game_id, match.tickets)
    # The same search sent again after it was paired resumes it (writes the owner only).
    again = await queue.take(bucket.bucket_id, new_ticket_id(), me, 1500, NOW + 3, request_id="r1", owner="o2")
    assert again.resumed and again.ticket_id == a.ticket_id
    # A new ticket re-creates the emptied queue, tickets, leases and waiting keys.
    (later,) = await queue_tickets(queue, bucket.bucket_id, [1500], now=NOW + 4)
    assert await all_expire() >= {keys.queue, keys.tickets, keys.leases, keys.owners, keys.requests}
    assert [s.kind for s in await queue.renew(bucket.bucket_id, [later], NOW + 5)] == ["queued"]
    await all_expire()
    assert await queue.cancel(bucket.bucket_id, later)
    await queue.pair(bucket, NOW + 61_000)  # past the results' keep time: they are swept
    await all_expire()


async def test_one_ticket_per_player_per_bucket(redis: Redis, layer: RedisLayer) -> None:
    queue = MatchQueue(layer, FAST)
    bucket, other = spec(), spec()
    me = player()
    first = new_ticket_id()
    assert await queue.enqueue(bucket.bucket_id, first, me, 1500, NOW) is None
    assert await queue.enqueue(bucket.bucket_id, new_ticket_id(), me, 1500, NOW) == first
    assert await queue.enqueue(other.bucket_id, new_ticket_id(), me, 1500, NOW) is None
    await queue.cancel(bucket.bucket_id, first)
    assert await queue.enqueue(bucket.bucket_id, new_ticket_id(), me, 1500, NOW) is None


async def test_results_are_dropped_after_their_ttl(redis: Redis, layer: RedisLayer) -> None:
    queue = MatchQueue(layer, FAST)
    bucket = spec()
    tickets = await queue_tickets(queue, bucket.bucket_id, [1500, 1500])
    (match,) = await queue.pair(bucket, NOW + 10)
    assert (await queue.lookup(bucket.bucket_id, match.game_id)) is not None
    statuses = await queue.renew(bucket.bucket_id, tickets, NOW + 20)
    assert {(s.kind, s.game_id, s.started) for s in statuses} == {("matched", match.game_id, False)}
    assert await queue.mark_started(bucket.bucket_id, match.game_id)
    statuses = await queue.renew(bucket.bucket_id, tickets, NOW + 30)
    assert sorted(s.seat for s in statuses) == [0, 1] and all(s.started for s in statuses)
    # A later script call after the result TTL clears the match.
    await queue.renew(bucket.bucket_id, [], NOW + 61_000)
    await queue.pair(bucket, NOW + 61_000)
    assert await queue.lookup(bucket.bucket_id, match.game_id) is None
    keys = bucket_keys(bucket.bucket_id)
    assert await redis.hlen(keys.results) == 0 and await redis.hlen(keys.players) == 0


async def test_one_call_forms_a_bounded_number_of_matches(redis: Redis, layer: RedisLayer) -> None:
    queue = MatchQueue(layer, LONG)
    bucket = spec()
    tickets = await queue_tickets(queue, bucket.bucket_id, [1500.0] * (2 * MAX_MATCHES_PER_PAIRING + 10))
    first = await queue.pair(bucket, NOW + 10_000)
    assert len(first) == MAX_MATCHES_PER_PAIRING
    # The oldest tickets go first (each with its nearest rating, whoever that is).
    assert set(tickets[:MAX_MATCHES_PER_PAIRING]) <= set(seated(first))
    second = await queue.pair(bucket, NOW + 10_000)
    assert len(second) == 5


async def test_a_new_ticket_is_paired_in_its_own_enqueue_by_the_pairing_rule(redis: Redis, layer: RedisLayer) -> None:
    queue = MatchQueue(layer, FAST)
    bucket = spec()
    b = bucket.bucket_id
    first = await queue.take(b, new_ticket_id(), player(), 1500, NOW, pairing=bucket)
    assert first.queued and first.matches == ()  # alone: nothing to pair
    # Its gateway died: its lease lapses (5 s); a newcomer after that is not paired with it.
    late = await queue.take(b, new_ticket_id(), player(), 1500, NOW + 5_001, pairing=bucket)
    assert late.matches == ()
    far = await queue.take(b, new_ticket_id(), player(), 2500, NOW + 5_002, pairing=bucket)
    assert far.matches == ()  # outside both windows
    near = await queue.take(b, new_ticket_id(), player(), 1550, NOW + 5_003, pairing=bucket)
    (match,) = near.matches
    assert set(match.tickets) == {late.ticket_id, near.ticket_id}
    assert match.game_id == f"m-{late.ticket_id}"  # named after the oldest ticket, as a pass names it
    # The paired tickets left the queue, the far one waits; the result is recorded as a pass's is.
    statuses = await queue.renew(b, [late.ticket_id, near.ticket_id, far.ticket_id, first.ticket_id], NOW + 5_004)
    assert [s.kind for s in statuses] == ["matched", "matched", "queued", "gone"]
    assert await queue.pair(bucket, NOW + 5_005) == []
    # Without the pairing arguments an enqueue only queues.
    alone = await queue.take(b, new_ticket_id(), player(), 2500, NOW + 5_006)
    assert alone.queued and alone.matches == ()
    assert await redis.zcard(bucket_keys(b).queue) == 2
