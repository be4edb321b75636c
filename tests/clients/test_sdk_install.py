"""The SDKs install alone: each is built as a third party gets it, installed into an empty folder
with nothing of the checkout on its path, and plays a whole game against the running platform.

- Python: the `tafel` and `tafel-rules` wheels (`pip wheel`, from a copy of the sources holding
  only what a fresh clone has, plus gen/), installed into an empty venv (their dependencies from
  the index pip is configured with); run isolated (-I), a level-2 bot of the installed SDK plays
  each seat of a Plus 4 game, searching with the installed rules package.
- TypeScript: `npm pack` (its prepack script builds dist/), installed with `npm install --offline`
  into an empty folder beside tarballs of its dependencies packed from clients/typescript's
  node_modules (no registry needed); a Node script importing only `@tafel/sdk` and
  `@tafel/sdk/node` plays a Connect Four game on native gRPC.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

from tools.platform import Platform

ROOT = Path(__file__).resolve().parents[2]
TS = ROOT / "clients" / "typescript"
TS_DEPENDENCIES = ("@bufbuild/protobuf", "@connectrpc/connect", "@connectrpc/connect-web", "@connectrpc/connect-node")

PLAY_PYTHON = r"""
import asyncio, json, sys
import tafel, tafel_rules
from tafel.autoplay import play_game
from tafel.botplay import strategy_for
from tafel.client import TafelClient

async def main(address):
    async with await TafelClient.connect(address) as host, await TafelClient.connect(address) as guest:
        await host.sign_in_as_guest("host")
        await guest.sign_in_as_guest("guest")
        room = await host.create_room("plus4", seats=2, per_move_s=60)
        await guest.join_room(room.code)
        started = await host.wait_room_started(room.code)
        seats = [(await c.get_game(started.game_id)).seat for c in (host, guest)]
        outcomes = await asyncio.wait_for(
            asyncio.gather(*(play_game(c, started.game_id, s, strategy_for("plus4", 2, seed=s))
                             for c, s in zip((host, guest), seats))),
            timeout=240,
        )
        game = await host.get_game(started.game_id)
        print(json.dumps({
            "sdk": tafel.__file__, "rules": tafel_rules.__file__,
            "bots": sys.modules["tafel.bots.plus4"].__file__,
            "over": game.summary.status.over, "version": game.summary.status.version,
            "ranks": list(outcomes[0].ranks), "reason": outcomes[0].reason,
        }))

asyncio.run(main(sys.argv[1]))
"""

PLAY_TYPESCRIPT = r"""
import { moves, TafelClient, IllegalMove } from "@tafel/sdk";
import { createNativeTransport } from "@tafel/sdk/node";
import { createRequire } from "node:module";

const address = process.argv[2];
const client = () => new TafelClient(createNativeTransport(address));
const [host, guest] = [client(), client()];
await host.signInAsGuest("host");
await guest.signInAsGuest("guest");
const room = await host.createRoom("connect4", { seats: 2 });
await guest.joinRoom(room.code);
const started = await host.waitRoomStarted(room.code);
const gameId = started.gameId;

async function play(player) {
  for (let turns = 0; turns < 500; turns++) {
    const game = await player.getGame(gameId);
    const status = game.summary.status;
    if (status.over) return status;
    if (!status.toAct.includes(game.seat)) { await new Promise((r) => setTimeout(r, 20)); continue; }
    const view = game.view.game.value;
    const column = view.legalColumns[Number(status.version) % view.legalColumns.length];
    try {
      await player.submitMove(gameId, moves.connect4(column), { expectedVersion: status.version });
    } catch (error) {
      if (!(error instanceof IllegalMove)) throw error;  // the other seat moved first: read again
    }
  }
  throw new Error("the game did not end");
}

