"""The gateway finds its rules replicas by DNS (gateway/rules/discovery.py) and spreads games over
them by rendezvous hashing (gateway/rules/placement.py).

On loopback one name cannot easily resolve to several addresses, so the lookup is injected (a name
-> 127.0.0.2:p, 127.0.0.3:p, ...: the whole of 127/8 is loopback on Linux) and the replicas are
real rules processes bound to those addresses; each one's own metrics say how many moves it
answered. A gateway process with ``dns:///127.0.0.1:p`` checks the setting end to end with the
system resolver."""

from __future__ import annotations

import asyncio
import logging
import re
import shutil
import socket
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import grpc
import pytest
from tafel.rules.v1 import rules_pb2

from gateway.rules import RulesAccess, RulesRouter
from gateway.rules.discovery import Discovery, DnsTarget
from gateway.rules.placement import rendezvous
from gateway.settings import parse_addresses
from kit.errors import Refused
from kit.settings import ConfigError
from tests.certificates import make_certificates
from tests.gateway.harness import Client, Proc, c4_move, new_id, seating, spawn, spawn_gateway, spawn_rules
from tools.redis_server import free_port

NAME = "connect4.rules.test"
GAMES = 48


@dataclass
class Named:
    seed: int


def test_rendezvous_spreads_games_and_a_new_replica_takes_only_its_share() -> None:
    three = [Named(seed) for seed in (0x1111, 0x2222, 0x3333)]
    four = [*three, Named(0x4444)]
    ids = [f"game-{i}" for i in range(3000)]
    before = {game_id: rendezvous(game_id, three)[0] for game_id in ids}
    after = {game_id: rendezvous(game_id, four)[0] for game_id in ids}
    for replica in three:
        assert 800 < sum(1 for owner in before.values() if owner is replica) < 1200
    moved = [game_id for game_id in ids if before[game_id] is not after[game_id]]
    assert all(after[game_id] is four[3] for game_id in moved)  # only to the new replica
    assert 550 < len(moved) < 950  # about a quarter
    # A replica gone: only its games move, each to its own second choice.
    without = [three[0], three[2]]
    for game_id in ids:
        order = rendezvous(game_id, three)
        assert rendezvous(game_id, without)[0] is (order[1] if order[0] is three[1] else order[0])


def test_the_setting_takes_one_dns_name_or_fixed_addresses() -> None:
    assert parse_addresses("T", "dns:///connect4:50060") == ("dns:///connect4:50060",)
    assert parse_addresses("T", "a:1,b:2") == ("a:1", "b:2")
    for bad in ("dns:///connect4", "dns:///a:1,b:2", "dns:///a:0", "dns://a:1"):
        with pytest.raises(ConfigError):
            parse_addresses("T", bad)


async def test_a_failed_or_empty_lookup_keeps_the_last_set(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="tafel.gateway.rules")
    answers: list[list[str] | OSError] = [
        ["10.0.0.1:1", "10.0.0.2:1"],
        socket.gaierror(socket.EAI_NONAME, "Name or service not known"),
        [],
        ["10.0.0.2:1"],
    ]
    last = asyncio.Event()

    async def resolve(host: str, port: int) -> Sequence[str]:
        if len(answers) == 1:
            last.set()  # the last answer: applied before the loop yields again
        answer = answers.pop(0) if len(answers) > 1 else answers[0]
        if isinstance(answer, OSError):
            raise answer
        return answer

    seen: list[tuple[str, ...]] = []
    discovery = Discovery("connect4", DnsTarget("rules", 1), seen.append, every_s=0.01, resolve=resolve)
    discovery.start()
    try:
        await asyncio.wait_for(last.wait(), 10)
    finally:
        await discovery.stop()
    assert seen == [("10.0.0.1:1", "10.0.0.2:1"), ("10.0.0.2:1",)]  # nothing dropped in between
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert warnings == ["rules replicas not found; keeping the last set"]  # once for the outage


@dataclass
class Resolver:
    """DNS for the test: the name answers ``answers``; ``answered`` is set by every lookup."""

    answers: list[str]
    answered: asyncio.Event = field(default_factory=asyncio.Event)

    async def __call__(self, host: str, port: int) -> Sequence[str]:
        assert (host, port) == (NAME, self.port)
        self.answered.set()
        return list(self.answers)

    @property
    def port(self) -> int:
        return int(self.answers[0].rsplit(":", 1)[1])

    async def change(self, router: RulesRouter, answers: list[str]) -> None:
        """Answer ``answers`` from now on; returns once the router routes over them."""
        self.answers = answers
        self.answered.clear()
        await asyncio.wait_for(self.answered.wait(), 10)
        # The lookup's answer is applied before the step yields again, so this holds now.
        assert router.replicas("connect4") == tuple(answers)


@dataclass
class Replica:
    proc: Proc
    metrics_port: int

    @property
    def address(self) -> str:
        return self.proc.address

    async def applied(self) -> int:
        host = self.address.rsplit(":", 1)[0]
        url = f"http://{host}:{self.metrics_port}/metrics"
        text = await asyncio.to_thread(lambda: urllib.request.urlopen(url, timeout=5).read().decode())
        match = re.search(r'^tafel_rules_moves_total\{game="connect4",outcome="APPLIED"\} (\S+)$', text, re.M)
        return int(float(match.group(1))) if match else 0


def start_replica(redis_url: str, host: str, port: int) -> Replica:
    metrics = free_port()
    env = {"REDIS_URL": redis_url, "TAFEL_HOST": host, "TAFEL_PORT": str(port), "TAFEL_METRICS_PORT": str(metrics)}
    replica = Replica(spawn(f"connect4@{host}", "services.connect4", env), metrics)
    assert replica.address == f"{host}:{port}"
    return replica


