"""Build the container images (`make images`): `tafel` (every server and the bot pool) and
`tafel-redis`, from deploy/Dockerfile and deploy/redis.Dockerfile.

Everything an image holds comes from this machine, so the build needs no image registry and no
network inside a container:
- Python packages: a wheelhouse that this venv's pip builds (`pip wheel`, pinned to the versions
  the tests ran with by `pip freeze`), installed in the image with `pip --no-index`. The image
  then needs neither PyPI nor this machine's pip settings or certificates.
- Generated protobuf code (gen/), the SDK and bots (clients/python/tafel), the browser bundle
  (clients/web/dist): `make gen native web` made them here; they are copied as they are.
- The base: `--base debootstrap` (the default here) makes one from Debian's own packages with
  `debootstrap --variant=minbase` and `docker import`s it, once (kept while the image exists);
  `--base python:3.11-slim-bookworm` (the Dockerfile's default) is what a host with a registry uses.

The build context is a staging folder (build/images/context) holding just those parts, so no
.dockerignore has to keep a venv, node_modules or .git out of it.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BUILD = ROOT / "build" / "images"
CONTEXT = BUILD / "context"
DEPLOY = ROOT / "deploy"
TAFEL_IMAGE = "tafel"
REDIS_IMAGE = "tafel-redis"
DEBIAN_SUITE = "bookworm"


@dataclass(frozen=True)
class DebootstrapBase:
    """A minimal Debian made by debootstrap, with `packages` added; tagged by what it holds, so a
    change of the list makes a new base and an unchanged one is never made again."""

    name: str
    packages: tuple[str, ...]

    @property
    def tag(self) -> str:
        digest = hashlib.sha256(" ".join((DEBIAN_SUITE, *self.packages)).encode()).hexdigest()[:12]
        return f"{self.name}:{DEBIAN_SUITE}-{digest}"


# python3-venv: the image makes its venv with Debian's Python 3.11 (ensurepip comes with it).
TAFEL_BASE = DebootstrapBase("tafel-base", ("python3", "python3-venv"))
# redis-server from Debian's packages: deploy/redis.Dockerfile installs it only where it is missing.
REDIS_BASE = DebootstrapBase("tafel-redis-base", ("redis-server",))


class ImageBuildError(Exception):
    pass


def _run(*command: str, cwd: Path | None = None, quiet: bool = False) -> str:
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise ImageBuildError(
            f"{' '.join(command)} failed ({done.returncode}):\n{done.stdout[-4000:]}{done.stderr[-4000:]}"
        )
    if not quiet and done.stdout.strip():
        print(done.stdout.strip()[-2000:])
    return done.stdout


def image_exists(tag: str) -> bool:
    return subprocess.run(["docker", "image", "inspect", tag], capture_output=True, check=False).returncode == 0


def debootstrap_base(base: DebootstrapBase) -> str:
    """The base's tag, made first when missing (about a minute: Debian's packages, downloaded and
    unpacked into a folder, imported as one layer)."""
    if image_exists(base.tag):
        return base.tag
    if shutil.which("debootstrap") is None:
        raise ImageBuildError("debootstrap is missing: `apt-get install debootstrap` (make docker does, as root)")
    rootfs = BUILD / f"rootfs-{base.name}"
    shutil.rmtree(rootfs, ignore_errors=True)
    started = time.monotonic()
    _run(
        "debootstrap",
        "--variant=minbase",
        f"--include={','.join(base.packages)}",
        DEBIAN_SUITE,
        str(rootfs),
        quiet=True,
    )
    # Package lists and caches are not needed at run time; the image is smaller without them.
    for leftover in ("var/lib/apt/lists", "var/cache/apt/archives"):
        for path in (rootfs / leftover).glob("*"):
            if path.is_file():
                path.unlink()
    tar = subprocess.Popen(["tar", "-C", str(rootfs), "-c", "."], stdout=subprocess.PIPE)
    imported = subprocess.run(
        ["docker", "import", "-", base.tag], stdin=tar.stdout, capture_output=True, text=True, check=False
    )
    tar.wait()
    shutil.rmtree(rootfs, ignore_errors=True)
    if imported.returncode != 0 or tar.returncode != 0:
        raise ImageBuildError(f"docker import of {base.tag} failed: {imported.stderr}")
    print(f"base {base.tag}: debootstrap + import in {time.monotonic() - started:.0f} s")
    return base.tag


def source_tree(target: Path) -> Path:
    """The project's files as a fresh clone would have them (tracked and new, not ignored), copied
    into `target`: a wheel built in the checkout would take stale files from setuptools' build/lib
    and egg-info (a module or script deleted here, still shipped)."""
    listed = _run("git", "ls-files", "--cached", "--others", "--exclude-standard", "-z", cwd=ROOT, quiet=True)
    shutil.rmtree(target, ignore_errors=True)
    for name in filter(None, listed.split("\0")):
        source = ROOT / name
        if source.is_file() and not name.startswith(("clients/", "tests/", "docs/")):
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)
    return target


def platform_wheel(target: Path) -> Path:
    """The tafel-platform wheel (tests/deploy/test_wheel.py checks what it holds), and beside it the
    wheel of the games' pure rules (packages/tafel-rules), the one dependency not on an index."""
    target.mkdir(parents=True, exist_ok=True)
    tree = source_tree(target / "source")
    for project in (tree, tree / "packages" / "tafel-rules"):
        _run(
            sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--wheel-dir", str(target), str(project),
            quiet=True,
        )
    shutil.rmtree(tree)
    (wheel,) = target.glob("tafel_platform-*.whl")
    return wheel


