"""`make soak` (python -m tools.soak): an hour at a steady, human-paced load with restarts, then an
audit of what it left behind.

Starts, on loopback only, a Redis of its own, two gateways and two replicas of the Connect Four
rules service (tools/platform.py, as `make run` starts them, each with a metrics endpoint), then for
`--duration` seconds:

- the load generator keeps `--games` games going (tafel_loadgen's `games` scenario, its players in
  a client process of their own), every player thinking `--think` seconds before each move;
- a few audited pairs of SDK players (tools/chaos.py's) play their own games with log-normal think
  times of the same mean (median lower, a long tail), noting every move the platform acknowledged;
- every `--restart-every` seconds one gateway and one rules replica get SIGTERM and are started
  again on their port (gateway-0 and connect4-0, then the -1s, alternating);
- every `--sample-every` seconds each server process's RSS and open file descriptors (/proc) and
  its event loop's unfinished tasks (the `tafel_event_loop_tasks` gauge of its /metrics) are noted.

A census of Redis's key families (every key, its name with ids replaced by `*`: count and how many
have no TTL) is taken after the warm-up and again at the end, after every game ended (the players
stop, the turn clocks end the rest). Then:

- slopes: each metric's least-squares slope per hour, for each process, pooled over its steady
  segments (from one restart to the next, any process's, less `--settle` seconds after each, since
  players reconnecting to the other gateway step its memory and descriptors up once);
- leaks: a key of a game that ended with no TTL (its record, the archive, excepted), or a key
  family with no TTL that grew between the censuses;
- the audit of tools/chaos.py: every record replayed through the rules, every acknowledged move in
  its record, none applied twice, no game stuck or lost.

Prints a report and a JSON line; exits 1 on a lost or doubled move, a stuck or lost game, a leaked
key, a slope above its limit (the defaults are argued in docs/benchmarks.md, "Soak"), a client
process that died or a load generator that fell short.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import signal
import sys
import time
import urllib.request
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from redis.asyncio import Redis

from kit.catalogue import GAMES
from tools.chaos import Audit, ChaosSettings, audit_all, audited_player, loadgen, restart, settle
from tools.chaos import Report as AuditReport
from tools.platform import Platform
from tools.redis_server import start_redis

GAME = "connect4"
GATEWAYS = ("gateway-0", "gateway-1")
REPLICAS = ("connect4-0", "connect4-1")
METRICS = ("rss_mib", "fds", "tasks")
# Keys kept on purpose once a game ends: its record and the records' indexes (gateway/records.py,
# TAFEL_RECORD_TTL_S 0 = forever), and what a player's history lists. Every other family of a
# finished game must expire.
ARCHIVE = ("tafel:record:{g:*}", "tafel:records", "tafel:records:*", "tafel:player:*:done")


@dataclass(frozen=True)
class SoakSettings:
    duration_s: float = 3600.0
    restart_every_s: float = 600.0
    games: int = 100  # load-generator games: 200 players, a fraction of a 2-core machine
    audited_games: int = 5
    think_s: float = 10.0  # the load model of docs/benchmarks.md: a mean of 10 s a move
    think_sigma: float = 0.8  # the audited players' log-normal spread (median 7.3 s for a 10 s mean)
    per_move_s: float = 60.0  # the turn clock: above a person's long tail
    sample_every_s: float = 10.0
    warm_up_s: float = 60.0  # before the first census (every player matched, games under way)
    settle_s: float = 60.0  # samples left out after each restart (reconnections settle)
    finished_ttl_s: int = 300  # a finished game's live keys expire after this (default 3600: see the docs)
    grace_s: float = 5.0  # a SIGTERMed gateway's drain
    seed: int = 1
    # Above these a metric's pooled slope fails the run (docs/benchmarks.md, "Soak", says why).
    rss_mib_per_h: float = 16.0
    fds_per_h: float = 30.0
    tasks_per_h: float = 100.0

    def limits(self) -> dict[str, float]:
        return {"rss_mib": self.rss_mib_per_h, "fds": self.fds_per_h, "tasks": self.tasks_per_h}

    def chaos(self) -> ChaosSettings:
        """The load generator's and audited players' settings, in tools/chaos.py's terms."""
        return ChaosSettings(
            duration_s=self.duration_s, games=self.games, audited_games=self.audited_games, think_s=self.think_s,
            think_sigma=self.think_sigma, per_move_s=self.per_move_s, grace_s=self.grace_s, seed=self.seed,
            # A game makes a move every think time (its players take turns); a quarter of that is
            # the floor (restarts, matchmaking and the games' ends cost some).
            loadgen_floor_per_game_s=1 / self.think_s / 4,
        )


