"""Assemble a gateway process: one grpc.aio server with AccountService, GameService and (when
gateway/lobby.py is present) LobbyService, plus health and reflection; the rules router, the event
hub, the clock sweeper and metrics. `start_gateway` returns it running (port 0 in tests)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from dataclasses import dataclass

import grpc
from redis.asyncio import Redis
from tafel.play.v1 import bots_pb2, bots_pb2_grpc, play_pb2, play_pb2_grpc

from gateway.accounts import AccountServicer
from gateway.actions import Actions
from gateway.auth import Authenticator
from gateway.bot_requests import BotServicer
from gateway.clocks import Clocks
from gateway.games import GameDirectory
from gateway.limits import CallLimiter
from gateway.lobby import LobbyServicer
from gateway.metrics import GatewayMetrics
from gateway.play import GameServicer, add_game_service
from gateway.records import Records
from gateway.rooms import Rooms
from gateway.rules_router import RulesAccess, RulesRouter
from gateway.settings import GatewaySettings
from gateway.tournaments.wiring import RatingsAndTournaments
from gateway.watch.hub import EventHub
from gateway.web.server import start_edge
from gateway.web.settings import WebSettings
from kit.internal_auth import internal_metadata
from kit.redis.client import redis_client
from kit.redis.game_reads import GameReads
from kit.redis.layer import RedisLayer
from kit.redis.pubsub import PubSub
from kit.server import RunningServer, start_server

log = logging.getLogger("tafel.gateway")


class RoomsByCode:
    """The room lookup the bot service needs, over the lobby's rooms."""

    def __init__(self, rooms: Rooms) -> None:
        self.rooms = rooms

    async def room(self, code: str) -> play_pb2.Room:
        return (await self.rooms.get(code)).to_proto()


def _read(path: str) -> bytes:
    with open(path, "rb") as file:
        return file.read()


def rules_access(settings: GatewaySettings) -> RulesAccess:
    """TLS (mutual with a client certificate) and the internal secret for calls to rules services."""
    credentials = None
    if settings.rules_tls_ca_file:
        credentials = grpc.ssl_channel_credentials(
            root_certificates=_read(settings.rules_tls_ca_file),
            private_key=_read(settings.rules_tls_key_file) if settings.rules_tls_key_file else None,
            certificate_chain=_read(settings.rules_tls_cert_file) if settings.rules_tls_cert_file else None,
        )
    return RulesAccess(credentials=credentials, metadata=internal_metadata(settings.server.internal_secret))


def service_name(name: str) -> str:
    return str(play_pb2.DESCRIPTOR.services_by_name[name].full_name)


@dataclass
class Gateway:
    settings: GatewaySettings
    running: RunningServer
    redis: Redis
    auth: Authenticator
    router: RulesRouter
    hub: EventHub
    pubsub: PubSub  # the process's one pub/sub connection (live events, revocations, lobby wake-ups)
    layer: RedisLayer
    clocks: Clocks
    directory: GameDirectory
    records: Records
    actions: Actions
    games: GameServicer
    lobby: LobbyServicer
    metrics: GatewayMetrics
    extras: RatingsAndTournaments  # ratings, leaderboards, tournaments (gateway/ratings, gateway/tournaments)
    # Adds every public servicer to a server; the web edge (gateway/web) serves the same handlers.
    register: Callable[[grpc.aio.Server], None] | None = None
    limiter: CallLimiter | None = None

    @property
    def port(self) -> int:
        return self.running.port

    @property
    def address(self) -> str:
        return f"{self.settings.server.host}:{self.running.port}"

    async def stop(self, grace_s: float | None = None) -> None:
        """Stop taking calls, end the live streams (clients resume elsewhere from their last event
        id), let in-flight moves finish within the grace period, then close the clients."""
        grace = self.settings.server.grace_s if grace_s is None else grace_s
        for name in (*self.running.service_names, ""):
            with contextlib.suppress(Exception):
                await self.running.health.set(name, 2)  # NOT_SERVING
        self.games.stopping.set()
        # Refuse new calls at once (GOAWAY: clients' new streams go to another gateway, not to
        # this one while it winds down), while the live streams drain: Play streams answer their
        # moves in flight, say `reconnect` and end; watches end UNAVAILABLE (retry elsewhere).
        stopping = asyncio.ensure_future(self.running.server.stop(grace))
        await self.extras.stop()
        await self.clocks.stop()
        await self.hub.close()
        with contextlib.suppress(Exception):
            await self.lobby.close()
        await stopping
        await self.router.close()
        await self.auth.revocations.stop()
        await self.pubsub.close()
        await self.layer.close()
        await self.redis.aclose()


