"""Scenario `presence`: followed accounts coming online and going offline, every follower told.

1. `--followers` registered accounts each follow `--follows` of `--followed` registered accounts,
   spread evenly (follower f follows accounts f*follows ... f*follows+follows-1, modulo
   --followed: each followed account has followers*follows/followed followers), and open their
   account event streams (EventService.WatchMyEvents).
2. Online: every followed account opens its own event stream — a connected player — all at once
   (`--rate 0`) or `--rate` accounts a second. Offline: after every follower has been told (or
   nothing more came for `--settle` s), each closes it again, at the same pace.
3. Each follower's stream must deliver PresenceChanged for each account it follows, once per
   wave: ONLINE, then OFFLINE.

Reported per wave: the PresenceChanged delivered against expected (missing, doubled, others),
the latency from the account's change (its stream opened, or cancelled) to each follower's
receipt (p50/p99/max), the time from the wave's first change until every follower had every
change ("all updated within"), and, for the online wave, the two steps apart: the account's
stream answering `ready` (the gateway taking the stream), then its followers being told. Also
the gateway's RSS and the CPU of the gateway and Redis in each wave.

Registering is scrypt on the gateway (~50 ms of CPU an account): `--accounts FILE` keeps the
accounts and their sessions (a day) for the next run of the same layout, whose follows are
then in place already.

Every player comes from this one address: start the platform with the per-source limits raised
(docs/benchmarks.md gives the command).
"""

from __future__ import annotations

import asyncio
import json
import os
import resource
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import grpc
from tafel.play.v1 import challenges_pb2, play_pb2_grpc, social_pb2, social_pb2_grpc

from tafel_loadgen.chat import _auth, _reason, gateway_pid
from tafel_loadgen.social import STREAMS_PER_CHANNEL, Stream, _channel, _rss_mib, register
from tafel_loadgen.stats import Stats, cpu_seconds, percentile, server_processes

S = social_pb2
STATES: dict[int, str] = {S.PRESENCE_STATE_ONLINE: "online", S.PRESENCE_STATE_OFFLINE: "offline"}
SESSION_KEPT_S = 20 * 3600  # a cached session is used while younger than this (they last a day)
CONCURRENT_CALLS = 200


def _cpu_self() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


async def _bounded(calls: list[Callable[[], Any]], limit: int = CONCURRENT_CALLS) -> list[Any]:
    gate = asyncio.Semaphore(limit)

    async def one(call: Callable[[], Any]) -> Any:
        async with gate:
            return await call()

    return await asyncio.gather(*(one(call) for call in calls), return_exceptions=True)


async def _accounts(
    target: str, followers: int, follows: int, followed: int, cache: Path | None, stats: Stats
) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """(followers, followed) as (username, token), each follower following its share."""
    layout = {"target": target, "followers": followers, "follows": follows, "followed": followed}
    channel = _channel(target)
    friends = social_pb2_grpc.FriendServiceStub(channel)
    kept = json.loads(cache.read_text()) if cache and cache.exists() else {}  # noqa: ASYNC240 (small, once)
    if kept.get("layout") == layout and time.time() - kept.get("made", 0) < SESSION_KEPT_S:
        first: list[tuple[str, str]] = [(name, token) for name, token in kept["followers"]]
        try:
            listed = await friends.ListFollowing(S.ListFollowingRequest(), metadata=_auth(first[0][1]))
            if len(listed.following) == follows:
                print(f"presence: the accounts of {cache} (made {(time.time() - kept['made']) / 3600:.1f} h ago)")
                await channel.close()
                return first, [(name, token) for name, token in kept["followed"]]
        except grpc.aio.AioRpcError:
            pass  # another platform's (its Redis reset): make new ones
    started = time.perf_counter()
    accounts = play_pb2_grpc.AccountServiceStub(channel)
    people = await register(accounts, followers + followed)
    fans, stars = people[:followers], people[followers:]
    print(f"presence: {len(people):,} accounts registered in {time.perf_counter() - started:.0f} s")
    started = time.perf_counter()

    def follow(fan: int, j: int) -> Callable[[], Any]:
        star = stars[(fan * follows + j) % followed][0]
        return lambda: friends.Follow(S.FollowRequest(username=star), metadata=_auth(fans[fan][1]))

    answers = await _bounded([follow(fan, j) for fan in range(followers) for j in range(follows)])
    for answer in answers:
        if isinstance(answer, grpc.aio.AioRpcError):
            stats.errors[f"follow {_reason(answer)}"] += 1
    print(f"presence: {followers * follows:,} follows in {time.perf_counter() - started:.0f} s")
    await channel.close()
    if cache and not stats.errors:
        cache.write_text(  # noqa: ASYNC240 (small, once)
            json.dumps({"layout": layout, "made": time.time(), "followers": fans, "followed": stars})
        )
    return fans, stars


