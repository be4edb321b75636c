"""The platform in containers (`make deploy-test`): deploy/compose.yaml brought up by testcontainers
from the images `make images` built, reached only through its published ports on 127.0.0.1.

Needs a Docker engine and the images: `make deploy-test` starts the engine when it may
(tools/docker_engine.sh) and builds the images first. Without an engine these tests fail in CI
(CI=true) and skip elsewhere, saying why.
"""

from __future__ import annotations

import os
import secrets
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from testcontainers.compose import DockerCompose

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
GATEWAYS = ("127.0.0.1:50051", "127.0.0.1:50052")
WEB = ("http://127.0.0.1:8080", "http://127.0.0.1:8081")


def _unavailable(why: str) -> None:
    if os.environ.get("CI") == "true":
        pytest.fail(why)
    pytest.skip(why)


def docker(*args: str, check: bool = True) -> str:
    done = subprocess.run(["docker", *args], capture_output=True, text=True, timeout=120, check=False)
    if check and done.returncode != 0:
        raise AssertionError(f"docker {' '.join(args)}: {done.stderr.strip()}")
    return done.stdout.strip()


@dataclass
class Deployment:
    """The running compose project: its containers by service, and a few operator actions."""

    compose: DockerCompose
    project: str

    def containers(self, service: str) -> list[str]:
        """Container ids of a service, in replica order."""
        ids = docker(
            "ps",
            "-a",
            "--filter",
            f"label=com.docker.compose.project={self.project}",
            "--filter",
            f"label=com.docker.compose.service={service}",
            "--format",
            '{{.Label "com.docker.compose.container-number"}} {{.ID}}',
        )
        return [line.split()[1] for line in sorted(ids.splitlines(), key=lambda line: int(line.split()[0]))]

    def state(self, container: str, field: str) -> str:
        return docker("inspect", "--format", "{{" + field + "}}", container)

    def wait_healthy(self, container: str, timeout_s: float = 90.0) -> None:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.state(container, ".State.Health.Status") == "healthy":
                return
            time.sleep(0.5)
        raise AssertionError(f"{container} not healthy in {timeout_s:.0f} s: {self.logs(container)[-3000:]}")

    def logs(self, container: str) -> str:
        done = subprocess.run(["docker", "logs", container], capture_output=True, text=True, timeout=60, check=False)
        return done.stdout + done.stderr


# Per module: the swarm test (test_swarm.py) runs after it, with the machine to itself.
@pytest.fixture(scope="module")
def deployment() -> Iterator[Deployment]:
    try:
        docker("info")
    except (AssertionError, FileNotFoundError) as error:
        _unavailable(f"no Docker engine ({error}): `make deploy-test` starts one (tools/docker_engine.sh)")
    for image in ("tafel:latest", "tafel-redis:latest"):
        if subprocess.run(["docker", "image", "inspect", image], capture_output=True, check=False).returncode:
            _unavailable(f"no image {image}: `make images` builds it")
    project = f"tafel-test-{os.getpid()}"
    # The secrets a deployment is given; compose refuses to start without them.
    os.environ.update(
        COMPOSE_PROJECT_NAME=project,
        TAFEL_TOKEN_SECRET=secrets.token_urlsafe(32),
        TAFEL_INTERNAL_SECRET=secrets.token_urlsafe(32),
    )
    compose = DockerCompose(context=DEPLOY, compose_file_name="compose.yaml", wait=True)
    started = time.monotonic()
    with compose:
        print(f"compose up --wait: {time.monotonic() - started:.1f} s")
        yield Deployment(compose, project)
