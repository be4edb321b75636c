"""The gateway's one composition root: every part of a gateway process is built here, in
dependency order, from the settings read once at start (gateway/settings.py), and handed its
dependencies in its constructor (nothing is set on a part after it is built). One grpc.aio server
offers AccountService, GameService, LobbyService, BotService, RatingService and TournamentService
(plus health and reflection); the background work (rules streams, revocations, the event hub,
the clock, rating and tournament sweepers, the tournament feed) starts after it and stops in
reverse; then the health checks (`health_checks`: Redis, the gateway's scripts, every game's rules
service; docs/health.md) decide what the health service answers. `start_gateway` returns it
running (port 0 in tests); `serve` runs it with the web edge until a signal."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from dataclasses import dataclass

import grpc
from redis.asyncio import Redis
from tafel.admin.v1 import admin_pb2, admin_pb2_grpc
from tafel.play.v1 import (
    bots_pb2,
    bots_pb2_grpc,
    challenges_pb2,
    challenges_pb2_grpc,
    notices_pb2,
    notices_pb2_grpc,
    play_pb2,
    play_pb2_grpc,
    safety_pb2,
    safety_pb2_grpc,
    social_pb2,
    social_pb2_grpc,
    tournaments_pb2,
    tournaments_pb2_grpc,
)

from gateway.accounts import AccountServicer
from gateway.actions import Actions
from gateway.auth import Authenticator
from gateway.bot_requests import BotServicer, BotSweeper
from gateway.challenges.bots import BotChallenges
from gateway.challenges.service import ChallengeServicer, ChallengeSweeper
from gateway.challenges.store import ChallengeStore
from gateway.chat.access import ChatAccess
from gateway.chat.hub import ChatHub
from gateway.chat.service import ChatServicer
from gateway.chat.store import ChatStore, avoided_by
from gateway.clocks import Clocks
from gateway.correspondence import Correspondence
from gateway.events.feed import AccountEvents, GameAnnouncer
from gateway.events.service import EventServicer
from gateway.games import GameDirectory
from gateway.limits import CallLimiter
from gateway.lobby import LobbyServicer
from gateway.mail.assembly import SERVICE as EMAIL_SERVICE
from gateway.mail.assembly import MailParts, build_mail
from gateway.metrics import GatewayMetrics
from gateway.notices.inbox import Inbox
from gateway.notices.service import NotificationServicer
from gateway.notices.settings import NoticeSettingsStore
from gateway.offers.service import Offers
from gateway.people.presence import Presence, announcing
from gateway.people.service import PeopleServicer
from gateway.people.store import PeopleStore
from gateway.play.registration import add_game_service
from gateway.play.service import GameServicer
from gateway.ratings.book import RatingBook
from gateway.ratings.pools import RatingPools
from gateway.ratings.service import RatingServicer
from gateway.ratings.sweeper import RatingSweeper
from gateway.records import Records
from gateway.rooms import Rooms
from gateway.rules import RulesAccess, RulesRouter
from gateway.settings import GatewaySettings
from gateway.standing.account_life import AccountLife
from gateway.standing.consequences import Consequences
from gateway.standing.guard import Guard, barred_refusal
from gateway.standing.moderation import AdminServicer, ModerationServicer
from gateway.standing.roles import DIRECTORS
from gateway.standing.safety import SafetyServicer
from gateway.standing.store import StandingStore
from gateway.standing.tables import StandingTables
from gateway.tournaments.feed import TournamentFeed
from gateway.tournaments.runner import TournamentRunner
from gateway.tournaments.service import TournamentServicer
from gateway.tournaments.store import TournamentStore
from gateway.vacation.service import VacationServicer
from gateway.vacation.store import VacationStore
from gateway.watch.hub import EventHub
from gateway.web.server import start_edge
from kit.errors import Refused
from kit.health import HEALTH_TIMEOUT_S, Check, redis_reachable, scripts_loadable
from kit.internal_auth import internal_metadata
from kit.redis.client import redis_client
from kit.redis.game_reads import GameReads
from kit.redis.layer import RedisLayer
from kit.redis.migrations import check_layout
from kit.redis.pubsub import PubSub
from kit.redis.scripts import GATEWAY_SCRIPTS
from kit.server import RunningServer, start_server
from kit.tasks import spawn

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


def health_checks(settings: GatewaySettings, layer: RedisLayer, router: RulesRouter) -> list[Check]:
    """SERVING only while Redis answers, the gateway's scripts are loaded and every game it offers
    has a rules replica that says SERVING (docs/health.md)."""
    timeout_s = min(settings.server.health_check_s, HEALTH_TIMEOUT_S)

    async def rules_reachable() -> str | None:
        games = await router.unreachable(timeout_s)
        return f"no rules service of {', '.join(games)} is serving" if games else None

    return [redis_reachable(layer, timeout_s), scripts_loadable(layer, GATEWAY_SCRIPTS, timeout_s), rules_reachable]


def service_names() -> list[str]:
    play, tournaments = play_pb2.DESCRIPTOR.services_by_name, tournaments_pb2.DESCRIPTOR.services_by_name
    names = [play[name].full_name for name in ("AccountService", "GameService", "LobbyService")]
    names.append(bots_pb2.DESCRIPTOR.services_by_name["BotService"].full_name)
    names.extend(tournaments[name].full_name for name in ("RatingService", "TournamentService"))
    names.append(safety_pb2.DESCRIPTOR.services_by_name["SafetyService"].full_name)
    social = challenges_pb2.DESCRIPTOR.services_by_name
    names.extend(social[name].full_name for name in ("EventService", "ChallengeService"))
    people = social_pb2.DESCRIPTOR.services_by_name
    names.extend(people[name].full_name for name in ("ChatService", "FriendService", "ProfileService"))
    names.append(notices_pb2.DESCRIPTOR.services_by_name["NotificationService"].full_name)
    names.append(notices_pb2.DESCRIPTOR.services_by_name["VacationService"].full_name)
    admin = admin_pb2.DESCRIPTOR.services_by_name
    names.extend(admin[name].full_name for name in ("ModerationService", "AdminService"))
    names.append(EMAIL_SERVICE)
    return [str(name) for name in names]


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
    book: RatingBook
    rating_sweeper: RatingSweeper
    bot_sweeper: BotSweeper
    tournaments: TournamentRunner
    feed: TournamentFeed
    # Adds every public servicer to a server; the web edge (gateway/web) serves the same handlers.
    register: Callable[[grpc.aio.Server], None]
    limiter: CallLimiter
    standing: StandingTables  # roles and sanctions in force, mirrored from Redis
    standing_store: StandingStore
    challenge_sweeper: ChallengeSweeper
    presence: Presence | None = None  # this gateway's hold on its players' presence: let go on a stop
    chat_hub: ChatHub | None = None  # chat's fan-out (gateway/chat): its watches end on a stop
    mail: MailParts | None = None  # e-mail (gateway/mail): its sender and digest loop stop on a stop
    inbox: Inbox | None = None  # notices (gateway/notices): the one way every feature hands one in
    notice_settings: NoticeSettingsStore | None = None
    correspondence: Correspondence | None = None  # correspondence notices and warnings: swept until a stop

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
        await self.running.stop_health()
        for name in (*self.running.service_names, ""):
            with contextlib.suppress(Exception):
                await self.running.health.set(name, 2)  # NOT_SERVING
        self.games.stopping.set()
        if self.chat_hub is not None:  # chat watches end now (SHUTTING_DOWN): resumed elsewhere
            await self.chat_hub.close()
        # Refuse new calls at once (GOAWAY: clients' new streams go to another gateway, not to
        # this one while it winds down), while the live streams drain: Play streams answer their
        # moves in flight, say `reconnect` and end; watches end UNAVAILABLE (retry elsewhere).
        stopping = asyncio.ensure_future(self.running.server.stop(grace))
        await self.tournaments.stop()
        await self.rating_sweeper.stop()
        await self.bot_sweeper.stop()
        await self.challenge_sweeper.stop()
        if self.mail is not None:
            await self.mail.stop()
        await self.feed.close()
        await self.clocks.stop()
        if self.correspondence is not None:
            await self.correspondence.stop()
        await self.hub.close()
        with contextlib.suppress(Exception):
            await self.lobby.close()
        await stopping
        if self.presence is not None:
            await self.presence.stop()  # after the streams ended: their players are let go
        await self.router.close()
        await self.auth.revocations.stop()
        await self.standing.stop()
        await self.pubsub.close()
        await self.layer.close()
        await self.redis.aclose()


async def start_gateway(settings: GatewaySettings) -> Gateway:
    server = settings.server
    redis = redis_client(server.redis_url)
    layer = RedisLayer.around(redis)
    try:
        await check_layout(layer)  # a layout this code does not read is refused (kit/redis/migrations)
    except BaseException:
        await layer.close()
        await redis.aclose()
        raise
    router = RulesRouter(
        settings.rules,
        streams_per_replica=settings.rules_streams,
        batch_wait_s=settings.rules_batch_wait_s,
        timeout_s=settings.rules_timeout_s,
        resolve_every_s=settings.rules_resolve_s,
        max_message_bytes=max(server.max_message_bytes, 4 << 20),
        access=rules_access(settings),
    )
    game_reads = GameReads(layer)
    clocks = Clocks(layer, ttl_s=settings.game_ttl_s, max_wait_s=settings.clock_max_wait_s)
    events = AccountEvents(layer)  # every account's event stream (gateway/events)
    # Notices (gateway/notices): every producer hands them to this one inbox.
    notice_settings = NoticeSettingsStore(layer)
    inbox = Inbox(layer, notice_settings)
    # Presence (gateway/people): streams open (the limiter), games started (announce) and ended (hook).
    people = PeopleStore(layer)
    presence = Presence(
        layer,
        events,
        people,
        lease_s=settings.presence_lease_s,
        revoked=lambda who: auth.revocations.revoked(who.player_id, "", who.issued_ms),
    )
    announce = announcing(GameAnnouncer(events), presence.game_started)
    directory = GameDirectory(layer, router, clocks, game_ttl_s=settings.game_ttl_s, announce=announce)
    records = Records(layer, game_reads, ttl_s=settings.record_ttl_s)
    actions = Actions(directory, router, clocks, records)
    pubsub = PubSub(server.redis_url)
    hub = EventHub(pubsub, game_reads)
    standing = StandingTables(layer)

    def barred(player_id: str) -> Refused | None:
        sanction = standing.barred(player_id)
        return barred_refusal(sanction) if sanction is not None else None

    auth = Authenticator(layer, secret=settings.token_secret, token_ttl_s=settings.token_ttl_s, barred=barred)
    standing_store = StandingStore(layer, standing)
    metrics = GatewayMetrics()

    # Ratings and tournaments hang off the end of a game; the lobby's matchmaking reads the ratings.
    extra = settings.ratings_tournaments
    book = RatingBook(layer, RatingPools(router), applied_ttl_s=extra.rating_applied_ttl_s)
    rating_sweeper = RatingSweeper(book, interval_s=extra.rating_sweep_s, lag_s=extra.rating_sweep_lag_s)
    tournament_store = TournamentStore(layer)
    runner = TournamentRunner(
        layer,
        tournament_store,
        directory,
        actions,
        book,
        sweep_interval_s=extra.tournament_sweep_s,
        arena_wave_s=extra.arena_wave_s,
        arena_standings_s=extra.arena_standings_s,
        arena_shortest_s=extra.arena_min_s,
    )
    # Rounds started and starting soon, directors' announcements and corrections reach the inbox.
    runner.notices.inbox = inbox
    feed = TournamentFeed(layer, redis_client(server.redis_url, max_connections=2))  # own client: XREAD BLOCK
    # The game-end path (Records calls its hooks in order): ratings first (awaited), then the
    # tournament (in the background). Registered here because the runner itself applies actions,
    # which write records: the one cycle in the assembly, closed by these two observers.
    book.attach(records)  # its hook, and its hint stored with an unrated game's record
    records.hooks.append(runner.on_record)
    records.hooks.append(presence.on_record)

    lobby = LobbyServicer(
        layer,
        auth,
        directory,
        router,
        settings,
        pubsub=pubsub,
        matchmaking=settings.matchmaking,
        rooms=settings.rooms,
        ratings=book,
    )
    # Moves in flight get most of the stop's grace: the streams must say `reconnect` and end
    # before the server cancels what is left at the end of it.
    offers = Offers(layer, directory, actions, records, game_reads, events)
    games = GameServicer(
        auth, directory, actions, hub, records, metrics, lobby=lobby, offers=offers, drain_s=server.grace_s * 0.75
    )
    watch_events = EventServicer(auth, layer, pubsub, games.stopping)
    challenge_store = ChallengeStore(layer)
    # A challenge to a bot: a room of the lobby's with a bot request for it (the pools serve it).
    bot_game = BotChallenges(layer, lobby.rooms, router)
    challenges = ChallengeServicer(
        auth,
        challenge_store,
        standing_store,
        events,
        directory,
        router,
        settings,
        bot_game=bot_game,
        may_challenge=people.may_challenge,
        inbox=inbox,
    )
    challenge_sweeper = ChallengeSweeper(challenge_store, events)
    consequences = Consequences(layer, actions, runner)
    # E-mail (gateway/mail): immediate mails hang off the inbox; every gateway sends from the outbox.
    mail = build_mail(
        layer,
        settings.mail,
        key=settings.token_secret,
        auth=auth,
        inbox=inbox,
        notice_settings=notice_settings,
        directory=directory,
    )
    life = AccountLife(
        layer,
        auth,
        standing_store,
        consequences,
        book,
        tournament_store,
        people=people,
        mail=mail.mailer,
        inbox=inbox,
        notice_settings=notice_settings,
    )
    accounts = AccountServicer(auth, standing, life)
    # Chat: a game's lines are kept as long as its record; one reader per channel on this gateway.
    chat_store = ChatStore(layer, keep_game_ms=settings.record_ttl_s * 1000)
    chat_hub = ChatHub(chat_store, pubsub, lambda pid: avoided_by(layer, pid))
    chat_access = ChatAccess(
        directory, records, lobby.rooms, tournament_store, director=lambda pid: standing.role(pid) in DIRECTORS
    )
    chat = ChatServicer(auth, layer, chat_store, chat_access, chat_hub, standing)
    safety = SafetyServicer(auth, standing_store, chat_context=chat.context)
    moderation = ModerationServicer(auth, standing_store, records, consequences, life)
    admin = AdminServicer(auth, standing_store, records)
    lease_s = settings.rooms.bot_lease_s
    bots = BotServicer(layer, auth, RoomsByCode(lobby.rooms), tuple(settings.rules), lease_s=lease_s)
    bot_sweeper = BotSweeper(layer, RoomsByCode(lobby.rooms), lease_s=lease_s)
    ratings = RatingServicer(auth, book)
    friends = PeopleServicer(auth, layer, people, presence, standing_store, book)
    notifications = NotificationServicer(auth, inbox, notice_settings)
    # Correspondence games (gateway/correspondence.py): their notices, the warnings before a
    # deadline, and vacations' standing clocks.
    vacation_store = VacationStore(layer, allowance_ms=settings.vacation_days * 86_400_000)
    correspondence = Correspondence(layer, directory, vacation_store, inbox, max_wait_s=settings.warning_max_wait_s)
    actions.correspondence = correspondence
    directory.started = correspondence.started
    directory.vacation_seats = correspondence.vacation_seats
    vacations = VacationServicer(auth, vacation_store, correspondence)
    tournaments = TournamentServicer(
        auth, tournament_store, runner, feed, router, settings, director=lambda pid: standing.role(pid) in DIRECTORS
    )

    def register(grpc_server: grpc.aio.Server) -> None:
        play_pb2_grpc.add_AccountServiceServicer_to_server(accounts, grpc_server)
        add_game_service(games, grpc_server)
        play_pb2_grpc.add_LobbyServiceServicer_to_server(lobby, grpc_server)
        bots_pb2_grpc.add_BotServiceServicer_to_server(bots, grpc_server)
        tournaments_pb2_grpc.add_RatingServiceServicer_to_server(ratings, grpc_server)
        tournaments_pb2_grpc.add_TournamentServiceServicer_to_server(tournaments, grpc_server)
        safety_pb2_grpc.add_SafetyServiceServicer_to_server(safety, grpc_server)
        admin_pb2_grpc.add_ModerationServiceServicer_to_server(moderation, grpc_server)
        admin_pb2_grpc.add_AdminServiceServicer_to_server(admin, grpc_server)
        challenges_pb2_grpc.add_EventServiceServicer_to_server(watch_events, grpc_server)
        challenges_pb2_grpc.add_ChallengeServiceServicer_to_server(challenges, grpc_server)
        social_pb2_grpc.add_FriendServiceServicer_to_server(friends, grpc_server)
        social_pb2_grpc.add_ProfileServiceServicer_to_server(friends, grpc_server)
        social_pb2_grpc.add_ChatServiceServicer_to_server(chat, grpc_server)
        mail.register(grpc_server)
        notices_pb2_grpc.add_NotificationServiceServicer_to_server(notifications, grpc_server)
        notices_pb2_grpc.add_VacationServiceServicer_to_server(vacations, grpc_server)

    # Per-peer and per-player limits on the public port; the internal secret guards rules services
    # only (internal=False: this port is public).
    limiter = CallLimiter(auth, settings.limits, Guard(standing), presence=presence)
    running = await start_server(server, register, service_names(), [limiter], internal=False)
    router.start()
    auth.revocations.start(pubsub)  # signed-out sessions, shared by every gateway
    standing.start(pubsub)  # roles and sanctions, shared by every gateway
    hub.start()
    clocks.start(actions.on_due)
    correspondence.start()
    rating_sweeper.start()
    bot_sweeper.start()
    challenge_sweeper.start()
    presence.start()
    mail.start()
    runner.start()
    feed.start()
    await lobby.start()
    metrics.gauge("tafel_gateway_watchers", "Local watchers of live games", lambda: float(hub.watchers))
    metrics.gauge("tafel_gateway_account_streams", "Open account event streams", lambda: float(watch_events.watching))
    metrics.gauge("tafel_gateway_chat_watches", "Open chat watches", lambda: float(chat_hub.watchers))
    metrics.gauge("tafel_gateway_subscribed_games", "Game channels subscribed", lambda: float(hub.channels))
    metrics.gauge("tafel_gateway_timeouts_applied", "Turn deadlines settled", lambda: float(clocks.fired))
    warned, postponed = "Correspondence warnings sent (new notices)", "Due deadlines moved on by a vacation"
    metrics.gauge("tafel_gateway_warnings_sent", warned, lambda: float(correspondence.warned))
    metrics.gauge("tafel_gateway_deadlines_postponed", postponed, lambda: float(correspondence.postponed))
    metrics.gauge("tafel_gateway_mails_sent", "Mails this gateway handed to the relay", lambda: float(mail.outbox.sent))
    metrics.gauge("tafel_gateway_mails_given_up", "Mails this gateway gave up on", lambda: float(mail.outbox.failed))
    metrics.serve(server.metrics_port, server.host)
    await running.watch_health(health_checks(settings, layer, router), server.health_check_s, log)
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
        book=book,
        rating_sweeper=rating_sweeper,
        bot_sweeper=bot_sweeper,
        tournaments=runner,
        feed=feed,
        register=register,
        limiter=limiter,
        standing=standing,
        standing_store=standing_store,
        challenge_sweeper=challenge_sweeper,
        presence=presence,
        chat_hub=chat_hub,
        mail=mail,
        inbox=inbox,
        notice_settings=notice_settings,
        correspondence=correspondence,
    )


async def serve(settings: GatewaySettings) -> None:
    """Run until SIGTERM/SIGINT, then stop gracefully. With `settings.web.port` set, the web edge
    runs in this process too (gateway/web) and its URL is printed before the LISTENING line."""
    import signal

    if settings.tracemalloc_file:  # benchmarks only (tools/bench_connection_cost.py)
        from gateway import memtrace

        memtrace.start(settings.tracemalloc_file)
    gateway = await start_gateway(settings)
    edge = None
    if settings.web.port is not None:
        edge = await start_edge(
            gateway.register, settings.web, grace_s=settings.server.grace_s, wrap=gateway.limiter.wrap
        )
        log.info("web edge", extra={"url": edge.url})
        print(f"WEB {edge.url}", flush=True)
    log.info("serving", extra={"address": gateway.address, "games": list(settings.rules)})
    print(f"LISTENING gateway {gateway.address}", flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    # Cancelled once either ends; a server that fails instead is logged by its supervisor.
    serving = spawn(gateway.running.server.wait_for_termination(), "grpc server", log=log)
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
