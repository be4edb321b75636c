"""Nothing missing from an installed package: the tafel-platform wheel, installed on its own (no
checkout on the path), holds every file the servers read at run time, and each one loads.

The first deploy failed this way: the wheel had no Lua scripts, and matchmaking's first search died
on a FileNotFoundError. The images install this same wheel (tools/images.py)."""

from __future__ import annotations

import json
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

from tools.images import ROOT, platform_wheel

PACKAGES = ("kit", "services", "gateway", "tools", "packages/tafel-rules/tafel_rules")
# Files in the package folders that the installed servers never read: for people (.md), or the
# peers' harness run from a checkout (tools/peers_*.sh and the JavaScript they copy in).
NOT_READ = (".md", ".sh", ".js")

# Run by the installed package's own interpreter state: loads every module, every Redis script
# (into a real Redis, which compiles it), Colour Square's sheets, and the layout migration's check.
CHECK = r"""
import importlib, json, pkgutil, sys
import redis
root = sys.argv[1]
loaded = []
for package in ("kit", "services", "gateway", "tafel_rules"):
    module = importlib.import_module(package)
    assert module.__file__.startswith(root), (package, module.__file__)
    for info in pkgutil.walk_packages(module.__path__, package + "."):
        if not info.name.endswith("__main__"):  # an entry point runs its server on import
            importlib.import_module(info.name)
            loaded.append(info.name)
# Of tools/ (a developer's folder), what a deployment runs: the layout's migration.
loaded.append(importlib.import_module("tools.migrate").__name__)
from kit.redis import scripts
assert str(scripts.LUA_DIR).startswith(root)
names = sorted(str(p.relative_to(scripts.LUA_DIR).with_suffix("")) for p in scripts.LUA_DIR.rglob("*.lua"))
client = redis.Redis.from_url(sys.argv[2])
shas = {}
for name in (*scripts.RULES_SCRIPTS, *scripts.GATEWAY_SCRIPTS):
    found = scripts.script(name)
    shas[name] = client.script_load(found.source)
    assert shas[name] == found.sha, name
from tafel_rules.coloursquare import sheets
assert str(sheets.SHEET_DIR).startswith(root) and sheets.SHEETS
print(json.dumps({"modules": loaded, "lua": names, "loaded": sorted(shas), "sheets": sorted(sheets.SHEETS)}))
"""


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("wheel")
    wheel = platform_wheel(folder / "dist")
    target = folder / "site"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-deps",
            "--no-index",
            "--target",
            str(target),
            str(wheel),
            *map(str, wheel.parent.glob("tafel_rules-*.whl")),  # its dependency that is not on an index
        ],
        check=True,
        timeout=300,
    )
    return target


def tracked_package_files() -> set[str]:
    listed = subprocess.run(["git", "ls-files", *PACKAGES], cwd=ROOT, capture_output=True, text=True, check=True)
    return {path for path in listed.stdout.split() if not path.endswith(NOT_READ)}


def test_the_wheel_holds_every_file_of_the_packages(installed: Path) -> None:
    wheel = next((installed.parent / "dist").glob("tafel_platform-*.whl"))
    with zipfile.ZipFile(wheel) as archive:
        inside = {name for name in archive.namelist() if not name.startswith("tafel_platform-")}
    with zipfile.ZipFile(next((installed.parent / "dist").glob("tafel_rules-*.whl"))) as archive:
        inside |= {f"packages/tafel-rules/{name}" for name in archive.namelist() if not name.startswith("tafel_rules-")}
    missing = sorted(tracked_package_files() - inside)
    assert not missing, f"not in the wheel (pyproject.toml's package data): {missing}"
    assert any(name.endswith(".lua") for name in inside) and any(name.endswith(".json") for name in inside)


def test_the_installed_package_loads_every_module_script_and_sheet(installed: Path, redis_url: str) -> None:
    # -S: no site-packages processing, so the checkout's editable install cannot answer an import;
    # the dependencies come from this venv's site-packages as a plain path entry, the generated
    # protobuf code from gen/ (the image copies it beside the wheel).
    deps = sysconfig.get_paths()["purelib"]
    env = {"PYTHONPATH": f"{installed}:{deps}:{ROOT / 'gen'}", "PATH": "/usr/bin:/bin"}
    if redis_url.startswith("redis+cluster"):
        pytest.skip("checks against a single Redis (the scripts are the same on a cluster)")
    done = subprocess.run(
        [sys.executable, "-S", "-P", "-c", CHECK, str(installed), redis_url],
        cwd=installed.parent,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    found = json.loads(done.stdout.strip().splitlines()[-1])
    lua = {str(p.relative_to(ROOT / "kit/redis/lua").with_suffix("")) for p in (ROOT / "kit/redis/lua").rglob("*.lua")}
    assert set(found["lua"]) == lua
    assert found["loaded"] and set(found["loaded"]) <= lua
    assert "gateway.server" in found["modules"] and "tafel_rules.connect4" in found["modules"]
    assert found["sheets"]
