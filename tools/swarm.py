"""`make swarm-upgrade` (python -m tools.swarm upgrade): the platform on Docker's own orchestrator, and
a rolling upgrade of every server under live games, measured.

`render` prints deploy/compose.yaml as `docker stack deploy` takes it. The stack loader reads the
older Compose file format, so the same file is translated, not copied: `depends_on` conditions,
`restart` and `security_opt` go (a swarm orders nothing, restarts by `deploy.restart_policy`, and
has no such option); the network is an attachable overlay; two replicas of each rules service and
of the gateway, which finds the rules replicas at `tasks.<game>` (every task's address; the service's
own name is one virtual address, which would hide the replicas from the gateway's router); the
gateway's ports go through the swarm's routing mesh; every server updates start-first (the new task
healthy before the old one stops) one at a time, rolling back on failure. The layout migration is
not a service: `deploy` and `upgrade` run it with the new image before any server of it starts.

`upgrade` (on a single-node swarm it makes and leaves again, when none is active): deploys the stack
from `tafel:latest`, keeps `--games` Connect Four games going between SDK players (their own
connections through 127.0.0.1, so the mesh spreads them over the gateways), then runs the migration
and `docker service update`s every rules service and then the gateway to a new image (tafel:latest
with one more label, so every task is replaced), lets every game end and checks each record
(tools/audited_play.py). Prints the figures (longest pause between two moves of a game, calls that
reached a player as errors, games started/finished/stuck, each service's update time) and a JSON
line; exits 1 on a lost or doubled move or a stuck game.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import secrets
import subprocess
import time
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
COMPOSE = ROOT / "deploy" / "compose.yaml"
GAMES = ("connect4", "plus4", "coloursquare")
SERVERS = (*GAMES, "gateway")
STACK = "tafel"
ROLLING = {"order": "start-first", "parallelism": 1, "failure_action": "rollback", "monitor": "10s", "delay": "2s"}


def render(source: Path = COMPOSE, *, replicas: int = 2, mesh: bool = True) -> dict[str, Any]:
    """deploy/compose.yaml as `docker stack deploy` takes it (the module's docstring says why each
    change). Variables (${...}) stay for the stack loader to fill in. `mesh=False`: for a kernel
    without IPVS (these machines), where a service's virtual address and the routing mesh do not
    work: every name resolves to its tasks' addresses (dnsrr) and nothing is published."""
    spec: dict[str, Any] = yaml.safe_load(source.read_text())  # anchors and merge keys resolved
    services: dict[str, Any] = {}
    for name, shared in spec["services"].items():
        service = copy.deepcopy(shared)  # the anchors' dicts are shared between services
        if name == "migrate":
            continue
        for key in ("depends_on", "restart", "security_opt"):
            service.pop(key, None)
        deploy = service.setdefault("deploy", {})
        deploy["restart_policy"] = {"condition": "any", "delay": "2s"}
        if name in SERVERS:
            deploy["replicas"] = replicas
            deploy["update_config"] = dict(ROLLING)
            deploy["rollback_config"] = {"order": "stop-first", "parallelism": 1}
        if not mesh:
            deploy["endpoint_mode"] = "dnsrr"
        if name == "gateway":
            service["environment"].update(
                {f"TAFEL_RULES_{game.upper()}": f"dns:///tasks.{game}:50060" for game in GAMES}
            )
            service["ports"] = ["50051:50051", "8080:8080"] if mesh else []
        services[name] = service
    return {
        "version": "3.8",
        "services": services,
        "volumes": spec.get("volumes", {}),
        "networks": {"default": {"driver": "overlay", "attachable": True}},
    }


def docker(*args: str, timeout_s: float = 600, check: bool = True, stdin: str | None = None) -> str:
    done = subprocess.run(
        ["docker", *args], input=stdin, capture_output=True, text=True, timeout=timeout_s, check=False
    )
    if check and done.returncode != 0:
        raise RuntimeError(f"docker {' '.join(args)}: {done.stderr.strip()[-2000:]}")
    return done.stdout.strip()


def swarm_active() -> bool:
    return docker("info", "--format", "{{.Swarm.LocalNodeState}}") == "active"


def migrate(image: str) -> None:
    """The layout brought to `image`'s version, on the stack's network, before its servers start."""
    docker(
        "run",
        "--rm",
        "--network",
        f"{STACK}_default",
        "--read-only",
        "-e",
        "REDIS_URL=redis://redis:6379/0",
        image,
        "python",
        "-m",
        "tools.migrate",
        "--wait",
        "120",
        timeout_s=180,
    )


def ipvs() -> bool:
    """Whether this kernel has IPVS, which a swarm's virtual addresses and routing mesh need."""
    return Path("/proc/net/ip_vs").exists()


def deploy(image: str, replicas: int, env: dict[str, str]) -> None:
    stack = yaml.safe_dump(render(replicas=replicas, mesh=ipvs()), sort_keys=False)
    environment = {**os.environ, **env, "TAFEL_IMAGE": image}
    done = subprocess.run(
        ["docker", "stack", "deploy", "--resolve-image", "never", "-c", "-", STACK],
        input=stack,
        env=environment,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"docker stack deploy: {done.stderr.strip()}")