const [status] = await Promise.all([play(host), play(guest)]);
const require = createRequire(import.meta.url);
console.log(JSON.stringify({
  sdk: require.resolve("@tafel/sdk"), over: status.over, version: Number(status.version),
  ranks: status.outcome.ranks, reason: status.outcome.reason,
}));
host.close();
guest.close();
"""


def _run(*args: str | Path, cwd: Path, timeout: float = 240) -> str:
    done = subprocess.run(list(map(str, args)), cwd=cwd, capture_output=True, text=True, timeout=timeout, check=False)
    assert done.returncode == 0, f"{args}: {done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done.stdout


def _clone_of(folders: tuple[str, ...], target: Path) -> Path:
    """The folders' files as a fresh clone has them (tracked and new, not ignored): a build in
    the checkout could take a file the clone lacks (setuptools' build/, a compiled solver)."""
    listed = _run("git", "ls-files", "--cached", "--others", "--exclude-standard", "-z", *folders, cwd=ROOT)
    for name in filter(None, listed.split("\0")):
        if (ROOT / name).is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, target / name)
    return target


@pytest.fixture(scope="module")
def python_sdk(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[Path]]:
    """An empty venv with the SDK's wheels installed; the wheels."""
    folder = tmp_path_factory.mktemp("python-sdk")
    source = _clone_of(("clients/python", "packages/tafel-rules"), folder / "source")
    shutil.copytree(ROOT / "gen", source / "gen", ignore=shutil.ignore_patterns("__pycache__", ".stamp"))
    wheels = folder / "wheels"
    pip = (sys.executable, "-m", "pip")
    _run(
        *pip,
        "wheel",
        "--quiet",
        "--no-deps",
        "--wheel-dir",
        wheels,
        "clients/python",
        "packages/tafel-rules",
        cwd=source,
    )
    built = sorted(wheels.glob("*.whl"))
    _run(sys.executable, "-m", "venv", "--without-pip", folder / "venv", cwd=folder)
    python = folder / "venv" / "bin" / "python"
    # This venv's pip installs into the empty one (which has no pip): the wheels, and their
    # dependencies from the index pip is configured with.
    _run(*pip, "--python", python, "install", "--quiet", "--find-links", wheels, *built, cwd=folder, timeout=600)
    return python, built


def test_the_python_sdk_wheel_holds_the_sdk_the_bots_and_the_public_messages(
    python_sdk: tuple[Path, list[Path]],
) -> None:
    _, wheels = python_sdk
    sdk = next(w for w in wheels if w.name.startswith("tafel-"))
    rules = next(w for w in wheels if w.name.startswith("tafel_rules-"))
    inside = set(zipfile.ZipFile(sdk).namelist())
    for name in (
        "tafel/client.py",
        "tafel/bots/plus4.py",
        "tafel/bots/connect4_book.txt",
        "tafel/conformance/runner.py",
        "tafel/play/v1/play_pb2.py",
        "tafel/play/v1/play_pb2.pyi",
        "tafel/games/v1/reasons_pb2.py",
        "tafel/plus4/v1/plus4_pb2.py",
        "tafel/admin/v1/admin_pb2_grpc.py",
    ):
        assert name in inside, name
    # Nothing of the servers, and no internal protocol (the gateway's to the rules services).
    assert not [n for n in inside if n.startswith(("services/", "kit/", "gateway/", "tools/", "tafel/rules/"))]
    metadata = next(n for n in inside if n.endswith(".dist-info/METADATA"))
    assert "Requires-Dist: tafel-rules" in zipfile.ZipFile(sdk).read(metadata).decode()
    rules_inside = set(zipfile.ZipFile(rules).namelist())
    assert {"tafel_rules/game.py", "tafel_rules/plus4.py", "tafel_rules/coloursquare/sheets/A.json"} <= rules_inside


