"""Lua scripts: one file each under kit/redis/lua/<owner>/<name>.lua, run by EVALSHA.

Each file starts with a header that documents it and that `RedisLayer.run` checks on every call:

    -- <what it does, one or more lines>
    -- KEYS: state events requests        (the names of KEYS[1..n])
    -- ARGV: version state ...            (the names of ARGV[1..n]; "-" for none)
    -- Returns: <what it answers>

Two suffixes make a count flexible: a trailing "..." takes any number of further values, and a
trailing "[a b c]" group is all there or all absent (`KEYS: state events [clock clocks]` takes 2
or 4 keys). A call with any other number of keys or arguments is a programming error and raises
TypeError before anything reaches Redis, so the header cannot drift from the callers.

Sharing a function between scripts: a file whose header has `-- Defines: name(arguments), ...`
instead of KEYS/ARGV/Returns is a piece of Lua that is never run on its own (what its functions
answer is documented beside them), and a script takes it in
with a line `-- include: <owner>/<name>` in its body, replaced by that file's text when the
script is loaded (the SHA is over the expanded source). The including script's header says what
the function writes, so the keys it touches are still documented where they are written.

Publishing to a shard channel (a game's wake-up: a channel in the script's own slot, see
kit/redis/pubsub.py): a script writes `redis.call(SHARD_PUBLISH, channel, payload)` and the loader
defines SHARD_PUBLISH on a first line of its own: 'PUBLISH' in `script(name)`, 'SPUBLISH' in
`script(name, sharded=True)`, the variant RedisLayer.run picks on a Redis 7 cluster. The two
variants differ in that line only (same header, same checks) and have their own SHA. A channel of
another slot (the lobby's global channels) stays a plain 'PUBLISH': Redis 7 refuses a script's
SPUBLISH outside its slot ("non local key").
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from functools import cache
from pathlib import Path

LUA_DIR = Path(__file__).parent / "lua"
INCLUDE = "-- include:"
SHARD_PUBLISH = "SHARD_PUBLISH"


@dataclass(frozen=True)
class Arity:
    """The names a header line gives and which counts it allows."""

    names: tuple[str, ...]  # every name, the optional group's included
    optional: int  # how many of the last names form the all-or-nothing group
    more: bool  # any number beyond the named ones

    def allows(self, count: int) -> bool:
        required = len(self.names) - self.optional
        if self.more:
            return count >= required
        return count == required or (self.optional > 0 and count == len(self.names))


@dataclass(frozen=True)
class Script:
    name: str  # "<owner>/<name>", its path under lua/ without .lua
    source: str  # with every include expanded
    sha: str
    key_arity: Arity
    arg_arity: Arity
    returns: str
    publishes_shard: bool = False  # uses SHARD_PUBLISH: has an SPUBLISH variant

    def dialect(self, sharded: bool) -> Script:
        """This script as a deployment runs it: the SPUBLISH variant on a Redis 7 cluster."""
        return script(self.name, sharded=True) if sharded and self.publishes_shard else self

    @property
    def keys(self) -> tuple[str, ...]:
        return self.key_arity.names

    @property
    def args(self) -> tuple[str, ...]:
        return self.arg_arity.names

    def check(self, keys: int, args: int) -> None:
        if not self.key_arity.allows(keys):
            raise TypeError(f"script {self.name} takes KEYS {' '.join(self.keys)}, got {keys} keys")
        if not self.arg_arity.allows(args):
            raise TypeError(f"script {self.name} takes ARGV {' '.join(self.args)}, got {args} arguments")


def header_of(source: str) -> dict[str, str]:
    """The `-- Field: value` lines of a file's leading comment block."""
    header: dict[str, str] = {}
    for line in source.splitlines():
        if not line.startswith("--"):
            break
        field, sep, value = line[2:].strip().partition(":")
        if sep and field in ("KEYS", "ARGV", "Returns", "Defines"):
            header[field] = value.strip()
    return header


def _arity(header: dict[str, str], field: str, name: str) -> Arity:
    if field not in header:
        raise ValueError(f"lua/{name}.lua: the header has no '-- {field}:' line")
    text = header[field].strip()
    if text == "-":
        return Arity((), 0, False)
    more = text.endswith("...")
    if more:
        text = text[:-3].strip()
    optional: list[str] = []
    if text.endswith("]"):
        start = text.rfind("[")
        if start < 0:
            raise ValueError(f"lua/{name}.lua: unbalanced ']' in '-- {field}:'")
        optional = text[start + 1 : -1].split()
        text = text[:start]
    names = text.split() + optional
    if any(c in word for word in names for c in "[]."):
        raise ValueError(f"lua/{name}.lua: '-- {field}:' takes names, one optional [group] and '...' last")
    return Arity(tuple(names), len(optional), more)


