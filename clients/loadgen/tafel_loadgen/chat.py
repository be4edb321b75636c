"""Scenario `chat`: one game's spectators chatting, every line delivered to every spectator.

1. Two guests start a Connect Four game by matchmaking and sit on their first move (a long clock),
   so the game stays live.
2. `--spectators` players open ChatService.WatchChat on the game's spectators' channel (500 streams
   a connection, each spectator its own session, as people are) and hold it; `--senders` of them
   are registered accounts (guests read chat but do not write). The watchers live in `--processes`
   client processes, so receiving is not all on one event loop.
3. The senders write `--rate` lines a second in all for `--duration` s (open loop, taking turns:
   each sender writes one line every senders/rate s, which must stay under the gateway's 5 lines
   in 10 s: 100 lines/s needs at least 200 senders). A line's text carries its number and its send
   time, so each watcher measures send -> its own receipt.

Reported: delivery latency p50/p99/max over every (line, watcher) receipt, lines delivered against
expected (lines accepted x spectators) with any missing or doubled, the gateway's RSS before the
watchers, with them held, and after the lines, and the CPU of the gateway, Redis and the load
generator during the lines.

Every player comes from this one address: start the platform with the per-source limits raised
(docs/benchmarks.md gives the command).
"""

from __future__ import annotations

import asyncio
import multiprocessing
import queue as queue_module
import resource
import secrets
import time
from array import array
from typing import Any

import grpc
from tafel.client import TafelClient
from tafel.errors import TafelError, from_rpc_error
from tafel.play.v1 import play_pb2, play_pb2_grpc, social_pb2, social_pb2_grpc

from tafel_loadgen.social import _channel, _rss_mib, register
from tafel_loadgen.stats import Stats, _listening_inodes, _pids_owning, cpu_seconds, percentile, server_processes

STREAMS_PER_CHANNEL = 500  # HTTP/2 streams per client connection
MAX_LINES_PER_SENDER_S = 5 / 10  # the gateway's chat limit (CHAT_TOO_FAST past it)
S = social_pb2


def gateway_pid(target: str) -> int | None:
    """The process listening on the gateway's port (one of several under GATEWAYS=2)."""
    owners = _pids_owning(_listening_inodes({int(target.rsplit(":", 1)[1])}))
    return min(owners) if owners else None


def spectators_channel(game_id: str) -> social_pb2.ChatChannel:
    return S.ChatChannel(kind=S.CHAT_CHANNEL_KIND_GAME_SPECTATORS, id=game_id)


def _auth(token: str) -> tuple[tuple[str, str]]:
    return (("authorization", f"Bearer {token}"),)


def _reason(error: grpc.aio.AioRpcError) -> str:
    refused = from_rpc_error(error)
    return refused.reason or error.code().name


def _cpu_self() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


# -- the watchers (one client process's share) --------------------------------------------------


