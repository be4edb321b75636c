"""`make chaos` (python -m tools.chaos): the platform under process failures, then an audit.

Starts, on loopback only, a Redis of its own, two gateways and two replicas of the Connect Four
rules service (tools/platform.py, as `make run` starts them), then for `--duration` seconds:

- the load generator keeps `--games` games going (tafel_loadgen's `games` scenario, in its own
  client processes);
- a few audited pairs of SDK players (in this process) play their own games and note every move
  the platform acknowledged (game, version, seat, column) and every request id they sent;
- every `--interval` seconds (jittered) one random gateway or rules process gets SIGKILL or
  SIGTERM (`--signal kill|term|both`) and is started again (same port) a moment later.

Then it lets every game end (players stop moving; the turn clocks time the rest out), and checks:
every record replayed from the start through the pure rules module (packages/tafel-rules/tafel_rules/connect4.py:
each move legal, versions 1..n, the same outcome); every acknowledged move in its game's record
at its version; no seat with more moves applied than requests it sent (applied twice); games
started / finished / stuck (not over after the settle) / lost (started, never created or gone);
client errors by code. Prints the report and a JSON line; exits 1 on any violation.

Bounded in time: start-up, the run, the settle (per-move time + margin) and the audit.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import math
import random
import signal
import sys
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from redis.asyncio import Redis
from tafel.client import TafelClient, new_request_id
from tafel.connect4.v1 import connect4_pb2
from tafel.errors import TafelError, VersionConflict
from tafel.play.v1 import play_pb2
from tafel_rules.connect4 import RULES
from tafel_rules.game import IllegalMove

from kit.redis.keys import game_keys, game_of_meta_key, meta_pattern, record_key
from services.connect4.codec import CODEC
from services.host.codec import GameEnvelope
from tools.platform import Platform
from tools.redis_server import start_redis

GAME = "connect4"
VICTIMS = ("gateway-0", "gateway-1", "connect4-0", "connect4-1")


@dataclass(frozen=True)
class ChaosSettings:
    duration_s: float = 60.0
    games: int = 20  # concurrent load-generator games
    audited_games: int = 3  # concurrent games of the audited players
    interval_s: float = 3.0  # between two failures (jittered +-50 %)
    signal: str = "both"  # kill | term | both
    down_s: float = 0.5  # how long a stopped process stays down
    per_move_s: float = 5.0  # the turn clock of every game (the settle waits for it)
    think_s: float = 0.05  # every player's pause before a move (paces the load on a small machine)
    # >0: the audited players' pauses are log-normal with this sigma and a mean of think_s (a
    # person: the median lower, a long tail; tools/soak.py), at most 3/4 of the turn clock.
    think_sigma: float = 0.0
    grace_s: float = 2.0  # a gateway's drain on SIGTERM
    seed: int = 1
    # The load generator must keep playing through the failures: a run whose load died (or
    # never started) proves nothing, so fewer moves than this per game-second is a failure. A
    # healthy run makes ~16 (docs/benchmarks.md).
    loadgen_floor_per_game_s: float = 1.0

    def think(self, rng: random.Random) -> float:
        if self.think_sigma <= 0:
            return self.think_s
        median = self.think_s / math.exp(self.think_sigma**2 / 2)
        return min(rng.lognormvariate(math.log(median), self.think_sigma), self.per_move_s * 0.75)

    @property
    def loadgen_floor(self) -> int:
        return int(self.games * self.duration_s * self.loadgen_floor_per_game_s)


@dataclass
class Ack:
    game_id: str
    version: int  # the version the move produced
    seat: int
    column: int


@dataclass
class Audit:
    """What the audited players saw: acknowledged moves, request ids sent, errors by code."""

    acks: list[Ack] = field(default_factory=list)
    sent: Counter[tuple[str, int]] = field(default_factory=Counter)  # (game, seat) -> request ids sent
    errors: Counter[str] = field(default_factory=Counter)
    games: set[str] = field(default_factory=set)


@dataclass
class Report:
    failures: list[tuple[float, str, str]] = field(default_factory=list)  # (at s, process, signal)
    started: int = 0
    finished: int = 0
    stuck: list[str] = field(default_factory=list)
    lost: list[str] = field(default_factory=list)
    records_checked: int = 0
    illegal: list[str] = field(default_factory=list)  # records that do not replay
    acked: int = 0
    acked_missing: list[str] = field(default_factory=list)
    applied_twice: list[str] = field(default_factory=list)
    loadgen_moves: int = 0
    loadgen_floor: int = 0
    loadgen_games: int = 0
    loadgen_failure: str = ""  # the load generator itself failed (not its players' refusals)
    players_crashed: int = 0  # audited players that ended with an exception
    client_errors: Counter[str] = field(default_factory=Counter)
    restart_retries: int = 0  # restarts that had to wait for their port
    restart_errors: list[str] = field(default_factory=list)

    @property
    def clients_died(self) -> int:
        """Client processes or audited players that did not last to the end of the run."""
        died = self.client_errors["CLIENT_PROCESS_DIED"] + self.players_crashed
        return died + (1 if self.loadgen_failure else 0)

    @property
    def ok(self) -> bool:
        lost_load = self.clients_died or self.loadgen_moves < self.loadgen_floor
        return not (lost_load or self.stuck or self.lost or self.illegal or self.acked_missing or self.applied_twice)

    def as_dict(self) -> dict[str, Any]:
        return {
            "failures": len(self.failures),
            "by_signal": dict(Counter(sig for _, _, sig in self.failures)),
            "by_process": dict(Counter(name for _, name, _ in self.failures)),
            "games_started": self.started,
            "games_finished": self.finished,
            "games_stuck": len(self.stuck),
            "games_lost": len(self.lost),
            "records_replayed": self.records_checked,
            "records_illegal": len(self.illegal),
            "moves_acknowledged_audited": self.acked,
            "acknowledged_moves_missing": len(self.acked_missing),
            "moves_applied_twice": len(self.applied_twice),
            "loadgen_moves": self.loadgen_moves,
            "loadgen_floor": self.loadgen_floor,
            "clients_died": self.clients_died,
            "loadgen_games_finished": self.loadgen_games,
            "client_errors": dict(self.client_errors),
            "restart_retries": self.restart_retries,
            "ok": self.ok,
        }

    def lines(self) -> list[str]:
        d = self.as_dict()
        out = [
            f"failures: {d['failures']} {d['by_signal']} {d['by_process']}",
            f"games: {self.started} started, {self.finished} finished, {len(self.stuck)} stuck, {len(self.lost)} lost",
            f"records: {self.records_checked} replayed through the rules, {len(self.illegal)} illegal",
            f"audited moves: {self.acked} acknowledged, {len(self.acked_missing)} missing from the records, "
            f"{len(self.applied_twice)} applied twice",
            f"load generator: {self.loadgen_moves} moves (floor {self.loadgen_floor}), "
            f"{self.loadgen_games} games finished",
            f"client processes or players that died: {self.clients_died}"
            + (f" (load generator: {self.loadgen_failure})" if self.loadgen_failure else ""),
            f"client errors by code: {dict(self.client_errors) or 'none'}",
        ]
        out.extend(f"  restart failed first: {error}" for error in self.restart_errors[:5])
        for label, items in (("stuck", self.stuck), ("lost", self.lost), ("illegal", self.illegal),
                             ("missing", self.acked_missing), ("twice", self.applied_twice)):
            out.extend(f"  {label}: {item}" for item in items[:10])
        return out


# -- the audited players -------------------------------------------------------------------------


async def audited_player(
    targets: Sequence[str], audit: Audit, stop_at: float, settings: ChaosSettings, seed: int
) -> None:
    per_move_s = settings.per_move_s
    rng = random.Random(seed)
    async with await TafelClient.connect(list(targets)) as client:
        await client.sign_in_as_guest()
        async with client.play_stream() as stream:
            while time.monotonic() < stop_at:
                try:
                    found = await asyncio.wait_for(
                        stream.find_match(GAME, per_move_s=per_move_s), max(1.0, stop_at - time.monotonic())
                    )
                except TimeoutError:
                    return
                except TafelError as error:
                    audit.errors[error.code.name] += 1
                    continue
                audit.games.add(found.game_id)
                try:
                    await play_one(client, stream, found, audit, stop_at, settings, rng)
                except TafelError as error:
                    audit.errors[error.code.name] += 1
                except TimeoutError:
                    audit.errors["CLIENT_TIMEOUT"] += 1


async def play_one(
    client: TafelClient, stream: Any, found: play_pb2.MatchFound, audit: Audit, stop_at: float,
    settings: ChaosSettings, rng: random.Random,
) -> None:
    game_id, seat, per_move_s = found.game_id, found.seat, settings.per_move_s
    await client.wait_for_game(game_id)
    status = (await stream.watch(game_id)).summary.status
    try:
        while not status.over:
            if seat in status.to_act:
                if time.monotonic() >= stop_at:
                    return  # the run is over: the clock ends this game
                await asyncio.sleep(settings.think(rng))
                game = await client.get_game(game_id)
                status = game.summary.status
                if status.over or seat not in status.to_act:
                    continue
                board = game.view.connect4
                column = rng.choice([c for c, col in enumerate(board.board) if len(col.seats) < board.rows])
                request_id = new_request_id()
                audit.sent[(game_id, seat)] += 1
                try:
                    answer = await asyncio.wait_for(
                        stream.submit_move(game_id, connect4_pb2.Move(column=column),
                                           expected_version=status.version, request_id=request_id),
                        per_move_s * 4,
                    )
                except VersionConflict:
                    continue  # timed out meanwhile: read again
                audit.acks.append(Ack(game_id, answer.version, seat, column))
                status = answer.status
                continue
            delivery = await stream.next_event(timeout=per_move_s * 3 + 10)
            if delivery.game_id == game_id and delivery.HasField("status"):
                if delivery.status.version >= status.version:
                    status = delivery.status
    finally:
        with contextlib.suppress(TafelError):
            await stream.stop_watching(game_id)


# -- failures ------------------------------------------------------------------------------------


async def inflict(platform: Platform, settings: ChaosSettings, stop_at: float, report: Report, began: float) -> None:
    rng = random.Random(settings.seed)
    signals = {"kill": ["kill"], "term": ["term"], "both": ["kill", "term"]}[settings.signal]
    while True:
        pause = settings.interval_s * rng.uniform(0.5, 1.5)
        if time.monotonic() + pause >= stop_at:
            return
        await asyncio.sleep(pause)
        victim, how = rng.choice(VICTIMS), rng.choice(signals)
        report.failures.append((round(time.monotonic() - began, 1), victim, how))
        if how == "kill":
            await asyncio.to_thread(platform.kill, victim)
        else:
            await asyncio.to_thread(platform.terminate, victim, settings.grace_s + 10)
        await asyncio.sleep(settings.down_s)
        await restart(platform, victim, report)


async def restart(platform: Platform, victim: str, report: Report) -> None:
    """Start it again on its port. The port may be taken for a moment: a client's new connection
    can get it as its own (ephemeral) port once the process is gone; then try again."""
    for attempt in range(10):
        try:
            await asyncio.to_thread(platform.restart, victim)
            return
        except RuntimeError as error:
            report.restart_retries += 1
            if attempt == 9:
                raise
            if "Address already in use" not in str(error) and "could not bind" not in str(error):
                report.restart_errors.append(str(error)[-300:])
            await asyncio.sleep(1.0)


# -- the audit -----------------------------------------------------------------------------------


def replay_problem(record: play_pb2.GameRecord) -> str | None:
    """None when the record replays through the pure rules to its own outcome."""
    envelope = GameEnvelope(CODEC)
    state = RULES.new_game(envelope.options_from_union(record.options, RULES.default_options()), len(record.players), 0)
    for index, action in enumerate(record.actions):
        if action.version != index + 1:
            return f"action {index} has version {action.version}"
        if RULES.outcome(state) is not None:
            return f"an action after the end at version {action.version}"
        kind = action.WhichOneof("action")
        try:
            if kind == "move":
                state, _ = RULES.apply_move(state, action.seat, envelope.move_from_union(action.move))
            elif kind == "resigned":
                state, _ = RULES.resign(state, action.seat)
            elif kind == "timed_out":
                state, _ = RULES.timeout(state, action.seat)
            else:
                return f"action {index} is empty"
        except IllegalMove as illegal:
            return f"version {action.version}: {illegal.reason}"
    outcome = RULES.outcome(state)
    if outcome is None:
        return "not over after its last action"
    if tuple(record.outcome.winners) != outcome.winners or record.outcome.reason != outcome.reason:
        seen = f"{list(record.outcome.winners)}/{record.outcome.reason}"
        return f"outcome {seen} != {list(outcome.winners)}/{outcome.reason}"
    return None


async def scan(redis: Redis, pattern: str) -> list[bytes]:
    return [key async for key in redis.scan_iter(match=pattern, count=1000)]


async def settle(redis: Redis, timeout_s: float) -> None:
    """Wait until no game is live (the clocks end those the players left), at most timeout_s."""
    for _ in range(int(timeout_s / 0.25) + 1):  # a poll of Redis, bounded: nothing to wait on here
        if not await redis.zcard("tafel:games:live"):
            return
        await asyncio.sleep(0.25)


async def audit_all(redis: Redis, audit: Audit, report: Report) -> None:
    metas = await scan(redis, meta_pattern())
    game_ids = [game_of_meta_key(key.decode()) for key in metas]
    report.started = len(game_ids)
    records: dict[str, play_pb2.GameRecord] = {}
    for game_id in game_ids:
        raw: Any = await redis.get(record_key(game_id))
        if raw is not None:
            records[game_id] = play_pb2.GameRecord.FromString(bytes(raw))
        elif await redis.exists(game_keys(game_id).state):
            report.stuck.append(game_id)
        else:
            report.lost.append(game_id)
    for game_id in audit.games - set(game_ids):
        report.lost.append(game_id)  # matched, but the game never existed
    report.finished = len(records)
    for game_id, record in records.items():
        report.records_checked += 1
        problem = replay_problem(record)
        if problem is not None:
            report.illegal.append(f"{game_id}: {problem}")
    report.acked = len(audit.acks)
    for ack in audit.acks:
        found = records.get(ack.game_id)
        if found is None:
            if ack.game_id not in report.stuck:
                report.acked_missing.append(f"{ack.game_id} v{ack.version}: no record")
            continue
        actions = [a for a in found.actions if a.version == ack.version]
        if not actions or actions[0].seat != ack.seat or actions[0].move.connect4.column != ack.column:
            report.acked_missing.append(f"{ack.game_id} v{ack.version} seat {ack.seat} column {ack.column}")
    for (game_id, seat), sent in audit.sent.items():
        kept = records.get(game_id)
        if kept is None:
            continue
        applied = sum(1 for a in kept.actions if a.seat == seat and a.WhichOneof("action") == "move")
        if applied > sent:
            report.applied_twice.append(f"{game_id} seat {seat}: {applied} moves applied, {sent} requests sent")


# -- the run -------------------------------------------------------------------------------------


def loadgen(targets: Sequence[str], settings: ChaosSettings) -> dict[str, Any]:
    """The load generator's `games` scenario in its own client process; its stats. Its arguments
    go through its own parser, so every option it has gets its default."""
    from tafel_loadgen.__main__ import parser, run_split

    args = parser().parse_args([
        "--gateways", ",".join(targets), "--processes", "1", "--seed", str(settings.seed),
        "games", "--game", GAME, "--games", str(settings.games), "--think", str(settings.think_s),
        "--seats", "2", "--duration", str(settings.duration_s),
    ])
    return run_split(args, settings.games).as_dict()


async def run_chaos(settings: ChaosSettings, *, log: Any = print) -> Report:
    report = Report(loadgen_floor=settings.loadgen_floor)
    redis_process = start_redis(None)
    env = {
        "TAFEL_TOKEN_SECRET": f"chaos-{random.Random(settings.seed).getrandbits(128):032x}",
        "TAFEL_LOG_LEVEL": "ERROR",
        "TAFEL_GRACE_S": str(settings.grace_s),
        "TAFEL_PER_MOVE_S": str(settings.per_move_s),
        "TAFEL_MIN_PER_MOVE_S": str(min(1.0, settings.per_move_s)),
        "TAFEL_CLOCK_MAX_WAIT_S": "0.25",
    }
    platform = Platform(redis_url=redis_process.url, gateways=2, rules_replicas=2, fixed_ports=False,
                        bot_pool=False, games=(GAME,), extra_env=env, quiet=False)
    redis = Redis.from_url(redis_process.url)
    try:
        await asyncio.to_thread(platform.start)
        targets = platform.gateway_addresses
        log(f"platform up: gateways {targets}, {GAME} rules {platform.rules_addresses[GAME]}")
        began = time.monotonic()
        stop_at = began + settings.duration_s
        audit = Audit()
        load = asyncio.ensure_future(asyncio.to_thread(loadgen, targets, settings))
        players = [
            audited_player(targets, audit, stop_at, settings, settings.seed * 1000 + i)
            for i in range(2 * settings.audited_games)
        ]
        playing = asyncio.ensure_future(asyncio.gather(*players, return_exceptions=True))
        await inflict(platform, settings, stop_at, report, began)
        margin = settings.per_move_s * 4 + 30
        results = await asyncio.wait_for(playing, settings.duration_s + margin)
        for result in results:
            if isinstance(result, BaseException):
                report.players_crashed += 1
                report.client_errors[type(result).__name__] += 1
        try:
            stats = await asyncio.wait_for(load, settings.duration_s + margin)
        except Exception as error:  # reported, and the run fails: the audit below still runs
            report.loadgen_failure = f"{type(error).__name__}: {error}"[:300]
        else:
            report.loadgen_moves, report.loadgen_games = int(stats["moves"]), int(stats["games_finished"])
            report.client_errors.update(stats["errors"])
        report.client_errors.update(audit.errors)
        log(f"run over after {time.monotonic() - began:.1f} s; letting the clocks end what is left")
        await settle(redis, settings.per_move_s * 3 + 15)
        await audit_all(redis, audit, report)
    finally:
        await redis.aclose()
        await asyncio.to_thread(platform.stop)
        redis_process.stop()
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.chaos", description=__doc__.split("\n\n")[0])
    defaults = ChaosSettings()
    parser.add_argument("--duration", type=float, default=defaults.duration_s, help="seconds of chaos")
    parser.add_argument("--games", type=int, default=defaults.games, help="concurrent load-generator games")
    parser.add_argument("--audited", type=int, default=defaults.audited_games, help="concurrent audited games")
    parser.add_argument("--interval", type=float, default=defaults.interval_s, help="seconds between failures")
    parser.add_argument("--signal", choices=("kill", "term", "both"), default=defaults.signal)
    parser.add_argument("--per-move", type=float, default=defaults.per_move_s, help="turn clock, seconds")
    parser.add_argument("--seed", type=int, default=defaults.seed)
    parser.add_argument(
        "--loadgen-floor", type=float, default=defaults.loadgen_floor_per_game_s,
        help="fewest load-generator moves per game-second for a pass",
    )
    args = parser.parse_args(argv)
    settings = ChaosSettings(
        duration_s=args.duration, games=args.games, audited_games=args.audited, interval_s=args.interval,
        signal=args.signal, per_move_s=args.per_move, seed=args.seed, loadgen_floor_per_game_s=args.loadgen_floor,
    )
    signal.signal(signal.SIGTERM, signal.default_int_handler)  # stop cleanly (children included)
    report = asyncio.run(run_chaos(settings))
    for line in report.lines():
        print(line)
    print(json.dumps(report.as_dict()))
    return 0 if report.ok else 1


if __name__ == "__main__":
    sys.exit(main())