def _expand(name: str, seen: tuple[str, ...] = ()) -> str:
    if name in seen:
        raise ValueError(f"lua/{name}.lua includes itself (via {' -> '.join(seen)})")
    source = (LUA_DIR / f"{name}.lua").read_text()
    out: list[str] = []
    for line in source.splitlines(keepends=True):
        if line.startswith(INCLUDE):
            included = line[len(INCLUDE) :].strip()
            if "Defines" not in header_of((LUA_DIR / f"{included}.lua").read_text()):
                raise ValueError(f"lua/{name}.lua includes {included}, which has no '-- Defines:' line")
            out.append(_expand(included, (*seen, name)))
            if not out[-1].endswith("\n"):
                out.append("\n")
        else:
            out.append(line)
    return "".join(out)


@cache  # a file is read once per process; scripts never change while it runs
def script(name: str, *, sharded: bool = False) -> Script:
    """The script at lua/<name>.lua, e.g. script("rules/commit"); `sharded`: its shard-channel
    publishes are SPUBLISH (Redis 7 cluster), else PUBLISH."""
    source = _expand(name)
    publishes_shard = SHARD_PUBLISH in source
    if publishes_shard:
        source = f"local {SHARD_PUBLISH} = '{'SPUBLISH' if sharded else 'PUBLISH'}'\n{source}"
    header = header_of((LUA_DIR / f"{name}.lua").read_text())
    if "Defines" in header:
        raise ValueError(f"lua/{name}.lua defines a function to include; it is not a script to run")
    if "Returns" not in header:
        raise ValueError(f"lua/{name}.lua: the header has no '-- Returns:' line")
    return Script(
        name=name,
        source=source,
        sha=hashlib.sha1(source.encode()).hexdigest(),
        key_arity=_arity(header, "KEYS", name),
        arg_arity=_arity(header, "ARGV", name),
        returns=header["Returns"],
        publishes_shard=publishes_shard,
    )


def lua_names() -> list[str]:
    """Every file in lua/ as "<owner>/<name>", scripts and included functions alike."""
    return [str(p.relative_to(LUA_DIR).with_suffix("")) for p in sorted(LUA_DIR.rglob("*.lua"))]


def is_include(name: str) -> bool:
    return "Defines" in header_of((LUA_DIR / f"{name}.lua").read_text())


def all_scripts() -> list[Script]:
    """Every runnable script in lua/ (the cluster audit and the header test walk them)."""
    return [script(name) for name in lua_names() if not is_include(name)]


# The scripts each tier runs: its health check reads and loads every one (kit/health.py), so a
# package that lacks one says NOT_SERVING rather than failing the first call that needs it.
# tests/kit/test_health.py keeps the lists equal to the script("...") calls in each tier's code.
RULES_SCRIPTS = ("rules/commit", "rules/create", "rules/load")
GATEWAY_SCRIPTS = (
    "auth/claim_name",
    "auth/drop",
    "auth/fail",
    "auth/register",
    "auth/set_display_name",
    "auth/set_password",
    "bots/due",
    "bots/joined",
    "bots/request",
    "bots/settle",
    "bots/take",
    "challenges/settle",
    "chat/rate",
    "chat/send",
    "clocks/arm",
    "clocks/claim",
    "clocks/extend",
    "games/start",
    "leases/release",
    "mail/claim",
    "mail/confirm",
    "mail/queue",
    "mail/retry",
    "mail/set",
    "mail/settle",
    "matchmaking/cancel",
    "matchmaking/claim",
    "matchmaking/claim_enqueue",
    "matchmaking/enqueue",
    "matchmaking/lookup",
    "matchmaking/park",
    "matchmaking/pair",
    "matchmaking/refresh",
    "matchmaking/renew",
    "matchmaking/started",
    "matchmaking/told",
    "notices/clear",
    "notices/notify",
    "notices/read",
    "notices/rewrite",
    "offers/set",
    "people/follow",
    "people/presence",
    "people/unlease",
    "ratings/apply",
    "ratings/best",
    "rooms/create",
    "rooms/join",
    "rooms/leave",
    "rooms/read",
    "rooms/settle",
    "rooms/start",
    "standing/sanction",
    "streams/rewrite",
    "tournaments/announce",
    "tournaments/cancel",
    "tournaments/create",
    "tournaments/direct",
    "tournaments/join",
    "tournaments/save",
    "tournaments/start",
    "tournaments/unregister",
    "vacation/end",
    "vacation/start",
)
