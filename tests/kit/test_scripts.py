"""The Lua script files: complete headers, every call site's counts against them, includes, and
the EVALSHA -> EVAL fallback on a real Redis."""

from __future__ import annotations

import ast
import hashlib
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from redis.asyncio import Redis

from kit.redis import scripts
from kit.redis.keys import clock_key, clocks_key, game_keys, game_shard, meta_key
from kit.redis.layer import RedisLayer
from kit.redis.scripts import LUA_DIR, all_scripts, header_of, is_include, lua_names, script

ROOT = Path(__file__).resolve().parents[2]
SOURCES = ("gateway", "services", "kit", "tools", "clients")


def test_every_lua_file_has_a_complete_header() -> None:
    assert lua_names(), "no Lua files found"
    for name in lua_names():
        text = (LUA_DIR / f"{name}.lua").read_text()
        header = header_of(text)
        first = text.splitlines()[0]
        # A description comes first, before the fields.
        assert first.startswith("-- ") and first[3:].partition(":")[0] not in ("KEYS", "ARGV", "Returns", "Defines")
        if is_include(name):
            assert header.get("Defines"), f"{name}: '-- Defines:' names nothing"
            assert "KEYS" not in header and "ARGV" not in header, f"{name}: an include declares no KEYS/ARGV"
        else:
            assert header.get("Returns"), f"{name}: no '-- Returns:'"
            loaded = script(name)  # parses KEYS/ARGV (raises on a malformed line)
            assert loaded.sha == hashlib.sha1(loaded.source.encode()).hexdigest()
            left = [line for line in loaded.source.splitlines() if line.startswith(scripts.INCLUDE)]
            assert left == [], f"{name}: an include was left unexpanded"


def test_the_clock_function_is_shared_not_copied() -> None:
    """rules/commit arms the clock with the same Lua clocks/arm runs; the function lives in one file."""
    function = (LUA_DIR / "clocks/arm_function.lua").read_text()
    for name in ("clocks/arm", "rules/commit"):
        assert function in script(name).source
    copies = [
        name for name in lua_names()
        if "local function arm(" in (LUA_DIR / f"{name}.lua").read_text() and name != "clocks/arm_function"
    ]
    assert copies == []


def _call_sites() -> Iterator[tuple[str, int, str, ast.expr | None, ast.expr | None]]:
    """Every `<x>.run(script("owner/name"), keys, args)` (or `.start(...)`) in the code: (file, line, name, keys, args)."""
    for top in SOURCES:
        for path in sorted((ROOT / top).rglob("*.py")):
            if "node_modules" in path.parts or ".venv" in path.parts:
                continue
            tree = ast.parse(path.read_text(), str(path))
            for node in ast.walk(tree):
                # run() waits for the reply; start() sends it and hands back its future (the move path).
                if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("run", "start")):
                    continue
                if not node.args or not isinstance(node.args[0], ast.Call):
                    continue
                named = node.args[0]
                if not (isinstance(named.func, ast.Name) and named.func.id == "script" and named.args):
                    continue
                if not isinstance(named.args[0], ast.Constant) or not isinstance(named.args[0].value, str):
                    continue
                keys = node.args[1] if len(node.args) > 1 else None
                args = node.args[2] if len(node.args) > 2 else None
                yield str(path.relative_to(ROOT)), node.lineno, named.args[0].value, keys, args


def _literal_count(node: ast.expr | None) -> int | None:
    """How many values a literal list/tuple holds; None when it is built at run time."""
    if node is None:
        return 0
    if isinstance(node, (ast.List, ast.Tuple)) and not any(isinstance(e, ast.Starred) for e in node.elts):
        return len(node.elts)
    return None


def test_every_call_site_names_an_existing_script_with_the_declared_counts() -> None:
    sites = list(_call_sites())
    assert len(sites) >= 8, "the scan found too few call sites: has the calling convention changed?"
    runnable = {s.name for s in all_scripts()}
    for file, line, name, keys, args in sites:
        assert name in runnable, f"{file}:{line} runs {name}, which is not a script under lua/"
        loaded = script(name)
        count = _literal_count(keys)
        if count is not None:
            assert loaded.key_arity.allows(count), f"{file}:{line}: {name} takes KEYS {loaded.keys}, given {count}"
        count = _literal_count(args)
        if count is not None:
            assert loaded.arg_arity.allows(count), f"{file}:{line}: {name} takes ARGV {loaded.args}, given {count}"


def test_every_script_is_run_somewhere() -> None:
    used = {name for _, _, name, _, _ in _call_sites()}
    assert sorted(s.name for s in all_scripts() if s.name not in used) == []


