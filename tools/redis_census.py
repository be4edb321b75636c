"""`python -m tools.redis_census`: where the platform's Redis spends its command time under load,
by script — what INFO commandstats cannot say (it lumps every script into one `evalsha` row).

Starts the platform as `tools.bench_calls` does, has the load generator play G games, and after
a warm-up logs every command Redis runs for a short window (SLOWLOG with a threshold of 0: each
entry has the command, its arguments and its duration). A script's own commands are logged
before the script, from a client at `?:0`, so each is attributed to the next EVALSHA: a census of
each script's calls a move, the commands inside one call, and its share of the command time.
A move is a `rules/commit` call (one per action; the rules tier's store, services/host/store.py).

The counts are exact. The durations are wall time inside Redis with the slowlog recording every
entry (which costs Redis a little per entry, and a busy two-core machine preempts it mid-command):
compare shares within one run, never the absolute µs across runs or against INFO cpu.
"""

from __future__ import annotations

import argparse
import time
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from kit.redis.scripts import all_scripts, script
from tools.bench_load import load_in_background, window_arguments
from tools.platform import Platform

SCRIPT_CLIENT = b"?:0"  # the client address Redis logs for a script's own commands
COMMIT = "rules/commit"
MAX_ENTRIES = 300_000  # the slowlog kept for the window (~0.5 KB an entry)


def script_names() -> dict[str, str]:
    """Every script's SHA (both dialects: PUBLISH and the cluster's SPUBLISH) -> its name."""
    return {script(each.name, sharded=sharded).sha: each.name for each in all_scripts() for sharded in (False, True)}


@dataclass
class Row:
    """One top-level command (a script by name: `EVALSHA rules/commit`) over the window."""

    calls: int = 0
    usec: int = 0  # its own duration, its script's commands included
    inner: Counter[str] = field(default_factory=Counter)  # a script's commands, by name


def attribute(entries: Iterable[Mapping[str, Any]], names: Mapping[str, str]) -> dict[str, Row]:
    """The slowlog's entries (oldest first) by top-level command; a script's commands (logged
    just before it, from SCRIPT_CLIENT) counted inside it."""
    rows: dict[str, Row] = defaultdict(Row)
    pending: Counter[str] = Counter()
    for entry in entries:
        words = bytes(entry["command"]).split(b" ", 2)
        command = words[0].decode(errors="replace").upper()
        if entry.get("client_address") == SCRIPT_CLIENT:
            pending[command] += 1
            continue
        if command in ("EVALSHA", "FCALL") and len(words) > 1:
            sha = words[1].decode(errors="replace")
            command = f"{command} {names.get(sha, sha[:8])}"
        row = rows[command]
        row.calls += 1
        row.usec += int(entry["duration"])
        row.inner.update(pending)
        pending.clear()
    return dict(rows)


def report(rows: Mapping[str, Row], top: int) -> list[str]:
    moves = rows[f"EVALSHA {COMMIT}"].calls if f"EVALSHA {COMMIT}" in rows else 0
    total = sum(row.usec for row in rows.values())
    lines = [f"{moves:,} moves (rules/commit calls); {total / 1000:,.1f} ms of command time (scripts' commands inside)"]
    if not moves or not total:
        return lines
    lines.append("  share  per move  µs a call  command (a script: the commands inside one call)")
    for name, row in sorted(rows.items(), key=lambda item: -item[1].usec)[:top]:
        inside = ""
        if row.inner:
            count = sum(row.inner.values()) / row.calls
            parts = ", ".join(f"{op} {n / row.calls:.1f}" for op, n in row.inner.most_common(6))
            inside = f"  [{count:.1f} inside: {parts}]"
        lines.append(
            f"  {100 * row.usec / total:4.1f}%  {row.calls / moves:8.3f}  {row.usec / row.calls:9.1f}  {name}{inside}"
        )
    return lines


def record(url: str, window_s: float) -> list[dict[str, Any]]:
    """Every command Redis ran for window_s, oldest first (the slowlog's settings restored)."""
    import redis as redis_py  # (imported here: the module's pure parts need no client)

    client = redis_py.Redis.from_url(url)
    try:
        before: Any = client.config_get("slowlog-*")
        client.config_set("slowlog-max-len", MAX_ENTRIES)
        client.slowlog_reset()
        try:
            client.config_set("slowlog-log-slower-than", 0)
            time.sleep(window_s)
        finally:  # (interrupted too: the server is left logging as it was)
            client.config_set("slowlog-log-slower-than", before["slowlog-log-slower-than"])
        entries = list(reversed(client.slowlog_get(MAX_ENTRIES)))
        client.slowlog_reset()
        client.config_set("slowlog-max-len", before["slowlog-max-len"])
    finally:
        client.close()
    if len(entries) >= MAX_ENTRIES:
        print(f"note: the slowlog filled ({MAX_ENTRIES:,} entries): a shorter --window counts all of it")
    return entries


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    window_arguments(parser, games=200, warm_up_s=10.0, window_s=3.0)
    parser.add_argument("--top", type=int, default=20, help="rows printed")
    args = parser.parse_args()
    platform = Platform(gateways=1, fixed_ports=False, bot_pool=False, games=("connect4",)).start()
    try:
        assert platform.redis_url is not None
        with load_in_background(platform.gateway_addresses[0], args.games, args.warm_up + args.window + 5.0):
            time.sleep(args.warm_up)
            entries = record(platform.redis_url, args.window)
    finally:
        platform.stop()
    print(f"{args.games} games, a {args.window:.0f} s window after {args.warm_up:.0f} s of play")
    print("\n".join(report(attribute(entries, script_names()), args.top)))


if __name__ == "__main__":
    main()