@dataclass
class Sample:
    at_s: float  # since the load started
    process: str
    pid: int
    rss_mib: float
    fds: int
    tasks: float  # nan when the scrape failed


# -- sampling ------------------------------------------------------------------------------------


def read_process(pid: int) -> tuple[float, int]:
    """RSS (MiB) and open file descriptors of a live process (ProcessLookupError once it is gone)."""
    try:
        with open(f"/proc/{pid}/status") as status:
            rss_kib = next(int(line.split()[1]) for line in status if line.startswith("VmRSS:"))
        return rss_kib / 1024, len(os.listdir(f"/proc/{pid}/fd"))
    except (FileNotFoundError, StopIteration) as gone:
        raise ProcessLookupError(pid) from gone


def read_tasks(metrics_url: str) -> float:
    """The process's `tafel_event_loop_tasks` gauge; nan when the endpoint does not answer."""
    try:
        with urllib.request.urlopen(metrics_url, timeout=2.0) as answer:
            for raw in answer.read().decode().splitlines():
                if raw.startswith("tafel_event_loop_tasks "):
                    return float(raw.split()[1])
    except OSError:
        pass
    return float("nan")


async def sample_forever(platform: Platform, samples: list[Sample], every_s: float, began: float) -> None:
    while True:
        for child in list(platform.children):  # (a restart replaces its entry meanwhile)
            if child.name not in GATEWAYS + REPLICAS or child.process.poll() is not None:
                continue
            try:
                rss, fds = read_process(child.process.pid)
            except ProcessLookupError:
                continue
            tasks = await asyncio.to_thread(read_tasks, child.metrics_url) if child.metrics_url else float("nan")
            samples.append(Sample(round(time.monotonic() - began, 1), child.name, child.process.pid, rss, fds, tasks))
        await asyncio.sleep(every_s)


def slope_per_hour(segments: Iterable[Sequence[tuple[float, float]]]) -> float | None:
    """Least-squares slope (per hour) of y over t (s), pooled over segments that each keep their own
    level: sum((t - mean_t) * (y - mean_y)) / sum((t - mean_t)^2), the means taken per segment.
    None without two distinct times in some segment."""
    top = bottom = 0.0
    for points in segments:
        clean = [(t, y) for t, y in points if y == y]  # (nan: a scrape that failed)
        if len(clean) < 2:
            continue
        mean_t = sum(t for t, _ in clean) / len(clean)
        mean_y = sum(y for _, y in clean) / len(clean)
        top += sum((t - mean_t) * (y - mean_y) for t, y in clean)
        bottom += sum((t - mean_t) ** 2 for t, _ in clean)
    return top / bottom * 3600 if bottom else None


def steady_segments(
    samples: Sequence[Sample], process: str, metric: str, restarts: Sequence[float], settle_s: float
) -> list[list[tuple[float, float]]]:
    """The process's samples of one metric, cut at every restart (any process's) and at its own
    new incarnation, without the first settle_s seconds of each piece."""
    cuts = sorted(restarts)
    pieces: dict[tuple[int, int], list[tuple[float, float]]] = defaultdict(list)
    for sample in samples:
        if sample.process != process:
            continue
        since = max((cut for cut in cuts if cut <= sample.at_s), default=0.0)
        if sample.at_s - since < settle_s:
            continue
        piece = sum(1 for cut in cuts if cut <= sample.at_s)
        pieces[(sample.pid, piece)].append((sample.at_s, float(getattr(sample, metric))))
    return list(pieces.values())


# -- the Redis census ----------------------------------------------------------------------------

