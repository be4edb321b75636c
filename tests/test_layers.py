"""The import layers (docs/architecture.md, "Layers"), read from the source with ast (nothing is
imported, so a module-level side effect cannot hide an import). Every import counts, including
ones inside functions and under `if TYPE_CHECKING:`: a function-level import is still a
dependency, only a later one.

From the bottom:
- the pure rules (packages/tafel-rules: `tafel_rules`, its own package, the contract
  tafel_rules.game and each game): the standard library and each other, nothing else: no grpc,
  redis, generated (`tafel.*`) or protobuf code, so the bots and the services share one
  implementation of each game, and the SDK installs it without the servers;
- kit/: no services, gateway or SDK code;
- services/ (the rules tier): kit, pure rules, generated code; no gateway or SDK code; the rules
  host (services/host: what makes a game a service) imports no game (no game package, no game
  of tafel_rules);
- gateway/: kit and generated code; no rules-service code at all (no game package, no
  services.host) and no SDK code;
- the Python SDK (clients/python/tafel): generated code and pure rules; no kit, services or gateway
  code (it is a package for third parties);
- the load generator (clients/loadgen/tafel_loadgen): a client like any other, so the SDK, generated
  code and pure rules; no kit, services or gateway code;
- tools/ (benchmarks, the platform starter, migrations, chaos): anything, tests' helpers included;
  but nothing imports tools except the tests (and the Makefile, which runs them as `python -m
  tools.X`): a tool is an entry point, never a library a shipped package needs;
- tests/: nothing outside the tests imports them but tools/ (a benchmark starting what a test starts);
- the TypeScript SDK (clients/typescript/src) and the web app (clients/web/src): a relative import
  stays inside its own package's folder, but for the web app's one door to the SDK (src/sdk.ts, to
  the SDK's built entry point, what its npm package ships): the SDK never reaches into the app, and
  no other page of the app into the SDK's sources;
- no import cycles among the modules of any one of these Python packages.
`violations()` applies the rules to a source tree; the last test runs it on small trees that
break each rule once, so the check itself is shown to catch what it is for.
"""

from __future__ import annotations

import ast
import os
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# Source folders and the module name each one's files have.
PACKAGES = {
    "packages/tafel-rules/tafel_rules": "tafel_rules",
    "kit": "kit",
    "services": "services",
    "gateway": "gateway",
    "clients/python/tafel": "tafel",
    "clients/loadgen/tafel_loadgen": "tafel_loadgen",
    "tools": "tools",
}
# The TypeScript packages: their source folders (scanned) and the folder a relative import must stay in.
TS_PACKAGES = {"clients/typescript/src": "clients/typescript", "clients/web/src": "clients/web"}
# The one import that leaves its package: the web app bundles the SDK's built entry point.
TS_DOORS = {("clients/web/src/sdk.ts", "clients/typescript/dist/src/index.js")}
# The modules of the rules package that are not a game.
RULES_NOT_A_GAME = frozenset({"tafel_rules", "tafel_rules.game"})
# Remaining gateway -> services.host imports, to shrink to nothing (empty: the gateway is free of it).
GATEWAY_SERVICES_HOST_ALLOWLIST: frozenset[tuple[str, str]] = frozenset()


@dataclass(frozen=True)
class Module:
    name: str
    path: Path
    shown: str  # the path from the tree's root, for messages
    is_package: bool


@dataclass(frozen=True)
class Edge:
    importer: str
    imported: str  # a module of the tree when it is one, else the name as written
    line: int


def modules_of(root: Path) -> dict[str, Module]:
    found: dict[str, Module] = {}
    for folder, prefix in PACKAGES.items():
        base = root / folder
        for path in sorted(base.rglob("*.py")) if base.is_dir() else ():
            parts = list(path.relative_to(base).with_suffix("").parts)
            is_package = parts[-1] == "__init__"
            if is_package:
                parts = parts[:-1]
            name = ".".join([prefix, *parts])
            found[name] = Module(name, path, str(path.relative_to(root)), is_package)
    return found