async def move_all(router: RulesRouter, games: list[str], version: int) -> None:
    """Move number version+1 in every game, all at once; every one must be applied."""

    async def move(game_id: str) -> int:
        request = rules_pb2.ApplyMoveRequest(
            game_id=game_id, seat=version % 2, expected_version=version, request_id=new_id(), move=c4_move(version % 7)
        )
        return (await router.apply("connect4", request)).version

    assert await asyncio.gather(*(move(game_id) for game_id in games)) == [version + 1] * len(games)


async def counts(replicas: Sequence[Replica]) -> list[int]:
    return [await replica.applied() for replica in replicas]


async def test_moves_spread_over_discovered_replicas_through_a_kill_and_a_scale_up(
    redis_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="tafel.gateway.rules")  # the gateway logs at INFO
    port = free_port()
    replicas = [start_replica(redis_url, f"127.0.0.{i}", port) for i in (2, 3, 4)]
    a, b, c = replicas
    resolver = Resolver([a.address, b.address])
    router = RulesRouter({"connect4": (f"dns:///{NAME}:{port}",)}, resolve=resolver, resolve_every_s=0.2)
    try:
        router.start()
        games = [new_id("g") for _ in range(GAMES)]
        for game_id in games:  # the first call waits for the first lookup
            await router.create_game("connect4", rules_pb2.CreateGameRequest(game_id=game_id, seats=2, request_id="c"))
        assert router.replicas("connect4") == (a.address, b.address)

        await move_all(router, games, 0)
        spread = await counts((a, b))
        assert sum(spread) == GAMES and min(spread) >= GAMES // 4, spread

        # A replica added to the name gets its share of the games at once.
        await resolver.change(router, [a.address, b.address, c.address])
        await move_all(router, games, 1)
        spread = [now - then for now, then in zip(await counts(replicas), [*spread, 0], strict=True)]
        assert sum(spread) == GAMES and spread[2] >= GAMES // 8, spread

        # A replica killed (still in DNS for a moment): its games go on on the others.
        before = await counts((b, c))
        a.proc.kill()
        await move_all(router, games, 2)
        after = await counts((b, c))
        assert sum(after) - sum(before) == GAMES and all(x > y for x, y in zip(after, before, strict=True))
        # ... and once DNS drops it, it is out of the set; the games keep moving.
        await resolver.change(router, [b.address, c.address])
        await move_all(router, games, 3)
        assert sum(await counts((b, c))) - sum(after) == GAMES
        changes = [r.replicas for r in caplog.records if r.getMessage() == "rules replicas changed"]  # type: ignore[attr-defined]
        assert changes == [
            f"{a.address},{b.address}",
            f"{a.address},{b.address},{c.address}",
            f"{b.address},{c.address}",
        ]
    finally:
        await router.close()
        for replica in replicas:
            replica.proc.stop()


async def test_a_gateway_process_resolves_its_rules_service_by_name(redis_url: str) -> None:
    rules = spawn_rules(redis_url)
    gateway = spawn_gateway(redis_url, {"connect4": f"dns:///{rules.address}"}, TAFEL_RULES_RESOLVE_S="0.5")
    try:
        a = await Client(gateway.address).guest()
        b = await Client(gateway.address).guest()
        async with seating(redis_url, {"connect4": rules.address}) as seats:
            game_id = await seats.start([a.player, b.player])
            assert (await a.move(game_id, 0, 3)).version == 1
            assert (await b.move(game_id, 1, 4)).version == 2
        await a.close()
        await b.close()
    finally:
        gateway.stop()
        rules.stop()


@pytest.mark.skipif(shutil.which("openssl") is None, reason="needs the openssl command")
async def test_a_discovered_replica_is_checked_against_the_services_name(redis_url: str, tmp_path: Path) -> None:
    make_certificates(tmp_path)  # names 127.0.0.1 and localhost, not the replica's 127.0.0.2
    port = free_port()
    env = {"REDIS_URL": redis_url, "TAFEL_HOST": "127.0.0.2", "TAFEL_PORT": str(port)}
    tls = {"TAFEL_TLS_CERT": str(tmp_path / "server.pem"), "TAFEL_TLS_KEY": str(tmp_path / "server.key")}
    rules = spawn(
        "c4-mtls@127.0.0.2", "services.connect4", {**env, **tls, "TAFEL_TLS_CLIENT_CA": str(tmp_path / "ca.pem")}
    )
    access = RulesAccess(
        credentials=grpc.ssl_channel_credentials(
            root_certificates=(tmp_path / "ca.pem").read_bytes(),
            private_key=(tmp_path / "client.key").read_bytes(),
            certificate_chain=(tmp_path / "client.pem").read_bytes(),
        )
    )

    async def resolve(host: str, port: int) -> Sequence[str]:
        return [f"127.0.0.2:{port}"]

    by_name = RulesRouter({"connect4": (f"dns:///localhost:{port}",)}, access=access, resolve=resolve)
    by_address = RulesRouter({"connect4": (rules.address,)}, access=access, timeout_s=2)
    try:
        assert (await by_name.describe("connect4")).game == "connect4"
        with pytest.raises(Refused) as caught:  # dialled by IP alone, the certificate does not match
            await by_address.describe("connect4")
        assert caught.value.code == grpc.StatusCode.UNAVAILABLE
    finally:
        await by_name.close()
        await by_address.close()
        rules.stop()
