"""Lua scripts: one file each under kit/redis/lua/<owner>/<name>.lua, run by EVALSHA.

Each file starts with a header that documents it and that `RedisLayer.run` checks on every call:

    -- <what it does, one or more lines>
    -- KEYS: state events requests        (the names of KEYS[1..n]; a trailing "..." = any more)
    -- ARGV: version state ...            (the names of ARGV[1..n]; "-" for none)
    -- Returns: <what it answers>

A call with the wrong number of keys or arguments is a programming error and raises before
anything reaches Redis, so the header cannot drift from the callers.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from functools import cache
from pathlib import Path

LUA_DIR = Path(__file__).parent / "lua"


@dataclass(frozen=True)
class Script:
    name: str  # "<owner>/<name>", its path under lua/ without .lua
    source: str
    sha: str
    keys: tuple[str, ...]
    args: tuple[str, ...]
    more_keys: bool  # the KEYS line ends in "...": any number beyond the named ones
    more_args: bool

    def check(self, keys: int, args: int) -> None:
        if keys < len(self.keys) or (keys > len(self.keys) and not self.more_keys):
            raise TypeError(f"script {self.name} takes KEYS {' '.join(self.keys)}, got {keys} keys")
        if args < len(self.args) or (args > len(self.args) and not self.more_args):
            raise TypeError(f"script {self.name} takes ARGV {' '.join(self.args)}, got {args} arguments")


def _names(header: dict[str, str], field: str, name: str) -> tuple[tuple[str, ...], bool]:
    if field not in header:
        raise ValueError(f"lua/{name}.lua: the header has no '-- {field}:' line")
    words = header[field].split()
    if words == ["-"]:
        return (), False
    more = bool(words) and words[-1] == "..."
    return tuple(words[:-1] if more else words), more


@cache  # a file is read once per process; scripts never change while it runs
def script(name: str) -> Script:
    """The script at lua/<name>.lua, e.g. script("rules/commit")."""
    path = LUA_DIR / f"{name}.lua"
    source = path.read_text()
    header: dict[str, str] = {}
    for line in source.splitlines():
        if not line.startswith("--"):
            break
        field, sep, value = line[2:].strip().partition(":")
        if sep and field in ("KEYS", "ARGV", "Returns"):
            header[field] = value.strip()
    keys, more_keys = _names(header, "KEYS", name)
    args, more_args = _names(header, "ARGV", name)
    return Script(
        name=name,
        source=source,
        sha=hashlib.sha1(source.encode()).hexdigest(),
        keys=keys,
        args=args,
        more_keys=more_keys,
        more_args=more_args,
    )


def all_scripts() -> list[Script]:
    """Every script in lua/ (the cluster audit and the header test walk them)."""
    return [script(str(p.relative_to(LUA_DIR).with_suffix(""))) for p in sorted(LUA_DIR.rglob("*.lua"))]