def test_counts_optional_groups_and_any_more() -> None:
    commit = script("rules/commit")
    assert commit.keys == ("state", "events", "clock", "clocks", "meta")
    assert [n for n in range(10) if commit.key_arity.allows(n)] == [2, 5]
    assert commit.arg_arity.allows(21) and commit.arg_arity.allows(25) and not commit.arg_arity.allows(20)
    arm = script("clocks/arm")
    assert [n for n in range(10) if arm.key_arity.allows(n)] == [3]
    with pytest.raises(TypeError, match="clocks/arm takes KEYS clock clocks meta, got 2 keys"):
        arm.check(2, 6)
    with pytest.raises(TypeError, match="ARGV"):
        arm.check(3, 7)


async def test_a_wrong_count_raises_before_anything_reaches_redis(redis: Redis) -> None:
    # A layer whose pipelined connection could not reach anything: a call that got that far would
    # fail with a ConnectionError, not a TypeError.
    layer = RedisLayer(redis, url="redis://127.0.0.1:1/0", timeout_s=0.5, owns_client=False)
    try:
        with pytest.raises(TypeError):
            await layer.run(script("clocks/arm"), [clock_key("g"), clocks_key(game_shard("g"))], ["g", 1, "0", 1000, 0, 60])
        keys = game_keys("g")
        with pytest.raises(TypeError):  # half the clock's optional keys
            await layer.run(script("rules/commit"), [keys.state, keys.events, "c"], [])
    finally:
        await layer.close()


async def test_evalsha_falls_back_to_eval_after_a_script_flush(redis: Redis) -> None:
    layer = RedisLayer.around(redis)
    game = f"sc-{uuid.uuid4().hex[:10]}"
    keys = [clock_key(game), clocks_key(game_shard(game)), meta_key(game)]
    arm = script("clocks/arm")  # includes clocks/arm_function: the SHA is over the expanded text
    now = int(time.time() * 1000)
    try:
        await redis.script_flush()
        assert await redis.script_exists(arm.sha) == [False]
        first = await layer.run(arm, keys, [game, 1, "0", 60_000, now, 60])  # NOSCRIPT, then EVAL
        assert first == [1, str(now + 60_000).encode()]
        # Redis now knows the script by the SHA computed here: the next call is an EVALSHA.
        assert await redis.script_exists(arm.sha) == [True]
        assert await layer.run(arm, keys, [game, 1, "0", 60_000, now + 5, 60]) == [0, str(now + 60_000).encode()]
        await redis.script_flush()
        assert await layer.run(arm, keys, [game, 2, "1", 60_000, now + 9, 60]) == [1, str(now + 60_009).encode()]
    finally:
        await redis.delete(*keys)
        await redis.zrem(clocks_key(game_shard(game)), f"{game}|2|1")
        await layer.close()


@pytest.fixture
def lua_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """An empty lua/ for header edge cases; the real scripts' cache is restored afterwards."""
    monkeypatch.setattr(scripts, "LUA_DIR", tmp_path)
    scripts.script.cache_clear()
    yield tmp_path
    scripts.script.cache_clear()


def test_include_rules(lua_dir: Path) -> None:
    (lua_dir / "a").mkdir()
    (lua_dir / "a/fn.lua").write_text("-- a helper\n-- Defines: f()\n-- Returns: 1\nlocal function f() return 1 end\n")
    (lua_dir / "a/run.lua").write_text("-- runs f\n-- KEYS: -\n-- ARGV: x [y z] ...\n-- Returns: 1\n-- include: a/fn\nreturn f()\n")
    run = scripts.script("a/run")
    assert "local function f() return 1 end\nreturn f()" in run.source
    assert run.args == ("x", "y", "z") and run.arg_arity.optional == 2 and run.arg_arity.more
    assert [n for n in range(5) if run.arg_arity.allows(n)] == [1, 2, 3, 4]  # with "...", any beyond x
    with pytest.raises(ValueError, match="not a script"):
        scripts.script("a/fn")
    (lua_dir / "a/bad.lua").write_text("-- includes a script\n-- KEYS: -\n-- ARGV: -\n-- Returns: 1\n-- include: a/run\n")
    with pytest.raises(ValueError, match="no '-- Defines:'"):
        scripts.script("a/bad")
    (lua_dir / "a/loop.lua").write_text("-- a loop\n-- Defines: g()\n-- Returns: -\n-- include: a/loop\n")
    (lua_dir / "a/uses_loop.lua").write_text("-- x\n-- KEYS: -\n-- ARGV: -\n-- Returns: 1\n-- include: a/loop\n")
    with pytest.raises(ValueError, match="includes itself"):
        scripts.script("a/uses_loop")
    (lua_dir / "a/nokeys.lua").write_text("-- x\n-- ARGV: -\n-- Returns: 1\nreturn 1\n")
    with pytest.raises(ValueError, match="KEYS"):
        scripts.script("a/nokeys")
