"""Scenario `social`: account event streams held open, and challenges answered at a rate.

1. `--streams` players (guests) each open their account event stream (EventService.WatchMyEvents)
   on the first gateway and hold it; the gateway's RSS is read before and after (memory per
   stream), and every stream must have said `ready`.
2. `--pairs` registered pairs then challenge each other at `--rate` challenges a second in all for
   `--duration` s (open loop: a challenge is sent on schedule whether or not the last was
   answered); each challenged player declines what arrives on its event stream (an answer that
   starts no game, so the figure is the challenge path's, not game creation's). Reported: the
   challenges answered, and the p50/p99 of (create sent -> the challenged player's stream has it)
   and (decline sent -> the challenger's stream has the answer).

Every player comes from this one address: start the platform with the per-source limits raised
(docs/benchmarks.md gives the command); a deployment keeps them.
"""

from __future__ import annotations

import asyncio
import itertools
import secrets
import time
from collections.abc import Callable

import grpc
from tafel.play.v1 import challenges_pb2, challenges_pb2_grpc, play_pb2, play_pb2_grpc

from tafel_loadgen.stats import Stats, percentile, server_processes

STREAMS_PER_CHANNEL = 500  # HTTP/2 streams per client connection
C = challenges_pb2


def _channel(target: str) -> grpc.aio.Channel:
    # Its own connection: grpc shares one between channels to an address unless told not to.
    return grpc.aio.insecure_channel(target, options=[("grpc.use_local_subchannel_pool", 1)])


def _rss_mib(pid: int) -> float:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


class Stream:
    """One account's event stream: every event handed to `on_event` as it arrives."""

    def __init__(self, channel: grpc.aio.Channel, token: str, on_event: Callable[[C.AccountEvent], None]) -> None:
        stub = challenges_pb2_grpc.EventServiceStub(channel)
        self.call = stub.WatchMyEvents(C.WatchMyEventsRequest(), metadata=(("authorization", f"Bearer {token}"),))
        self.ready = asyncio.get_running_loop().create_future()
        self.on_event = on_event
        self.task = asyncio.ensure_future(self._read())

    async def _read(self) -> None:
        try:
            async for message in self.call:
                if message.HasField("ready"):
                    if not self.ready.done():
                        self.ready.set_result(None)
                else:
                    self.on_event(message.event)
        except grpc.aio.AioRpcError as error:
            if not self.ready.done():
                self.ready.set_exception(error)

    def close(self) -> None:
        self.call.cancel()
        self.task.cancel()