class Watchers:
    """A share of the spectators: their WatchChat streams and what each received."""

    def __init__(self, target: str, tokens: list[str], game_id: str) -> None:
        self.target = target
        self.tokens = tokens
        self.game_id = game_id
        self.latencies = array("d")
        self.counts = [bytearray() for _ in tokens]  # per watcher: receipts of line n at [n]
        self.received = 0
        self.unreadable = 0  # lines whose text is not the load generator's
        self.errors: dict[str, int] = {}
        self.calls: list[Any] = []
        self.tasks: list[asyncio.Task[None]] = []
        self.stopping = False

    async def hold(self) -> int:
        """Opens every watch and waits for each one's `ready`; returns how many are ready."""
        connections = (len(self.tokens) + STREAMS_PER_CHANNEL - 1) // STREAMS_PER_CHANNEL
        channels = [_channel(self.target) for _ in range(connections)]
        loop = asyncio.get_running_loop()
        ready = [loop.create_future() for _ in self.tokens]
        for index, token in enumerate(self.tokens):
            stub = social_pb2_grpc.ChatServiceStub(channels[index // STREAMS_PER_CHANNEL])
            call = stub.WatchChat(S.WatchChatRequest(channel=spectators_channel(self.game_id)), metadata=_auth(token))
            self.calls.append(call)
            self.tasks.append(asyncio.ensure_future(self._read(index, call, ready[index])))
        results = await asyncio.gather(*ready, return_exceptions=True)
        return sum(1 for result in results if result is True)

    async def _read(self, index: int, call: Any, ready: asyncio.Future[bool]) -> None:
        counts = self.counts[index]
        try:
            async for response in call:
                if response.HasField("ready"):
                    if not ready.done():
                        ready.set_result(True)
                    continue
                now = time.time()
                # A busy channel's waiting lines come several in one response.
                lines = response.lines.messages if response.HasField("lines") else [response.message]
                for message in lines:
                    try:
                        number, sent = message.text.split(" ", 2)[:2]
                        line, sent_at = int(number), float(sent)
                    except ValueError:
                        self.unreadable += 1
                        continue
                    self.latencies.append(now - sent_at)
                    if line >= len(counts):
                        counts.extend(bytes(line + 256 - len(counts)))
                    counts[line] = min(255, counts[line] + 1)
                    self.received += 1
        except grpc.aio.AioRpcError as error:
            if not self.stopping:  # a watch that ends while it should be held open
                key = f"watch {_reason(error)}"
                self.errors[key] = self.errors.get(key, 0) + 1
        finally:
            if not ready.done():
                ready.set_result(False)

    def close(self) -> None:
        self.stopping = True
        for call in self.calls:
            call.cancel()
        for task in self.tasks:
            task.cancel()

    def result(self) -> dict[str, Any]:
        """What the parent adds up: per line, how many of these watchers got it at least once."""
        lines = max((len(c) for c in self.counts), default=0)
        unique = [0] * lines
        doubled = 0
        for counts in self.counts:
            for line, count in enumerate(counts):
                if count:
                    unique[line] += 1
                    doubled += count - 1
        return {
            "latencies": self.latencies.tobytes(),
            "unique": unique,
            "doubled": doubled,
            "unreadable": self.unreadable,
            "errors": self.errors,
        }


def watch_process(target: str, tokens: list[str], game_id: str, results: Any, received: Any, stop: Any) -> None:
    """A client process: holds its spectators' watches until `stop` is set, then reports."""
    import gc

    gc.freeze()  # as runner.child: the collector was the load generator's latency tail
    gc.set_threshold(50_000, 50, 20)
    try:
        import uvloop

        uvloop.install()
    except ImportError:
        pass
    asyncio.run(_watch_share(target, tokens, game_id, results, received, stop))


async def _watch_share(target: str, tokens: list[str], game_id: str, results: Any, received: Any, stop: Any) -> None:
    watchers = Watchers(target, tokens, game_id)
    cpu_before = _cpu_self()
    results.put(("ready", await watchers.hold(), dict(watchers.errors)))
    loop = asyncio.get_running_loop()
    while not await loop.run_in_executor(None, stop.wait, 0.2):
        received.value = watchers.received
    received.value = watchers.received
    watchers.close()
    result = watchers.result()
    result["cpu_s"] = _cpu_self() - cpu_before
    results.put(("done", result))


# -- the run ------------------------------------------------------------------------------------


async def _live_game(target: str) -> tuple[str, list[TafelClient]]:
    """A Connect Four game between two guests that stays live (nobody moves, a long clock)."""
    pair = [await TafelClient.connect(target) for _ in range(2)]
    for client in pair:
        await client.sign_in_as_guest()
    matches = await asyncio.gather(*(client.find_match("connect4", per_move_s=3600) for client in pair))
    return matches[0].game_id, pair


async def _guest_tokens(accounts: play_pb2_grpc.AccountServiceStub, count: int) -> list[str]:
    tokens: list[str] = []
    for start in range(0, count, 200):
        batch = await asyncio.gather(
            *(accounts.SignInAsGuest(play_pb2.SignInAsGuestRequest()) for _ in range(min(200, count - start)))
        )
        tokens.extend(answer.session.token for answer in batch)
    return tokens


async def run_chat(
    targets: list[str], spectators: int, senders: int, rate: float, duration_s: float, processes: int = 1
) -> Stats:
    stats = Stats()
    target = targets[0]
    senders = min(senders, spectators)
    if rate > senders * MAX_LINES_PER_SENDER_S:
        print(
            f"chat: {senders} senders cannot write {rate:g} lines/s under the limit of 5 lines in 10 s each;"
            f" give --senders {int(rate / MAX_LINES_PER_SENDER_S + 0.999)} or more"
        )
        stats.errors["TOO_FEW_SENDERS"] += 1
        return stats
    pid = gateway_pid(target)
    game_id, players = await _live_game(target)
    channel = _channel(target)
    accounts = play_pb2_grpc.AccountServiceStub(channel)
    chat = social_pb2_grpc.ChatServiceStub(channel)
    writers = await register(accounts, senders)  # the first `senders` spectators
    tokens = [token for _, token in writers] + await _guest_tokens(accounts, spectators - senders)
    await asyncio.sleep(1)
    # Read once the senders are registered: scrypt's 16 MiB buffers stay in the gateway's arenas.
    rss = [_rss_mib(pid) if pid else 0.0]

    # The watchers, over the client processes (spawned: each imports its own gRPC).
    processes = max(1, min(processes, spectators))
    context = multiprocessing.get_context("spawn")
    results = context.Queue()
    stop = context.Event()
    counters = [context.Value("q", 0, lock=False) for _ in range(processes)]
    shares = [tokens[i::processes] for i in range(processes)]
    children = [
        context.Process(target=watch_process, args=(target, share, game_id, results, counters[i], stop))
        for i, share in enumerate(shares)
    ]
    for child in children:
        child.start()
    started = time.perf_counter()
    held = 0
    try:
        for _ in children:
            _, ready, errors = await asyncio.to_thread(results.get, True, 300)
            held += ready
            stats.errors.update(errors)
    except queue_module.Empty:
        stats.errors["WATCHERS_NOT_READY"] += 1
    took = time.perf_counter() - started
    await asyncio.sleep(2)  # let the gateway settle before reading its memory
    rss.append(_rss_mib(pid) if pid else 0.0)
    print(f"chat: {held:,} of {spectators:,} spectators watching game {game_id} ({took:.1f} s to open)")
    if held < spectators:
        stats.errors["WATCHERS_NOT_READY"] += spectators - held

    # The lines: open loop, senders taking turns.
    accepted: list[int] = []
    pending: list[asyncio.Task[None]] = []
    run = secrets.token_hex(4)

    async def send(line: int) -> None:
        token = tokens[line % senders]
        text = f"{line} {time.time():.6f} spectators say hello"
        request = S.SendChatMessageRequest(request_id=f"{run}-{line}", channel=spectators_channel(game_id), text=text)
        try:
            await chat.SendChatMessage(request, metadata=_auth(token))
            accepted.append(line)
        except grpc.aio.AioRpcError as error:
            stats.errors[f"send {_reason(error)}"] += 1

    servers_before = {s.pid: (s, s.cpu_start) for s in server_processes([target]) if s.kind in ("gateway", "redis")}
    cpu_before = _cpu_self()
    interval = 1.0 / rate
    begin = time.perf_counter()
    line = 0
    while line * interval < duration_s:
        await asyncio.sleep(max(0.0, begin + line * interval - time.perf_counter()))
        pending.append(asyncio.ensure_future(send(line)))
        line += 1
    await asyncio.gather(*pending)
    sent_for = time.perf_counter() - begin
    expected = len(accepted) * held
    # Until every receipt is in, or nothing more arrives for 5 s.
    last, still = -1, time.perf_counter()
    while True:
        now_received = sum(counter.value for counter in counters)
        if now_received >= expected:
            break
        if now_received != last:
            last, still = now_received, time.perf_counter()
        elif time.perf_counter() - still > 5:
            break
        await asyncio.sleep(0.2)
    drained = time.perf_counter() - begin - sent_for
    servers_cpu = {
        f"{server.name} {pid_}": cpu_seconds(pid_) - cpu0
        for pid_, (server, cpu0) in servers_before.items()
        if _alive(pid_)
    }
    sender_cpu = _cpu_self() - cpu_before
    rss.append(_rss_mib(pid) if pid else 0.0)
    stop.set()

    latencies = array("d")
    unique: list[int] = []
    doubled = unreadable = 0
    watcher_cpu = 0.0
    for _ in children:
        try:
            _, result = await asyncio.to_thread(results.get, True, 120)
        except queue_module.Empty:
            stats.errors["CLIENT_PROCESS_DIED"] += 1
            continue
        latencies.frombytes(result["latencies"])
        for index, count in enumerate(result["unique"]):
            if index >= len(unique):
                unique.extend([0] * (index + 1 - len(unique)))
            unique[index] += count
        doubled += result["doubled"]
        unreadable += result["unreadable"]
        watcher_cpu += result["cpu_s"]
        stats.errors.update(result["errors"])
    for child in children:
        await asyncio.to_thread(child.join, 30)
    try:
        await players[0].resign(game_id)  # the game ends with the run (its record keeps the chat)
    except TafelError:
        pass
    for client in players:
        await client.close()
    await channel.close()

    accepted_set = set(accepted)
    delivered = sum(count for index, count in enumerate(unique) if index in accepted_set)
    missing = expected - delivered
    strays = sum(count for index, count in enumerate(unique) if index not in accepted_set)  # refused yet delivered
    stats.latencies.extend(latencies)
    stats.client_cpu_s = sender_cpu + watcher_cpu
    if missing:
        stats.errors["LINES_MISSING"] += missing
    if doubled:
        stats.errors["LINES_DOUBLED"] += doubled
    if strays:
        stats.errors["REFUSED_LINES_DELIVERED"] += strays
    print(
        f"chat: {line:,} lines sent at {rate:g}/s by {senders} senders over {sent_for:.1f} s, {len(accepted):,}"
        f" accepted; delivered {delivered:,} of {expected:,} expected (missing {missing:,}, doubled {doubled:,});"
        f" the last receipt {drained:.1f} s after the last send"
    )
    print(
        f"chat: delivery (send -> each watcher's receipt): p50 {percentile(list(latencies), 0.5) * 1000:.0f} ms,"
        f" p99 {percentile(list(latencies), 0.99) * 1000:.0f} ms, max {max(latencies, default=0.0) * 1000:.0f} ms"
        f" ({len(latencies):,} receipts, {len(latencies) / (sent_for + drained):,.0f}/s)"
    )
    print(
        f"chat: gateway RSS {rss[0]:.0f} MiB before the watches -> {rss[1]:.0f} watching"
        f" ({(rss[1] - rss[0]) * 1024 / max(1, held):.1f} KiB a watch) -> {rss[2]:.0f} after the lines"
    )
    spent = ", ".join(f"{name} {cpu:.1f} s" for name, cpu in servers_cpu.items())
    print(
        f"chat: CPU during the lines ({sent_for + drained:.1f} s): {spent}; load generator {sender_cpu:.1f} s"
        f" sending + {watcher_cpu:.1f} s watching (its whole run)"
    )
    if unreadable:
        print(f"chat: {unreadable} lines not the load generator's (another writer in the channel?)")
    return stats


def _alive(pid: int) -> bool:
    try:
        cpu_seconds(pid)
        return True
    except OSError:
        return False