def _absolute(module: Module, level: int, written: str | None) -> str:
    """The absolute name of a relative import (`from . import x`, `from ..a import b`)."""
    package = module.name.split(".") if module.is_package else module.name.split(".")[:-1]
    base = package[: len(package) - (level - 1)] if level > 1 else package
    return ".".join([*base, written] if written else base)


def edges_of(module: Module, known: dict[str, Module]) -> Iterator[Edge]:
    tree = ast.parse(module.path.read_text(encoding="utf-8"), filename=str(module.path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield Edge(module.name, alias.name, node.lineno)
        elif isinstance(node, ast.ImportFrom):
            source = _absolute(module, node.level, node.module) if node.level else (node.module or "")
            for alias in node.names:
                # `from a import b` imports the module a.b when there is one, else a name of a.
                submodule = f"{source}.{alias.name}"
                yield Edge(module.name, submodule if submodule in known else source, node.lineno)


def graph_of(root: Path) -> tuple[dict[str, Module], list[Edge]]:
    known = modules_of(root)
    return known, [edge for module in known.values() for edge in edges_of(module, known)]


def is_pure_rules(name: str) -> bool:
    return name.split(".")[0] == "tafel_rules"


def tier_of(name: str, known: dict[str, Module]) -> str:
    """kit | pure | services | gateway | sdk | loadgen | tools | tests | generated | stdlib | external."""
    top = name.split(".")[0]
    if top in ("tafel_loadgen", "tools", "tests"):
        return {"tafel_loadgen": "loadgen"}.get(top, top)
    if top == "kit":
        return "kit"
    if top == "gateway":
        return "gateway"
    if top == "tafel_rules":
        return "pure"
    if top == "services":
        return "services"
    if top == "tafel":
        # The SDK's modules and the generated code share the `tafel` namespace; generated
        # modules are the ones no SDK file defines.
        return "sdk" if name in known else "generated"
    if top in sys.stdlib_module_names or top == "__future__":
        return "stdlib"
    return "external"


def game_package(name: str) -> str | None:
    """The game a module belongs to: a rules service's package, or a game of the rules package."""
    parts = name.split(".")
    if len(parts) >= 2 and parts[0] == "services" and parts[1] != "host":
        return parts[1]
    if len(parts) >= 2 and parts[0] == "tafel_rules" and ".".join(parts[:2]) not in RULES_NOT_A_GAME:
        return parts[1]
    return None


ALLOWED = {
    "pure": {"pure", "stdlib"},
    "kit": {"kit", "generated", "stdlib", "external"},
    "services": {"services", "pure", "kit", "generated", "stdlib", "external"},
    "gateway": {"gateway", "kit", "generated", "stdlib", "external"},
    "sdk": {"sdk", "pure", "generated", "stdlib", "external"},
    "loadgen": {"loadgen", "sdk", "pure", "generated", "stdlib", "external"},
    "tools": {
        "tools",
        "tests",
        "kit",
        "pure",
        "services",
        "gateway",
        "sdk",
        "loadgen",
        "generated",
        "stdlib",
        "external",
    },
}


def layer_violations(known: dict[str, Module], edges: list[Edge]) -> list[str]:
    found = []
    for edge in edges:
        importer, imported = tier_of(edge.importer, known), tier_of(edge.imported, known)
        where = f"{known[edge.importer].shown}:{edge.line}"
        if imported not in ALLOWED[importer]:
            if importer == "gateway" and (edge.importer, edge.imported) in GATEWAY_SERVICES_HOST_ALLOWLIST:
                continue
            found.append(f"{edge.importer} ({where}) is {importer} and imports {edge.imported} ({imported})")
        elif importer == "services" and edge.importer.startswith("services.host.") and game_package(edge.imported):
            found.append(f"{edge.importer} ({where}): the rules host imports a game, {edge.imported}")
    return found


def cycles(known: dict[str, Module], edges: list[Edge]) -> list[list[str]]:
    """Import cycles among modules of one package (Tarjan's strongly connected components)."""
    following: dict[str, set[str]] = {name: set() for name in known}
    for edge in edges:
        same_package = edge.imported.split(".")[0] == edge.importer.split(".")[0]
        if edge.imported in known and same_package and edge.imported != edge.importer:
            # Importing a.b.c runs the package a.b first; a package's own __init__ importing its
            # modules is not a cycle with them.
            following[edge.importer].add(edge.imported)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(name: str) -> None:
        index[name] = low[name] = len(index)
        stack.append(name)
        on_stack.add(name)
        for other in sorted(following[name]):
            if other not in index:
                visit(other)
                low[name] = min(low[name], low[other])
            elif other in on_stack:
                low[name] = min(low[name], index[other])
        if low[name] == index[name]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == name:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))
    for name in sorted(following):
        if name not in index:
            visit(name)
    return found