_TAG = re.compile(r"\{([a-z]+):[^}]*\}")
_LIVE_GAME = re.compile(r"^tafel:\{gs:\d+\}:g:([A-Za-z0-9_-]+)(?::|$)")
_TAGGED_GAME = re.compile(r"\{g:([A-Za-z0-9_-]+)\}")
_WORDS = frozenset(GAMES) | {"live", "done", "claimed", "clocks"}


def family(key: str) -> str:
    """The key's family: hash tags' contents and id-like parts replaced by `*`
    (`tafel:{gs:17}:g:AbC..:state` -> `tafel:{gs:*}:g:*:state`)."""
    parts = _TAG.sub(r"{\1:*}", key).split(":")
    return ":".join(
        "*" if part not in _WORDS and not part.startswith("{") and (any(c.isdigit() for c in part) or len(part) >= 16)
        else part
        for part in parts
    )


def game_of(key: str) -> str | None:
    """The game a key belongs to (its live keys and its tagged ones), else None."""
    found = _LIVE_GAME.match(key) or _TAGGED_GAME.search(key)
    return found.group(1) if found else None


@dataclass
class Census:
    at_s: float
    families: dict[str, dict[str, int]]  # family -> {"keys", "no_ttl"}
    ended_game_keys: dict[str, dict[str, int]]  # family -> {"keys", "no_ttl", "max_ttl_s"} of ended games
    keys: int = 0


async def census(redis: Redis, at_s: float) -> Census:
    """Every key's family and TTL; and the keys of games that ended (a record exists)."""
    keys = [key.decode() async for key in redis.scan_iter(count=1000)]
    ttls: list[int] = []
    for start in range(0, len(keys), 1000):  # (pipelined: the census must not take minutes)
        pipe = redis.pipeline(transaction=False)
        for key in keys[start:start + 1000]:
            pipe.ttl(key)
        ttls.extend(int(ttl) for ttl in await pipe.execute())
    ended = {game_of(key) for key in keys if key.startswith("tafel:record:")}
    families: dict[str, dict[str, int]] = defaultdict(lambda: {"keys": 0, "no_ttl": 0})
    of_ended: dict[str, dict[str, int]] = defaultdict(lambda: {"keys": 0, "no_ttl": 0, "max_ttl_s": 0})
    for key, ttl in zip(keys, ttls, strict=True):
        if ttl == -2:  # expired between the scan and the TTL
            continue
        row = families[family(key)]
        row["keys"] += 1
        row["no_ttl"] += ttl == -1
        if game_of(key) in ended:
            own = of_ended[family(key)]
            own["keys"] += 1
            own["no_ttl"] += ttl == -1
            own["max_ttl_s"] = max(own["max_ttl_s"], ttl)
    return Census(at_s, dict(families), dict(of_ended), sum(row["keys"] for row in families.values()))


def archived(name: str) -> bool:
    return any(re.fullmatch(re.escape(pattern).replace(r"\*", ".*"), name) for pattern in ARCHIVE)


def leaks(start: Census, end: Census) -> list[str]:
    """Keys left behind: a non-archive key of an ended game without a TTL; a family without TTLs
    that grew between the censuses."""
    found = {
        name: f"{name}: {row['no_ttl']} keys of ended games without a TTL"
        for name, row in sorted(end.ended_game_keys.items())
        if row["no_ttl"] and not archived(name)
    }
    for name, row in sorted(end.families.items()):
        before = start.families.get(name, {"no_ttl": 0})["no_ttl"]
        if row["no_ttl"] > before and not archived(name) and name not in found:
            found[name] = f"{name}: keys without a TTL grew {before} -> {row['no_ttl']}"
    return list(found.values())


# -- the run -------------------------------------------------------------------------------------