async def hold_streams(target: str, streams: int, stats: Stats) -> list[Stream]:
    gateway = [p for p in server_processes([target]) if p.kind == "gateway"]
    before = _rss_mib(gateway[0].pid) if gateway else 0.0
    accounts = play_pb2_grpc.AccountServiceStub(_channel(target))
    tokens: list[str] = []
    for start in range(0, streams, 200):
        batch = await asyncio.gather(
            *(accounts.SignInAsGuest(play_pb2.SignInAsGuestRequest()) for _ in range(min(200, streams - start)))
        )
        tokens.extend(answer.session.token for answer in batch)
    channels = [_channel(target) for _ in range((streams + STREAMS_PER_CHANNEL - 1) // STREAMS_PER_CHANNEL)]
    started = time.perf_counter()
    held = [Stream(channels[i // STREAMS_PER_CHANNEL], token, lambda event: None) for i, token in enumerate(tokens)]
    results = await asyncio.gather(*(s.ready for s in held), return_exceptions=True)
    failed = [r for r in results if isinstance(r, BaseException)]
    for error in failed:
        stats.errors[error.code().name if isinstance(error, grpc.aio.AioRpcError) else type(error).__name__] += 1
    took = time.perf_counter() - started
    await asyncio.sleep(2)  # let the gateway settle before reading its memory
    after = _rss_mib(gateway[0].pid) if gateway else 0.0
    held_ok = len(held) - len(failed)
    per = (after - before) * 1024 / held_ok if held_ok else 0.0
    print(f"streams: {held_ok:,} of {streams:,} ready in {took:.1f} s; gateway RSS {before:.0f} -> {after:.0f} MiB")
    print(f"streams: {per:.1f} KiB a held stream")
    return held


async def register(accounts: play_pb2_grpc.AccountServiceStub, count: int) -> list[tuple[str, str]]:
    """(username, token) of `count` fresh accounts."""
    prefix = f"b{secrets.token_hex(3)}"
    out: list[tuple[str, str]] = []
    for start in range(0, count, 50):
        names = [f"{prefix}{i}" for i in range(start, min(count, start + 50))]
        answers = await asyncio.gather(
            *(accounts.Register(play_pb2.RegisterRequest(username=n, password="benchmark-secret")) for n in names)
        )
        out.extend((n, a.session.token) for n, a in zip(names, answers, strict=True))
    return out


async def challenge_rate(target: str, pairs: int, rate: float, duration_s: float, stats: Stats) -> None:
    channel = _channel(target)
    accounts = play_pb2_grpc.AccountServiceStub(channel)
    stub = challenges_pb2_grpc.ChallengeServiceStub(channel)
    people = await register(accounts, 2 * pairs)
    challengers, challenged = people[::2], people[1::2]
    sent: dict[str, float] = {}  # challenger's name -> when its latest create was sent (one pending a pair)
    declined_at: dict[str, float] = {}  # challenge id -> when the decline was sent
    arrive: list[float] = []
    answered: list[float] = []
    pending_declines: list[asyncio.Task[None]] = []

    def md(token: str) -> tuple[tuple[str, str]]:
        return (("authorization", f"Bearer {token}"),)

    def on_challenged(token: str) -> Callable[[C.AccountEvent], None]:
        def take(event: C.AccountEvent) -> None:
            challenge = event.challenge
            if event.WhichOneof("kind") != "challenge" or challenge.status != C.CHALLENGE_STATUS_PENDING:
                return
            now = time.perf_counter()
            started = sent.pop(challenge.challenger.username, None)
            if started is not None:
                arrive.append(now - started)
            declined_at[challenge.challenge_id] = now
            request = C.DeclineChallengeRequest(challenge_id=challenge.challenge_id, reason=C.DECLINE_REASON_LATER)
            pending_declines.append(asyncio.ensure_future(_decline(request, md(token))))

        return take

    async def _decline(request: C.DeclineChallengeRequest, metadata: tuple[tuple[str, str]]) -> None:
        try:
            await stub.DeclineChallenge(request, metadata=metadata)
        except grpc.aio.AioRpcError as error:
            stats.errors[f"decline {error.code().name}"] += 1

    def on_challenger(event: C.AccountEvent) -> None:
        challenge = event.challenge
        if event.WhichOneof("kind") == "challenge" and challenge.status == C.CHALLENGE_STATUS_DECLINED:
            started = declined_at.pop(challenge.challenge_id, None)
            if started is not None:
                answered.append(time.perf_counter() - started)

    streams = [Stream(channel, token, on_challenger) for _, token in challengers]
    streams += [Stream(channel, token, on_challenged(token)) for _, token in challenged]
    await asyncio.gather(*(s.ready for s in streams))

    async def create(index: int) -> None:
        name, token = challengers[index]
        request = C.CreateChallengeRequest(
            request_id=secrets.token_hex(8), username=challenged[index][0], game="connect4"
        )
        sent[name] = time.perf_counter()
        try:
            await stub.CreateChallenge(request, metadata=md(token))
        except grpc.aio.AioRpcError as error:
            sent.pop(name, None)
            stats.errors[f"create {error.code().name}"] += 1

    tasks = []
    interval = 1.0 / rate
    begin = time.perf_counter()
    for n in itertools.count():
        due = begin + n * interval
        if due - begin >= duration_s:
            break
        await asyncio.sleep(max(0.0, due - time.perf_counter()))
        index = n % pairs
        tasks.append(asyncio.ensure_future(create(index)))
    await asyncio.gather(*tasks)
    await asyncio.sleep(3)  # the last answers
    await asyncio.gather(*pending_declines, return_exceptions=True)
    for stream in streams:
        stream.close()
    made = len(tasks)
    print(
        f"challenges: {made:,} made at {rate:,.0f}/s over {duration_s:.0f} s; {len(answered):,} answered and seen"
        f" by the challenger; errors {dict(stats.errors) or 0}"
    )
    for label, samples in (("create -> challenged's stream", arrive), ("decline -> challenger's stream", answered)):
        print(
            f"challenges: {label}: p50 {percentile(samples, 0.5) * 1000:.0f} ms,"
            f" p99 {percentile(samples, 0.99) * 1000:.0f} ms ({len(samples):,} samples)"
        )
    stats.latencies.extend(arrive)


async def run_social(targets: list[str], streams: int, pairs: int, rate: float, duration_s: float) -> Stats:
    stats = Stats()
    held = await hold_streams(targets[0], streams, stats)
    try:
        if pairs:
            await challenge_rate(targets[0], pairs, rate, duration_s, stats)
    finally:
        for stream in held:
            stream.close()
    return stats