def violations(root: Path) -> list[str]:
    known, edges = graph_of(root)
    return (
        layer_violations(known, edges)
        + [f"import cycle: {' -> '.join(c)}" for c in cycles(known, edges)]
        + ts_violations(root)
    )


# `import ... from "x"`, `export ... from "x"`, `import "x"` and `import("x")`.
TS_IMPORT = re.compile(r"""(?:\bfrom\s*|\bimport\s*\(?\s*)["']([^"']+)["']""")


def ts_violations(root: Path) -> list[str]:
    """Relative imports of the TypeScript packages that leave their package's folder."""
    found = []
    for source, package in TS_PACKAGES.items():
        base, home = root / source, (root / package).resolve()
        for path in sorted(base.rglob("*.ts")) if base.is_dir() else ():
            if "gen" in path.relative_to(base).parts:
                continue  # generated by buf
            for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                for spec in TS_IMPORT.findall(line):
                    target = (path.parent / spec).resolve()
                    if not spec.startswith(".") or target.is_relative_to(home):
                        continue
                    shown = path.relative_to(root)
                    if (str(shown), os.path.relpath(target, root.resolve())) not in TS_DOORS:
                        found.append(f"{shown}:{number} imports {spec}, outside {package}")
    return found


# -- the repository ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def repository() -> tuple[dict[str, Module], list[Edge]]:
    return graph_of(ROOT)


def test_the_walk_sees_every_tier(repository: tuple[dict[str, Module], list[Edge]]) -> None:
    known, edges = repository
    tiers = {tier_of(name, known) for name in known}
    assert tiers == {"kit", "pure", "services", "gateway", "sdk", "loadgen", "tools"}
    for game in ("connect4", "plus4", "coloursquare.rules"):
        assert is_pure_rules(f"tafel_rules.{game}") and f"tafel_rules.{game}" in known
    assert len(edges) > 500  # the walk really reads the imports


def test_each_tier_imports_only_what_it_may(repository: tuple[dict[str, Module], list[Edge]]) -> None:
    known, edges = repository
    assert layer_violations(known, edges) == []


def test_the_gateway_allowlist_only_shrinks(repository: tuple[dict[str, Module], list[Edge]]) -> None:
    """Every allowlisted gateway -> services.host import must still exist: remove it when fixed."""
    _, edges = repository
    present = {(edge.importer, edge.imported) for edge in edges}
    assert GATEWAY_SERVICES_HOST_ALLOWLIST <= present


def test_typescript_packages_stay_in_their_folders() -> None:
    assert ts_violations(ROOT) == []
    sources = [path for source in TS_PACKAGES for path in (ROOT / source).rglob("*.ts")]
    assert len(sources) > 20  # the walk really reads the TypeScript


def test_no_import_cycles(repository: tuple[dict[str, Module], list[Edge]]) -> None:
    known, edges = repository
    assert cycles(known, edges) == []


# -- the check itself -----------------------------------------------------------------------------