def wheelhouse(target: Path) -> Path:
    """tafel-platform and every runtime dependency as wheels, at the versions this venv has (the
    ones the tests ran with). pip keeps its downloads in its cache, so a second build is quick."""
    shutil.rmtree(target, ignore_errors=True)
    target.mkdir(parents=True)
    frozen = _run(sys.executable, "-m", "pip", "freeze", "--exclude-editable", quiet=True)
    constraints = target.parent / "constraints.txt"
    constraints.write_text(frozen)
    platform_wheel(target)
    # Its dependencies: tafel-platform found beside them (--find-links), the rest from PyPI or pip's cache.
    pip_wheel = [
        sys.executable,
        "-m",
        "pip",
        "wheel",
        "--quiet",
        "--wheel-dir",
        str(target),
        "--find-links",
        str(target),
    ]
    _run(*pip_wheel, "--constraint", str(constraints), "tafel-platform", quiet=True)
    return target


def _copy_tree(source: Path, target: Path) -> None:
    if not source.exists():
        raise ImageBuildError(f"{source.relative_to(ROOT)} is missing: `make gen native web` makes it")
    shutil.copytree(source, target, ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "*.tmp", ".stamp"))


def stage_context() -> Path:
    """The build context: only what the Dockerfiles copy."""
    shutil.rmtree(CONTEXT, ignore_errors=True)
    CONTEXT.mkdir(parents=True)
    wheelhouse(CONTEXT / "wheelhouse")
    _copy_tree(ROOT / "gen", CONTEXT / "gen")
    _copy_tree(ROOT / "clients" / "python" / "tafel", CONTEXT / "clients" / "tafel")
    _copy_tree(ROOT / "clients" / "web" / "dist", CONTEXT / "web")
    shutil.copy(DEPLOY / "healthcheck.py", CONTEXT / "healthcheck.py")
    return CONTEXT


def revision() -> str:
    done = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=False)
    dirty = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT, capture_output=True, text=True, check=False
    )
    sha = done.stdout.strip() or "unknown"
    return f"{sha}-dirty" if dirty.stdout.strip() else sha


def version() -> str:
    import tomllib

    return str(tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"])


def build(dockerfile: Path, tag: str, base: str, context: Path) -> None:
    labels = {"VERSION": version(), "REVISION": revision(), "CREATED": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")}
    args = [f"--build-arg=BASE_IMAGE={base}", *(f"--build-arg={key}={value}" for key, value in labels.items())]
    _run(
        "docker",
        "build",
        "--quiet",
        "--file",
        str(dockerfile),
        "--tag",
        f"{tag}:{labels['VERSION']}",
        "--tag",
        f"{tag}:latest",
        *args,
        str(context),
        quiet=True,
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--base",
        default=os.environ.get("BASE_IMAGE") or "debootstrap",
        help="base image for both images, or 'debootstrap' to make one from Debian's packages (default)",
    )
    parser.add_argument(
        "--redis-base",
        default=os.environ.get("REDIS_BASE_IMAGE") or None,
        help="base image for tafel-redis (default: --base's Debian, 'debootstrap' with redis-server)",
    )
    args = parser.parse_args(argv)
    started = time.monotonic()
    try:
        if args.base == "debootstrap":
            tafel_base, redis_base = debootstrap_base(TAFEL_BASE), debootstrap_base(REDIS_BASE)
        else:
            tafel_base = args.base
            redis_base = args.redis_base or "debian:bookworm-slim"
        context = stage_context()
        build(DEPLOY / "Dockerfile", TAFEL_IMAGE, tafel_base, context)
        # The Redis image needs nothing from the context but its Dockerfile.
        redis_context = BUILD / "redis-context"
        redis_context.mkdir(parents=True, exist_ok=True)
        build(DEPLOY / "redis.Dockerfile", REDIS_IMAGE, redis_base, redis_context)
    except ImageBuildError as error:
        print(f"make images: {error}", file=sys.stderr)
        return 1
    # What this rebuild left untagged (the previous images, the build stage), and only that.
    _run("docker", "image", "prune", "--force", "--filter", "label=tafel.build", quiet=True)
    for tag in (TAFEL_IMAGE, REDIS_IMAGE):
        size = _run("docker", "image", "inspect", "--format", "{{.Size}}", f"{tag}:latest", quiet=True).strip()
        print(f"{tag}:latest  {int(size) / 2**20:.0f} MiB  (revision {revision()[:12]})")
    print(f"make images: {time.monotonic() - started:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