async def start_gateway(settings: GatewaySettings) -> Gateway:
    server = settings.server
    redis = redis_client(server.redis_url)
    router = RulesRouter(
        settings.rules,
        streams_per_replica=settings.rules_streams,
        timeout_s=settings.rules_timeout_s,
        max_message_bytes=max(server.max_message_bytes, 4 << 20),
        access=rules_access(settings),
    )
    layer = RedisLayer.around(redis)
    game_reads = GameReads(layer)
    clocks = Clocks(layer, ttl_s=settings.game_ttl_s, max_wait_s=settings.clock_max_wait_s)
    directory = GameDirectory(layer, router, clocks, game_ttl_s=settings.game_ttl_s)
    records = Records(layer, game_reads, ttl_s=settings.record_ttl_s)
    actions = Actions(directory, router, clocks, records)
    pubsub = PubSub(server.redis_url)
    hub = EventHub(pubsub, game_reads)
    auth = Authenticator(redis, secret=settings.token_secret, token_ttl_s=settings.token_ttl_s)
    metrics = GatewayMetrics()
    games = GameServicer(auth, directory, actions, hub, records, metrics)
    # Moves in flight get most of the stop's grace: the streams must say `reconnect` and end
    # before the server cancels what is left at the end of it.
    games.drain_s = server.grace_s * 0.75
    accounts = AccountServicer(auth)
    # -- ratings and tournaments: hooked into records (game ends); the lobby's matchmaking reads the ratings.
    extras = RatingsAndTournaments(
        redis=redis,
        redis_url=server.redis_url,
        auth=auth,
        directory=directory,
        actions=actions,
        records=records,
        router=router,
        lobby_settings=settings,
    )
    lobby = LobbyServicer(layer, auth, directory, router, settings, ratings=extras.book)
    games.lobby = lobby
    bots = BotServicer(layer, auth, RoomsByCode(lobby.rooms), tuple(settings.rules))

    names = [service_name("AccountService"), service_name("GameService"), service_name("LobbyService")]
    names.append(bots_pb2.DESCRIPTOR.services_by_name["BotService"].full_name)
    names.extend(extras.service_names)

    def register(grpc_server: grpc.aio.Server) -> None:
        play_pb2_grpc.add_AccountServiceServicer_to_server(accounts, grpc_server)
        add_game_service(games, grpc_server)
        play_pb2_grpc.add_LobbyServiceServicer_to_server(lobby, grpc_server)
        bots_pb2_grpc.add_BotServiceServicer_to_server(bots, grpc_server)
        extras.register(grpc_server)

    # Per-peer and per-player limits on the public port; the internal secret guards rules services
    # only (internal=False: this port is public).
    limiter = CallLimiter(auth, settings.limits)
    running = await start_server(server, register, names, [limiter], internal=False)
    router.start()
    auth.revocations.start(pubsub)  # signed-out sessions, shared by every gateway
    hub.start()
    clocks.start(actions.on_due)
    extras.start()
    await lobby.start()
    metrics.gauge("tafel_gateway_watchers", "Local watchers of live games", lambda: float(hub.watchers))
    metrics.gauge("tafel_gateway_subscribed_games", "Game channels subscribed", lambda: float(hub.channels))
    metrics.gauge("tafel_gateway_timeouts_applied", "Turn deadlines settled", lambda: float(clocks.fired))
    metrics.serve(server.metrics_port, server.host)
    return Gateway(
        settings=settings,
        running=running,
        redis=redis,
        auth=auth,
        router=router,
        hub=hub,
        pubsub=pubsub,
        layer=layer,
        clocks=clocks,
        directory=directory,
        records=records,
        actions=actions,
        games=games,
        lobby=lobby,
        metrics=metrics,
        extras=extras,
        register=register,
        limiter=limiter,
    )


async def serve(settings: GatewaySettings, web: WebSettings | None = None) -> None:
    """Run until SIGTERM/SIGINT, then stop gracefully. With `web.port` set, the web edge runs in
    this process too (gateway/web) and its URL is printed before the LISTENING line."""
    import signal

    gateway = await start_gateway(settings)
    edge = None
    if web is not None and web.port is not None:
        assert gateway.register is not None
        wrap = gateway.limiter.wrap if gateway.limiter is not None else None
        edge = await start_edge(gateway.register, web, grace_s=settings.server.grace_s, wrap=wrap)
        log.info("web edge", extra={"url": edge.url})
        print(f"WEB {edge.url}", flush=True)
    log.info("serving", extra={"address": gateway.address, "games": list(settings.rules)})
    print(f"LISTENING gateway {gateway.address}", flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    serving = asyncio.ensure_future(gateway.running.server.wait_for_termination())
    waiting = asyncio.ensure_future(stop.wait())
    await asyncio.wait((serving, waiting), return_when=asyncio.FIRST_COMPLETED)
    if edge is not None:
        # Together: the gateway's stop ends the watch streams the edge's grace period waits on.
        await asyncio.gather(edge.stop(), gateway.stop())
    else:
        await gateway.stop()
    waiting.cancel()
    serving.cancel()
    log.info("stopped")