def converged(timeout_s: float = 240) -> None:
    """Every service at its replica count, every task running (and healthy where checked)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        rows = docker(
            "service",
            "ls",
            "--filter",
            f"label=com.docker.stack.namespace={STACK}",
            "--format",
            "{{.Name}} {{.Replicas}}",
        )
        counts = [row.split()[1].split("/") for row in rows.splitlines()]
        if counts and all(running == wanted for running, wanted in counts):
            return
        time.sleep(1)
    raise RuntimeError(f"the stack did not converge in {timeout_s:.0f} s:\n{rows}")


def players(games: int, think_s: float) -> str:
    """The players' container (tools/swarm_players.py) on the stack's network; its id."""
    container = docker(
        "run",
        "--detach",
        "--network",
        f"{STACK}_default",
        "--read-only",
        "--tmpfs",
        "/tmp",
        "tafel:latest",
        "python",
        "-m",
        "tools.swarm_players",
        "--games",
        str(games),
        "--think",
        str(think_s),
    )
    deadline = time.monotonic() + 120
    while "READY" not in docker("logs", container, check=False):
        if time.monotonic() > deadline or docker("inspect", "--format", "{{.State.Running}}", container) != "true":
            raise RuntimeError(f"the players did not start: {docker('logs', container, check=False)[-2000:]}")
        time.sleep(0.5)
    return container


def upgrade(args: argparse.Namespace) -> dict[str, Any]:
    old, new = "tafel:latest", "tafel:upgrade"
    docker("build", "--quiet", "--tag", new, "--label", f"tafel.upgrade={time.time():.0f}", "-", stdin=f"FROM {old}\n")
    env = {"TAFEL_TOKEN_SECRET": secrets.token_urlsafe(32), "TAFEL_INTERNAL_SECRET": secrets.token_urlsafe(32)}
    started = time.monotonic()
    deploy(old, args.replicas, env)
    converged()
    migrate(old)
    print(
        f"stack up: {time.monotonic() - started:.0f} s (routing mesh: {'yes' if ipvs() else 'no, dnsrr'})", flush=True
    )
    container = players(args.games, args.think)
    updates: dict[str, float] = {}
    try:
        time.sleep(args.warm_up)
        print(f"{args.games} games in play; upgrading to {new}", flush=True)
        migrate(new)
        for service in SERVERS:
            began = time.monotonic()
            docker("service", "update", "--detach=false", "--quiet", "--image", new, f"{STACK}_{service}")
            updates[service] = round(time.monotonic() - began, 1)
            print(f"  {service}: updated in {updates[service]:.0f} s", flush=True)
        time.sleep(args.after)
    finally:
        docker("kill", "--signal", "USR1", container, check=False)
        docker("wait", container, timeout_s=400, check=False)
        output = docker("logs", container, check=False)
        docker("rm", "--force", container, check=False)
    lines = [line for line in output.splitlines() if line.startswith("{")]
    if not lines:
        raise RuntimeError(f"the players printed no report: {output[-3000:]}")
    report: dict[str, Any] = json.loads(lines[-1])
    report["updates_s"] = updates
    rows = docker(
        "service", "ls", "--filter", f"label=com.docker.stack.namespace={STACK}", "--format", "{{.Name}} {{.Image}}"
    )
    for row in rows.splitlines():
        name, image = row.split()
        if name.removeprefix(f"{STACK}_") in SERVERS and image != new:
            report["problems"].append(f"{name} runs {image} after the upgrade")
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("render", help="print the stack file")
    run = commands.add_parser("upgrade", help="a rolling upgrade under live games, measured")
    run.add_argument("--games", type=int, default=50, help="games kept going (default 50)")
    run.add_argument("--think", type=float, default=1.0, help="seconds each player thinks a move (default 1)")
    run.add_argument("--replicas", type=int, default=2, help="replicas of each rules service and the gateway")
    run.add_argument("--warm-up", type=float, default=15.0, help="seconds of play before the upgrade")
    run.add_argument("--after", type=float, default=10.0, help="seconds of play after it")
    args = parser.parse_args(argv)
    if args.command == "render":
        print(yaml.safe_dump(render(), sort_keys=False))
        return 0
    made_swarm = not swarm_active()
    if made_swarm:
        docker("swarm", "init", "--advertise-addr", "127.0.0.1", check=False) or docker("swarm", "init")
    try:
        report = upgrade(args)
    finally:
        docker("stack", "rm", STACK, check=False)
        for _ in range(60):  # the stack's network goes once its tasks are gone
            if not docker("network", "ls", "--quiet", "--filter", f"name={STACK}_default", check=False):
                break
            time.sleep(1)
        docker("volume", "rm", f"{STACK}_redis-data", check=False)
        docker("image", "rm", "tafel:upgrade", check=False)
        if made_swarm:
            docker("swarm", "leave", "--force", check=False)
    print(
        f"games started {report['games_started']}, finished {report['games_finished']}, stuck {report['games_stuck']}; "
        f"moves {report['moves']}; longest pause {report['longest_pause_s']:.2f} s; errors {report['errors'] or 'none'}"
    )
    for problem in report["problems"][:20]:
        print(f"  problem: {problem}")
    print(json.dumps({"replicas": args.replicas, "games": args.games, "think_s": args.think, **report}))
    return 1 if report["problems"] or report["games_stuck"] else 0


if __name__ == "__main__":
    raise SystemExit(main())