def test_the_installed_python_sdk_plays_a_whole_game_with_its_bots(
    platform: Platform, python_sdk: tuple[Path, list[Path]], tmp_path: Path
) -> None:
    python, _ = python_sdk
    site = python.parent.parent
    # -I: no PYTHONPATH, no user site, not the working folder: only what the venv holds.
    out = _run(python, "-I", "-c", PLAY_PYTHON, platform.gateway_addresses[0], cwd=tmp_path, timeout=300)
    played = json.loads(out.strip().splitlines()[-1])
    for module in ("sdk", "rules", "bots"):
        assert str(played[module]).startswith(str(site)), played
    assert played["over"] and played["version"] >= 7 and sorted(played["ranks"]) in ([1, 1], [1, 2]), played
    # The kit installed alone runs without a checkout's launcher: it asks for the platform to check.
    kit = subprocess.run(
        [site / "bin" / "tafel-conformance", "--client", "true"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert kit.returncode != 0 and "--server HOST:PORT" in kit.stderr, kit.stderr


def _import_graph(folder: Path) -> dict[str, set[str]]:
    """The SDK's modules (its generated code aside) and the ones each imports, types included."""
    graph: dict[str, set[str]] = {}
    for path in sorted(folder.glob("*.ts")):
        imported = re.findall(r'^\s*(?:import|export)\b[^;]*?from\s+"\./([\w-]+)\.js"', path.read_text(), re.M)
        graph[path.stem] = set(imported)
    return graph


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    visiting: list[str] = []
    done: set[str] = set()

    def visit(name: str) -> list[str] | None:
        if name in visiting:
            return [*visiting[visiting.index(name) :], name]
        if name in done or name not in graph:
            return None
        visiting.append(name)
        for other in sorted(graph[name]):
            if found := visit(other):
                return found
        visiting.pop()
        done.add(name)
        return None

    return next((found for name in sorted(graph) if (found := visit(name))), None)


def test_the_typescript_sdk_has_no_import_cycle() -> None:
    graph = _import_graph(TS / "src")
    assert "play-stream" in graph["client"]  # the walk reads the imports
    assert _cycle(graph) is None
    assert _cycle({"client": {"play-stream"}, "play-stream": {"client"}}) == ["client", "play-stream", "client"]


@pytest.mark.skipif(shutil.which("npm") is None, reason="needs Node's npm")
def test_the_typescript_sdk_pack_installs_alone_and_plays_a_game(platform: Platform, tmp_path: Path) -> None:
    if not (TS / "node_modules" / "typescript").is_dir():
        pytest.fail("clients/typescript/node_modules is missing: `make ts` installs it")
    packs = tmp_path / "packs"
    packs.mkdir()
    # A copy of the SDK's folder (its clone's files, the generated code, node_modules linked), so
    # the prepack build writes nowhere in the checkout.
    copy = _clone_of(("clients/typescript",), tmp_path / "source") / "clients" / "typescript"
    shutil.copytree(TS / "src" / "gen", copy / "src" / "gen", dirs_exist_ok=True)
    (copy / "node_modules").symlink_to(TS / "node_modules")
    out = _run("npm", "pack", "--json", "--pack-destination", packs, cwd=copy)
    (pack,) = json.loads(out[out.index("[") :])
    tarball = packs / pack["filename"]
    names = set(tarfile.open(tarball).getnames())
    manifest = json.loads(tarfile.open(tarball).extractfile("package/package.json").read())  # type: ignore[union-attr]
    assert "private" not in manifest
    shipped = [manifest["main"], manifest["types"]] + [
        path for entry in manifest["exports"].values() if isinstance(entry, dict) for path in entry.values()
    ]
    for path in shipped:
        assert f"package/{path.removeprefix('./')}" in names, path
    assert not [n for n in names if n.startswith(("package/src/", "package/test/", "package/dist/test/"))]
    for dependency in TS_DEPENDENCIES:
        _run(
            "npm", "pack", "--ignore-scripts", "--pack-destination", packs, TS / "node_modules" / dependency, cwd=packs
        )

    user = tmp_path / "user"
    user.mkdir()
    (user / "package.json").write_text(json.dumps({"name": "sdk-user", "private": True, "type": "module"}))
    _run("npm", "install", "--offline", "--no-audit", "--no-fund", *sorted(packs.glob("*.tgz")), cwd=user)
    (user / "play.mjs").write_text(PLAY_TYPESCRIPT)
    out = _run("node", "play.mjs", platform.gateway_addresses[0], cwd=user, timeout=180)
    played = json.loads(out.strip().splitlines()[-1])
    assert played["sdk"].startswith(str(user / "node_modules" / "@tafel" / "sdk")), played
    assert played["over"] and played["version"] >= 7 and sorted(played["ranks"]) in ([1, 1], [1, 2]), played