@dataclass
class SoakReport:
    settings: SoakSettings
    audit: AuditReport = field(default_factory=AuditReport)
    restarts: list[tuple[float, str]] = field(default_factory=list)  # (at s, process)
    samples: list[Sample] = field(default_factory=list)
    start_census: Census | None = None
    end_census: Census | None = None
    ran_s: float = 0.0

    def loaded(self) -> list[Sample]:
        """The samples taken under the load: after it, players leave and every count falls."""
        return [s for s in self.samples if s.at_s <= self.settings.duration_s]

    def slopes(self) -> dict[str, dict[str, float | None]]:
        cuts = sorted({at for at, _ in self.restarts})
        return {
            process: {
                metric: slope_per_hour(steady_segments(self.loaded(), process, metric, cuts, self.settings.settle_s))
                for metric in METRICS
            }
            for process in GATEWAYS + REPLICAS
        }

    def incarnations(self) -> list[dict[str, Any]]:
        """Each process incarnation (pid): when it was sampled, and its slopes per metric over its
        own steady segments (the pooled slopes above, one incarnation at a time)."""
        cuts = sorted({at for at, _ in self.restarts})
        out = []
        for process in GATEWAYS + REPLICAS:
            for pid in dict.fromkeys(s.pid for s in self.loaded() if s.process == process):
                own = [s for s in self.loaded() if s.process == process and s.pid == pid]
                row: dict[str, Any] = {"process": process, "pid": pid, "from_s": own[0].at_s, "to_s": own[-1].at_s}
                for metric in METRICS:
                    slope = slope_per_hour(steady_segments(own, process, metric, cuts, self.settings.settle_s))
                    row[metric] = None if slope is None else round(slope, 2)
                out.append(row)
        return out

    def ranges(self) -> dict[str, dict[str, tuple[float, float]]]:
        """Each metric's lowest and highest sample, per process (all incarnations)."""
        out: dict[str, dict[str, tuple[float, float]]] = {}
        for process in GATEWAYS + REPLICAS:
            own = [s for s in self.samples if s.process == process]
            out[process] = {
                metric: (min(values), max(values))
                for metric in METRICS
                if (values := [float(getattr(s, metric)) for s in own if getattr(s, metric) == getattr(s, metric)])
            }
        return out

    def too_steep(self) -> list[str]:
        limits = self.settings.limits()
        return [
            f"{process} {metric}: {slope:+.1f}/h (limit {limits[metric]:g})"
            for process, row in self.slopes().items()
            for metric, slope in row.items()
            if slope is not None and slope > limits[metric]
        ]

    def lingering(self) -> list[str]:
        """Families of ended games' keys (the archive excepted) whose TTL outlasts the finished
        game's live keys (finished_ttl_s): not leaks, since they expire, but kept after the end."""
        if self.end_census is None:
            return []
        return [
            f"{name}: {row['keys']} keys, TTL up to {row['max_ttl_s']} s"
            for name, row in sorted(self.end_census.ended_game_keys.items())
            if not archived(name) and row["max_ttl_s"] > self.settings.finished_ttl_s
        ]

    def leaks(self) -> list[str]:
        if self.start_census is None or self.end_census is None:
            return ["no census"]
        return leaks(self.start_census, self.end_census)

    @property
    def ok(self) -> bool:
        unmeasured = any(v is None for row in self.slopes().values() for k, v in row.items() if k != "tasks")
        return self.audit.ok and not self.leaks() and not self.too_steep() and not unmeasured

    def as_dict(self) -> dict[str, Any]:
        return {
            "settings": asdict(self.settings),
            "ran_s": round(self.ran_s, 1),
            "restarts": [[at, name] for at, name in self.restarts],
            "samples": len(self.samples),
            "slopes_per_h": {p: {m: None if v is None else round(v, 2) for m, v in row.items()}
                             for p, row in self.slopes().items()},
            "ranges": {p: {m: [round(lo, 1), round(hi, 1)] for m, (lo, hi) in row.items()}
                       for p, row in self.ranges().items()},
            "incarnations": self.incarnations(),
            "too_steep": self.too_steep(),
            "census_start": None if self.start_census is None else asdict(self.start_census),
            "census_end": None if self.end_census is None else asdict(self.end_census),
            "leaks": self.leaks(),
            "lingering": self.lingering(),
            "audit": self.audit.as_dict(),
            "ok": self.ok,
        }

    def lines(self) -> list[str]:
        s = self.settings
        out = [
            f"soak: {self.ran_s:.0f} s, {s.games} load-generator games (think {s.think_s:g} s) + "
            f"{s.audited_games} audited, {len(self.restarts)} restarts (SIGTERM): "
            + ", ".join(f"{name}@{at:.0f}s" for at, name in self.restarts),
            f"slopes per hour (steady segments, pooled; limits {s.limits()}), and each metric's range:",
        ]
        ranges = self.ranges()
        for process, slopes in self.slopes().items():
            cells = []
            for metric in METRICS:
                value = slopes[metric]
                lo, hi = ranges[process].get(metric, (float("nan"), float("nan")))
                shown = "n/a" if value is None else f"{value:+.2f}"
                cells.append(f"{metric} {shown} [{lo:.1f}..{hi:.1f}]")
            out.append(f"  {process:11} " + "  ".join(cells))
        out.append("per incarnation (slopes per hour over its steady segments):")
        for row in self.incarnations():
            out.append(
                f"  {row['process']:11} pid {row['pid']:<8} {row['from_s']:6.0f}-{row['to_s']:<6.0f} s  "
                + "  ".join(f"{metric} {row[metric]}" for metric in METRICS)
            )
        for label, taken in (("start", self.start_census), ("end", self.end_census)):
            if taken is None:
                continue
            out.append(f"census at {label} ({taken.at_s:.0f} s): {taken.keys} keys")
            for name, row in sorted(taken.families.items()):
                ended = taken.ended_game_keys.get(name)
                extra = f"; of ended games {ended['keys']} (max TTL {ended['max_ttl_s']} s)" if ended else ""
                out.append(f"  {row['keys']:7} keys, {row['no_ttl']:7} without TTL  {name}{extra}")
        out.append(f"leaks: {self.leaks() or 'none'}")
        out.append(f"ended games' keys kept past their live keys' TTL (they expire): {self.lingering() or 'none'}")
        out.append(f"too steep: {self.too_steep() or 'none'}")
        out.extend(self.audit.lines())
        return out