class Wave:
    """One wave's expectations and receipts: every follower told of each account it follows."""

    def __init__(self, state: int, watched_by: dict[str, list[int]]) -> None:
        self.state = state
        self.watched_by = watched_by
        self.expected = sum(len(fans) for fans in watched_by.values())
        self.changed_at: dict[str, float] = {}  # account -> when its stream opened (or was cancelled)
        self.ready_at: dict[str, float] = {}  # online: account -> its own stream's `ready`
        self.first: dict[tuple[int, str], float] = {}  # (follower, account) -> first receipt
        self.doubled = 0
        self.others: Counter[str] = Counter()
        self.last_receipt = 0.0

    def take(self, fan: int, name: str, state: int, now: float) -> None:
        if state != self.state:
            self.others[STATES.get(state, str(state))] += 1
            return
        key = (fan, name)
        if key in self.first:
            self.doubled += 1
        else:
            self.first[key] = now
            self.last_receipt = now

    def report(self, label: str) -> dict[str, Any]:
        latencies = [at - self.changed_at[name] for (_, name), at in self.first.items() if name in self.changed_at]
        begin = min(self.changed_at.values(), default=0.0)
        end = max(self.changed_at.values(), default=0.0)
        summary: dict[str, Any] = {
            "delivered": len(self.first),
            "expected": self.expected,
            "missing": self.expected - len(self.first),
            "doubled": self.doubled,
            "other_states": dict(self.others),
            "p50_ms": round(percentile(latencies, 0.5) * 1000, 1),
            "p99_ms": round(percentile(latencies, 0.99) * 1000, 1),
            "max_ms": round(max(latencies, default=0.0) * 1000, 1),
            "changes_took_s": round(end - begin, 2),
            "all_updated_within_s": round(self.last_receipt - begin, 2) if self.first else None,
        }
        print(
            f"presence: {label}: {summary['delivered']:,} of {self.expected:,} PresenceChanged delivered"
            f" (missing {summary['missing']:,}, doubled {self.doubled:,}, other states {dict(self.others) or 0})"
        )
        print(
            f"presence: {label}: change -> follower's stream p50 {summary['p50_ms']:.0f} ms,"
            f" p99 {summary['p99_ms']:.0f} ms, max {summary['max_ms']:.0f} ms; the {len(self.changed_at):,}"
            f" changes made over {end - begin:.2f} s, every follower updated"
            f" {summary['all_updated_within_s']} s after the first"
        )
        if self.ready_at:
            opened = [self.ready_at[name] - self.changed_at[name] for name in self.ready_at]
            told = [at - self.ready_at[name] for (_, name), at in self.first.items() if name in self.ready_at]
            summary["open_to_ready_ms"] = {
                "p50": round(percentile(opened, 0.5) * 1000, 1),
                "p99": round(percentile(opened, 0.99) * 1000, 1),
                "max": round(max(opened, default=0.0) * 1000, 1),
            }
            summary["ready_to_told_ms"] = {
                "p50": round(percentile(told, 0.5) * 1000, 1),
                "p99": round(percentile(told, 0.99) * 1000, 1),
                "max": round(max(told, default=0.0) * 1000, 1),
            }
            print(
                f"presence: {label}: the steps: stream opened -> its `ready` p50"
                f" {summary['open_to_ready_ms']['p50']:.0f} ms, p99 {summary['open_to_ready_ms']['p99']:.0f} ms,"
                f" max {summary['open_to_ready_ms']['max']:.0f} ms; `ready` -> follower told p50"
                f" {summary['ready_to_told_ms']['p50']:.0f} ms, p99 {summary['ready_to_told_ms']['p99']:.0f} ms,"
                f" max {summary['ready_to_told_ms']['max']:.0f} ms"
            )
        return summary


async def _until_told(wave: Wave, settle_s: float) -> None:
    """Until every follower has the wave's every change, or nothing more came for `settle_s`."""
    last, still = -1, time.perf_counter()
    while len(wave.first) < wave.expected:
        if len(wave.first) != last:
            last, still = len(wave.first), time.perf_counter()
        elif time.perf_counter() - still > settle_s:
            return
        await asyncio.sleep(0.05)


async def _paced(count: int, rate: float, step: Callable[[int], None]) -> None:
    begin = time.perf_counter()
    for index in range(count):
        if rate > 0:
            await asyncio.sleep(max(0.0, begin + index / rate - time.perf_counter()))
        elif index % 500 == 0:
            await asyncio.sleep(0)  # all at once, yet the loop keeps reading the followers' streams
        step(index)