BROKEN = {
    "kit/uses_gateway.py": "from gateway.server import serve\n",
    "packages/tafel-rules/tafel_rules/connect4.py": "import grpc\n",
    "packages/tafel-rules/tafel_rules/plus4.py": "def later() -> None:\n    from tafel.plus4.v1 import plus4_pb2\n",
    "services/plus4/codec.py": "from tafel_rules.plus4 import RULES\nfrom tafel.plus4.v1 import plus4_pb2\n",
    "services/host/store.py": "from tafel_rules import connect4\n",
    "gateway/ratings.py": "from tafel_rules.coloursquare.scoring import ranking\n",
    "gateway/games.py": "from services.host.store import GameStore\n",
    "clients/python/tafel/client.py": "from tafel.play_stream import PlayStream\nfrom kit.errors import Refused\n",
    "clients/python/tafel/play_stream.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
    "    from tafel.client import TafelClient\n",
    "clients/loadgen/tafel_loadgen/games.py": "from gateway.settings import GatewaySettings\n",
    "clients/python/tafel/conformance/runner.py": "from tools.platform import Platform\n",
    "gateway/sessions.py": "from tests.gateway.harness import Client\n",
    "tools/bench_x.py": "from tests.gateway.harness import spawn_gateway\nfrom gateway.server import serve\n",
    "clients/web/src/game.ts": 'import { Sdk } from "../../typescript/src/client.js";\nimport { t } from "./i18n.js";\n',
    "clients/web/src/sdk.ts": 'export * from "../../typescript/dist/src/index.js";\n',
    "clients/typescript/src/client.ts": 'import { x } from "../../web/src/app.js";\nimport { y } from "./gen/z.js";\n',
}


def test_the_check_catches_each_kind_of_bad_import(tmp_path: Path) -> None:
    for relative, source in BROKEN.items():
        path = tmp_path / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(source, encoding="utf-8")
    for package in (
        "packages/tafel-rules/tafel_rules",
        "packages/tafel-rules/tafel_rules/coloursquare",
        "services",
        "services/plus4",
        "services/host",
    ):
        (tmp_path / package).mkdir(parents=True, exist_ok=True)
        (tmp_path / package / "__init__.py").touch()
    (tmp_path / "packages/tafel-rules/tafel_rules/coloursquare/scoring.py").write_text(
        "import json\n", encoding="utf-8"
    )
    found = "\n".join(violations(tmp_path))
    for expected in (
        "kit.uses_gateway (kit/uses_gateway.py:1) is kit and imports gateway.server (gateway)",
        "tafel_rules.connect4 (packages/tafel-rules/tafel_rules/connect4.py:1) is pure and imports grpc (external)",
        "tafel_rules.plus4 (packages/tafel-rules/tafel_rules/plus4.py:2) is pure and imports tafel.plus4.v1 (generated)",
        "services.host.store (services/host/store.py:1): the rules host imports a game, tafel_rules.connect4",
        "gateway.ratings (gateway/ratings.py:1) is gateway and imports tafel_rules.coloursquare.scoring (pure)",
        "gateway.games (gateway/games.py:1) is gateway and imports services.host.store (services)",
        "tafel.client (clients/python/tafel/client.py:2) is sdk and imports kit.errors (kit)",
        "import cycle: tafel.client -> tafel.play_stream",
        "tafel_loadgen.games (clients/loadgen/tafel_loadgen/games.py:1) is loadgen and imports gateway.settings",
        "tafel.conformance.runner (clients/python/tafel/conformance/runner.py:1) is sdk and imports tools.platform",
        "gateway.sessions (gateway/sessions.py:1) is gateway and imports tests.gateway.harness (tests)",
        "clients/web/src/game.ts:1 imports ../../typescript/src/client.js, outside clients/web",
        "clients/typescript/src/client.ts:1 imports ../../web/src/app.js, outside clients/typescript",
    ):
        assert expected in found
    # What the tiers may do is not reported: a codec imports generated code and its rules.
    assert "services.plus4.codec" not in found
    assert "tools.bench_x" not in found  # a tool may import anything
    assert "sdk.ts" not in found  # the web app's one door to the SDK
    assert "./i18n.js" not in found and "./gen/z.js" not in found
    assert "tafel_rules.coloursquare.scoring" not in found.replace("imports tafel_rules.coloursquare.scoring", "")