async def restart_every(
    platform: Platform, settings: SoakSettings, report: SoakReport, began: float, stop_at: float
) -> None:
    """One gateway and one rules replica, SIGTERM and start again, every restart_every_s."""
    for round_ in range(int(settings.duration_s // settings.restart_every_s) + 1):
        due = began + (round_ + 1) * settings.restart_every_s
        if due >= stop_at:
            return
        await asyncio.sleep(due - time.monotonic())
        for victim in (GATEWAYS[round_ % 2], REPLICAS[round_ % 2]):
            report.restarts.append((round(time.monotonic() - began, 1), victim))
            await asyncio.to_thread(platform.terminate, victim, settings.grace_s + 10)
            await restart(platform, victim, report.audit)


async def run_soak(settings: SoakSettings, *, log: Any = print) -> SoakReport:
    report = SoakReport(settings)
    chaos = settings.chaos()
    report.audit.loadgen_floor = chaos.loadgen_floor
    redis_process = start_redis(None)
    env = {
        "TAFEL_TOKEN_SECRET": f"soak-{random.Random(settings.seed).getrandbits(128):032x}",
        "TAFEL_LOG_LEVEL": "ERROR",
        "TAFEL_GRACE_S": str(settings.grace_s),
        "TAFEL_PER_MOVE_S": str(settings.per_move_s),
        "TAFEL_FINISHED_TTL_S": str(settings.finished_ttl_s),
    }
    platform = Platform(redis_url=redis_process.url, gateways=2, rules_replicas=2, fixed_ports=False,
                        bot_pool=False, games=(GAME,), extra_env=env, quiet=False, metrics=True)
    redis = Redis.from_url(redis_process.url)
    sampler: asyncio.Future[None] | None = None
    try:
        await asyncio.to_thread(platform.start)
        targets = platform.gateway_addresses
        log(f"platform up: gateways {targets}, {GAME} rules {platform.rules_addresses[GAME]}")
        began = time.monotonic()
        stop_at = began + settings.duration_s
        audit = Audit()
        sampler = asyncio.ensure_future(sample_forever(platform, report.samples, settings.sample_every_s, began))
        load = asyncio.ensure_future(asyncio.to_thread(loadgen, targets, chaos))
        players = [
            audited_player(targets, audit, stop_at, chaos, settings.seed * 1000 + i)
            for i in range(2 * settings.audited_games)
        ]
        playing = asyncio.ensure_future(asyncio.gather(*players, return_exceptions=True))
        restarting = asyncio.ensure_future(restart_every(platform, settings, report, began, stop_at))
        await asyncio.sleep(min(settings.warm_up_s, settings.duration_s / 2))
        report.start_census = await census(redis, time.monotonic() - began)
        log(f"warm: {report.start_census.keys} keys in Redis")
        await restarting
        margin = settings.per_move_s * 4 + 60
        results = await asyncio.wait_for(playing, max(1.0, stop_at - time.monotonic()) + margin)
        for result in results:
            if isinstance(result, BaseException):
                report.audit.players_crashed += 1
                report.audit.client_errors[type(result).__name__] += 1
        try:
            stats = await asyncio.wait_for(load, max(1.0, stop_at - time.monotonic()) + margin)
        except Exception as error:  # reported, and the run fails: the audit below still runs
            report.audit.loadgen_failure = f"{type(error).__name__}: {error}"[:300]
        else:
            report.audit.loadgen_moves, report.audit.loadgen_games = int(stats["moves"]), int(stats["games_finished"])
            report.audit.client_errors.update(stats["errors"])
        report.audit.client_errors.update(audit.errors)
        report.ran_s = time.monotonic() - began
        log(f"load over after {report.ran_s:.0f} s; letting the clocks end what is left")
        await settle(redis, settings.per_move_s * 3 + 15)
        await audit_all(redis, audit, report.audit)
        report.end_census = await census(redis, time.monotonic() - began)
    finally:
        if sampler is not None:
            sampler.cancel()
        await redis.aclose()
        await asyncio.to_thread(platform.stop)
        redis_process.stop()
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.soak", description=__doc__.split("\n\n")[0])
    d = SoakSettings()
    parser.add_argument("--duration", type=float, default=d.duration_s, help="seconds of load")
    parser.add_argument("--restart-every", type=float, default=d.restart_every_s, help="seconds between restarts")
    parser.add_argument("--games", type=int, default=d.games, help="concurrent load-generator games")
    parser.add_argument("--audited", type=int, default=d.audited_games, help="concurrent audited games")
    parser.add_argument("--think", type=float, default=d.think_s, help="mean seconds a player thinks a move")
    parser.add_argument("--per-move", type=float, default=d.per_move_s, help="turn clock, seconds")
    parser.add_argument("--sample-every", type=float, default=d.sample_every_s)
    parser.add_argument("--warm-up", type=float, default=d.warm_up_s, help="seconds before the first census")
    parser.add_argument("--settle", type=float, default=d.settle_s, help="seconds left out after each restart")
    parser.add_argument("--finished-ttl", type=int, default=d.finished_ttl_s, help="TAFEL_FINISHED_TTL_S")
    parser.add_argument("--seed", type=int, default=d.seed)
    parser.add_argument("--rss-limit", type=float, default=d.rss_mib_per_h, help="MiB an hour")
    parser.add_argument("--fds-limit", type=float, default=d.fds_per_h, help="descriptors an hour")
    parser.add_argument("--tasks-limit", type=float, default=d.tasks_per_h, help="tasks an hour")
    parser.add_argument("--json-out", default="", help="also write the JSON (with every sample) here")
    args = parser.parse_args(argv)
    settings = SoakSettings(
        duration_s=args.duration, restart_every_s=args.restart_every, games=args.games,
        audited_games=args.audited, think_s=args.think, per_move_s=args.per_move,
        sample_every_s=args.sample_every, warm_up_s=args.warm_up, settle_s=args.settle,
        finished_ttl_s=args.finished_ttl, seed=args.seed, rss_mib_per_h=args.rss_limit,
        fds_per_h=args.fds_limit, tasks_per_h=args.tasks_limit,
    )
    signal.signal(signal.SIGTERM, signal.default_int_handler)  # stop cleanly (children included)
    report = asyncio.run(run_soak(settings))
    for line in report.lines():
        print(line)
    summary = report.as_dict()
    if args.json_out:
        with open(args.json_out, "w") as out:
            json.dump({**summary, "samples": [asdict(s) for s in report.samples]}, out)
    print(json.dumps(summary))
    return 0 if report.ok else 1


if __name__ == "__main__":
    sys.exit(main())