async def run_presence(
    targets: list[str],
    followed: int,
    followers: int,
    follows: int,
    rate: float = 0.0,
    settle_s: float = 10.0,
    accounts_file: str | None = None,
) -> Stats:
    stats = Stats()
    target = targets[0]
    follows = min(follows, followed)
    pid = gateway_pid(target)
    rss = {"at rest": _rss_mib(pid) if pid else 0.0}
    cache = Path(accounts_file) if accounts_file else None
    fans, stars = await _accounts(target, followers, follows, followed, cache, stats)
    if stats.errors:
        return stats
    watched_by: dict[str, list[int]] = {name: [] for name, _ in stars}
    for fan in range(followers):
        for j in range(follows):
            watched_by[stars[(fan * follows + j) % followed][0]].append(fan)
    waves = {S.PRESENCE_STATE_ONLINE: Wave(S.PRESENCE_STATE_ONLINE, watched_by)}
    waves[S.PRESENCE_STATE_OFFLINE] = Wave(S.PRESENCE_STATE_OFFLINE, watched_by)
    current: list[Wave] = []  # the wave under way: receipts count towards it
    before_waves = Counter[str]()

    def on_event(fan: int) -> Callable[[challenges_pb2.AccountEvent], None]:
        def take(event: challenges_pb2.AccountEvent) -> None:
            if event.WhichOneof("kind") != "presence":
                return
            now = time.perf_counter()
            change = event.presence
            if not current:
                before_waves[STATES.get(change.presence.state, "other")] += 1
                return
            for wave in current:
                wave.take(fan, change.player.username, change.presence.state, now)

        return take

    channels = [_channel(target) for _ in range((followers + followed) // STREAMS_PER_CHANNEL + 1)]

    def channel_for(index: int) -> grpc.aio.Channel:
        return channels[index // STREAMS_PER_CHANNEL]

    listening = [Stream(channel_for(fan), token, on_event(fan)) for fan, (_, token) in enumerate(fans)]
    for result in await asyncio.gather(*(s.ready for s in listening), return_exceptions=True):
        if isinstance(result, grpc.aio.AioRpcError):
            stats.errors[f"follower's stream {_reason(result)}"] += 1
    await asyncio.sleep(1)  # anything the follows themselves set off has arrived
    rss["followers listening"] = _rss_mib(pid) if pid else 0.0
    servers = [s for s in server_processes([target]) if s.kind in ("gateway", "redis")]
    summaries: dict[str, Any] = {}
    online: list[Stream | None] = [None] * followed
    cpu_client = _cpu_self()

    # Online: each followed account opens its event stream.
    wave = rising = waves[S.PRESENCE_STATE_ONLINE]
    current.append(wave)
    cpu = {s.pid: cpu_seconds(s.pid) for s in servers}

    def come_online(index: int) -> None:
        name, token = stars[index]
        rising.changed_at[name] = time.perf_counter()
        stream = Stream(channel_for(followers + index), token, lambda event: None)
        stream.ready.add_done_callback(lambda done: _ready(done, name))
        online[index] = stream

    def _ready(done: asyncio.Future[None], name: str) -> None:
        if done.cancelled():
            return
        error = done.exception()
        if error is not None:
            why = _reason(error) if isinstance(error, grpc.aio.AioRpcError) else type(error).__name__
            stats.errors[f"followed's stream {why}"] += 1
            return
        rising.ready_at[name] = time.perf_counter()

    await _paced(followed, rate, come_online)
    await _until_told(wave, settle_s)
    current.clear()
    summaries["online"] = wave.report("online")
    summaries["online"]["cpu_s"] = _cpu_spent(servers, cpu)
    rss["followed online"] = _rss_mib(pid) if pid else 0.0

    # Offline: each closes it again.
    wave = falling = waves[S.PRESENCE_STATE_OFFLINE]
    current.append(wave)
    cpu = {s.pid: cpu_seconds(s.pid) for s in servers}

    def go_offline(index: int) -> None:
        stream = online[index]
        if stream is not None:
            falling.changed_at[stars[index][0]] = time.perf_counter()
            stream.close()

    await _paced(followed, rate, go_offline)
    await _until_told(wave, settle_s)
    current.clear()
    summaries["offline"] = wave.report("offline")
    summaries["offline"]["cpu_s"] = _cpu_spent(servers, cpu)
    rss["after"] = _rss_mib(pid) if pid else 0.0
    client_cpu = _cpu_self() - cpu_client

    for stream in listening:
        stream.close()
    for channel in channels:
        await channel.close()
    for label, summary in summaries.items():
        spent = ", ".join(f"{name} {seconds:.1f} s" for name, seconds in summary["cpu_s"].items())
        print(f"presence: {label}: CPU {spent}")
        if summary["missing"]:
            stats.errors[f"{label} PRESENCE_MISSING"] += summary["missing"]
        if summary["doubled"]:
            stats.errors[f"{label} PRESENCE_DOUBLED"] += summary["doubled"]
    if before_waves:
        print(f"presence: before the waves the followers got {dict(before_waves)}")
    print("presence: gateway RSS " + ", ".join(f"{label} {mib:.0f} MiB" for label, mib in rss.items()))
    print(f"presence: load generator CPU {client_cpu:.1f} s over both waves (pid {os.getpid()})")
    for done in waves.values():
        stats.latencies.extend(
            at - done.changed_at[name] for (_, name), at in done.first.items() if name in done.changed_at
        )
    stats.client_cpu_s = client_cpu
    return stats


def _cpu_spent(servers: list[Any], before: dict[int, float]) -> dict[str, float]:
    spent = {}
    for server in servers:
        try:
            spent[f"{server.name} {server.pid}"] = round(cpu_seconds(server.pid) - before[server.pid], 2)
        except OSError:
            continue
    return spent
