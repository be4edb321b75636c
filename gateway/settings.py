"""Every setting of a gateway process, in this one file: environment variables read once, at
start (``GatewaySettings.from_env`` in gateway/__main__.py), into frozen values that the
composition root (gateway/server.py) hands to each part. Nothing else in the gateway reads the
environment. A missing or malformed variable stops the process with one line naming it.

The server variables every process reads (host, port, TLS, limits on messages and streams, the
internal secret, log level, metrics port) are in kit/settings.py. The gateway's own:

Core (GatewaySettings):
- ``REDIS_URL`` (required)
- ``TAFEL_TOKEN_SECRET`` (required): the key that signs session tokens, at least 16 characters;
  every gateway replica must share it.
- ``TAFEL_RULES_<GAME>`` for each game in kit.catalogue.GAMES, e.g.
  ``TAFEL_RULES_CONNECT4=127.0.0.1:50061`` — ``host:port``, a comma-separated list for several
  replicas, or ``dns:///name:port``: a name resolving to one address per replica (a Kubernetes
  headless Service), looked up again every ``TAFEL_RULES_RESOLVE_S`` (5) and soon after a replica
  fails (gateway/rules/discovery.py). Unset = ``127.0.0.1:<the catalogue's default port>``; ``off`` =
  the game is not offered.
- ``TAFEL_TOKEN_TTL_S`` session lifetime (default 1 day), ``TAFEL_PER_MOVE_S`` default per-move
  time (60), ``TAFEL_MIN_PER_MOVE_S`` / ``TAFEL_MAX_PER_MOVE_S`` the range a client may ask for
  (5 s .. 1 day), ``TAFEL_TICKET_TTL_S`` how long a matchmaking ticket waits (300; read into
  MatchmakingSettings.ticket_ttl_s), ``TAFEL_RULES_STREAMS`` long-lived ApplyMoves streams per
  rules replica (2), ``TAFEL_RULES_BATCH_WAIT_MS`` how long a rules stream holds an action for
  others to join its message (1; 0 = none; gateway/rules/stream.py), ``TAFEL_RULES_TIMEOUT_S`` how
  long to wait for a rules service (5),
  ``TAFEL_CLOCK_MAX_WAIT_S`` the longest a clock sweeper sleeps between looks at Redis (1),
  ``TAFEL_RECORD_TTL_S`` how long a finished game's record is kept (0 = forever),
  ``TAFEL_GAME_TTL_S`` how long a game's gateway metadata lives after its last move (7 days),
  ``TAFEL_PRESENCE_LEASE_S`` how long a gateway's hold on its players' presence lasts unrenewed
  (60; renewed every third of it): a killed gateway's players turn offline within about this.
- Correspondence (1-14 days a move, TimeControl.days_per_move, beyond TAFEL_MAX_PER_MOVE_S):
  ``TAFEL_VACATION_DAYS`` each account's yearly vacation allowance (30; gateway/vacation),
  ``TAFEL_WARNING_MAX_WAIT_S`` the longest the "time running out" sweeper sleeps (1).
  A test moves every process's clock with ``TAFEL_TIME_OFFSET_FILE`` and ``TAFEL_TEST_TIME=on``
  together (kit/timesource.py; never in production).
- Calls to the rules services: ``TAFEL_INTERNAL_SECRET`` (sent on every call; the rules services
  set the same), ``TAFEL_RULES_TLS_CA`` (PEM: the CA that signed the rules services' certificates;
  set = TLS to them), ``TAFEL_RULES_TLS_CERT`` / ``TAFEL_RULES_TLS_KEY`` (the gateway's client
  certificate for mutual TLS).
- Benchmarks only: ``TAFEL_TRACEMALLOC`` (``off``/``on``, default off) traces the process's Python
  allocations and writes a snapshot to ``TAFEL_TRACEMALLOC_FILE`` (default
  ``tafel-gateway-<pid>.tracemalloc`` in the temporary folder) on each SIGUSR2 (gateway/memtrace.py;
  tools/bench_connection_cost.py). Tracing costs CPU and memory: never on in a deployment.

Call limits (LimitSettings, used by gateway/limits.py): ``TAFEL_LIMIT_CALLS_PER_PEER`` (2000/4000),
``TAFEL_LIMIT_CALLS_PER_PLAYER`` (500/1000), ``TAFEL_LIMIT_SIGN_INS_PER_PEER`` (50/1000),
``TAFEL_LIMIT_ROOM_LOOKUPS_PER_PLAYER`` (2/20), ``TAFEL_LIMIT_ROOM_LOOKUPS_PER_PEER`` (20/200), each
``rate_per_s/burst``; ``TAFEL_MAX_STREAMS_PER_PLAYER`` (64) open long-lived streams per player.

Matchmaking (MatchmakingSettings): ``TAFEL_MM_BASE_WINDOW`` (100 rating points),
``TAFEL_MM_WIDEN_PER_S`` (10), ``TAFEL_MM_MAX_WINDOW`` (1000), ``TAFEL_MM_LEASE_S`` (20),
``TAFEL_MM_TICK_S`` (0.5), ``TAFEL_MM_UPDATE_S`` (2), ``TAFEL_MM_FILL_WAIT_S`` (15),
``TAFEL_MM_START_GRACE_S`` (8), ``TAFEL_MM_RESULT_TTL_S`` (900).

Rooms (RoomSettings): ``TAFEL_ROOM_TTL_S`` (3600), ``TAFEL_ROOM_STARTED_TTL_S`` (3600),
``TAFEL_ROOM_CLOSED_TTL_S`` (60), ``TAFEL_ROOM_POLL_S`` (5), ``TAFEL_BOT_LEASE_S`` (15: a bot request
handed to a pool whose bot has not joined by then is re-queued while its room needs a bot).

Ratings and tournaments (RatingsTournamentsSettings): ``TAFEL_TOURNAMENT_SWEEP_S`` (5) how often
running tournaments are checked and due ones started; ``TAFEL_ARENA_WAVE_S`` (2) how often a running
arena pairs its free players (a wave), ``TAFEL_ARENA_STANDINGS_S`` (5) how often at most it sends
live standings to watchers, ``TAFEL_ARENA_MIN_S`` (300) the shortest arena allowed (tests set less);
``TAFEL_RATING_SWEEP_S`` (30) and
``TAFEL_RATING_SWEEP_LAG_S`` (300) how often the ratings backstop reads recent records and how far
behind its cursor it looks again; ``TAFEL_RATING_APPLIED_TTL_S`` (90 days) how long a game's
"rating applied" marker is kept.

E-mail (MailSettings, gateway/mail): ``TAFEL_SMTP_HOST`` the relay (unset = no relay: every mail
is written to the log instead, as under `make run`), ``TAFEL_SMTP_PORT`` (587 with STARTTLS, else
25), ``TAFEL_SMTP_USER`` / ``TAFEL_SMTP_PASSWORD`` (AUTH, optional), ``TAFEL_SMTP_STARTTLS`` (1/0,
default 1 when a user is set), ``TAFEL_MAIL_FROM`` (the sender, default ``tafel <noreply@localhost>``),
``TAFEL_PUBLIC_URL`` (where the mails' links point: the web app and the web edge, default
``http://127.0.0.1:8080``), ``TAFEL_MAIL_RETRY_S`` (30: the first wait after a failed send, doubling
to an hour), ``TAFEL_MAIL_MAX_WAIT_S`` (5: the longest the sender sleeps between looks at the
outbox), ``TAFEL_MAIL_LEASE_S`` (120: a claimed mail's lease; longer than a send can take).

The web edge (WebSettings, gateway/web):
- ``TAFEL_WEB_PORT``: the edge's HTTP port; unset = no edge, ``0`` = any free port (tests).
- ``TAFEL_WEB_HOST``: the address it binds (default: the gateway's ``TAFEL_HOST``).
- ``TAFEL_WEB_ORIGINS``: comma-separated browser origins allowed by CORS, e.g.
  ``http://localhost:5173``; ``*`` = any origin; unset = none (same-origin pages only).
- ``TAFEL_WEB_STATIC``: a folder served at ``/`` for the browser app (unset = ``clients/web/dist``
  when that folder exists).
- ``TAFEL_WEB_MAX_BODY_BYTES``: the largest request message (default: ``TAFEL_MAX_MESSAGE_BYTES``).
- ``TAFEL_WEB_TLS_CERT`` / ``TAFEL_WEB_TLS_KEY``: PEM files for HTTPS (default: the gateway's
  ``TAFEL_TLS_CERT`` / ``TAFEL_TLS_KEY``; neither = plain HTTP, as `make run` on loopback). Browsers
  present no client certificate, so the edge asks for none.
"""

from __future__ import annotations

import ipaddress
import os
import re
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from kit.catalogue import DEFAULT_PORTS, GAMES
from kit.settings import ConfigError, Env, ServerSettings

DEFAULT_GATEWAY_PORT = 50051
# The gateway takes every client's calls: with one grpc.aio server, 300 clients connecting while
# 200 games ran waited 5-7 s to sign in; with eight, 1.4-1.8 s (docs/benchmarks.md, sixth pass).
DEFAULT_GATEWAY_ACCEPTORS = 8
DEFAULT_STATIC = Path(__file__).resolve().parents[1] / "clients" / "web" / "dist"
# The secret older `make run`s used, published in this repository: refused on anything but loopback
# (tools/platform.py now generates one per data folder).
PUBLISHED_SECRET = "make-run-local-secret-not-for-production"


def is_loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return host == "localhost"


_ADDRESS = re.compile(r"^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9_.-]+):([0-9]{1,5})$")


def rules_env_name(game: str) -> str:
    return "TAFEL_RULES_" + re.sub(r"[^A-Z0-9]", "_", game.upper())


def tracemalloc_file(env: Env) -> str:
    """Where the benchmark-only allocation snapshots go; "" when TAFEL_TRACEMALLOC is off."""
    if env.choice("TAFEL_TRACEMALLOC", "off", ("off", "on")) == "off":
        return ""
    default = os.path.join(tempfile.gettempdir(), f"tafel-gateway-{os.getpid()}.tracemalloc")
    return env.text("TAFEL_TRACEMALLOC_FILE", default)


def parse_addresses(name: str, raw: str) -> tuple[str, ...]:
    if raw.strip().startswith("dns:///"):
        target = raw.strip()
        match = _ADDRESS.match(target[len("dns:///") :])
        if match is None or not 1 <= int(match.group(2)) <= 65535:
            raise ConfigError(f"{name} must be dns:///name:port (one name), got {target!r}")
        return (target,)
    addresses = tuple(part.strip() for part in raw.split(",") if part.strip())
    if not addresses:
        raise ConfigError(f"{name} must list at least one host:port")
    for address in addresses:
        match = _ADDRESS.match(address)
        if match is None or not 1 <= int(match.group(2)) <= 65535:
            raise ConfigError(f"{name} must be host:port[,host:port...], got {address!r}")
    if len(set(addresses)) != len(addresses):
        raise ConfigError(f"{name} lists an address twice")
    return addresses


@dataclass(frozen=True)
class Rate:
    per_s: float
    burst: float

    @classmethod
    def parse(cls, name: str, raw: str) -> Rate:
        try:
            per_s, _, burst = raw.partition("/")
            rate = cls(float(per_s), float(burst or per_s))
        except ValueError:
            raise ConfigError(f"{name} must be RATE_PER_S/BURST, e.g. 20/100, got {raw!r}") from None
        if rate.per_s <= 0 or rate.burst < 1:
            raise ConfigError(f"{name} must have a positive rate and a burst of at least 1")
        return rate


@dataclass(frozen=True)
class LimitSettings:
    calls_per_peer: Rate = Rate(2000.0, 4000.0)  # every call from one IP
    calls_per_player: Rate = Rate(500.0, 1000.0)  # every call of one signed-in player
    sign_ins_per_peer: Rate = Rate(50.0, 1000.0)  # Register, SignIn, SignInAsGuest from one IP
    room_lookups_per_player: Rate = Rate(2.0, 20.0)  # GetRoom, JoinRoom, WatchRoom by code
    room_lookups_per_peer: Rate = Rate(20.0, 200.0)
    streams_per_player: int = 64

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> LimitSettings:
        env = Env(environ)
        defaults = cls()

        def rate(name: str, default: Rate) -> Rate:
            raw = env.environ.get(name)
            return Rate.parse(name, raw) if raw else default

        return cls(
            calls_per_peer=rate("TAFEL_LIMIT_CALLS_PER_PEER", defaults.calls_per_peer),
            calls_per_player=rate("TAFEL_LIMIT_CALLS_PER_PLAYER", defaults.calls_per_player),
            sign_ins_per_peer=rate("TAFEL_LIMIT_SIGN_INS_PER_PEER", defaults.sign_ins_per_peer),
            room_lookups_per_player=rate("TAFEL_LIMIT_ROOM_LOOKUPS_PER_PLAYER", defaults.room_lookups_per_player),
            room_lookups_per_peer=rate("TAFEL_LIMIT_ROOM_LOOKUPS_PER_PEER", defaults.room_lookups_per_peer),
            streams_per_player=env.integer("TAFEL_MAX_STREAMS_PER_PLAYER", defaults.streams_per_player, 1, 100_000),
        )


@dataclass(frozen=True)
class MatchmakingSettings:
    base_window: int = 100  # rating points a fresh ticket accepts
    widen_per_s: float = 10.0  # rating points added per second waited
    max_window: int = 1000
    lease_s: float = 20.0  # a ticket whose gateway stopped renewing it is gone after this
    ticket_ttl_s: float = 300.0  # the longest a ticket waits
    tick_s: float = 0.5  # how often a gateway pairs and renews its buckets
    update_s: float = 2.0  # how often a waiting stream gets MatchQueued
    fill_wait_s: float = 15.0  # a table at its minimum (not full) starts after this wait
    start_grace_s: float = 8.0  # a match not started after this is started by its waiters
    result_ttl_s: float = 900.0  # how long a match's result stays readable
    # A correspondence search (a day or more a move) waits this long, its stream open or not.
    correspondence_ttl_s: float = 7 * 86_400.0

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> MatchmakingSettings:
        env = Env(environ)
        return cls(
            base_window=env.integer("TAFEL_MM_BASE_WINDOW", 100, 0, 10_000),
            widen_per_s=env.number("TAFEL_MM_WIDEN_PER_S", 10.0, 0.0, 10_000.0),
            max_window=env.integer("TAFEL_MM_MAX_WINDOW", 1000, 0, 100_000),
            lease_s=env.number("TAFEL_MM_LEASE_S", 20.0, 2.0, 3600.0),
            ticket_ttl_s=float(env.integer("TAFEL_TICKET_TTL_S", 300, 5, 24 * 3600)),
            tick_s=env.number("TAFEL_MM_TICK_S", 0.5, 0.01, 60.0),
            update_s=env.number("TAFEL_MM_UPDATE_S", 2.0, 0.05, 300.0),
            fill_wait_s=env.number("TAFEL_MM_FILL_WAIT_S", 15.0, 0.0, 3600.0),
            start_grace_s=env.number("TAFEL_MM_START_GRACE_S", 8.0, 0.5, 600.0),
            result_ttl_s=env.number("TAFEL_MM_RESULT_TTL_S", 900.0, 10.0, 86_400.0),
            correspondence_ttl_s=env.number("TAFEL_MM_CORRESPONDENCE_TTL_S", 7 * 86_400.0, 60.0, 30 * 86_400.0),
        )

    def window(self, waited_s: float) -> int:
        return int(min(self.max_window, self.base_window + self.widen_per_s * max(0.0, waited_s)))

    @property
    def lease_ms(self) -> int:
        return int(self.lease_s * 1000)


@dataclass(frozen=True)
class RoomSettings:
    room_ttl_s: float = 3600.0  # an open room lives this long
    started_ttl_s: float = 3600.0  # a started room stays readable this long
    closed_ttl_s: float = 60.0  # an emptied room stays readable (as closed) this long
    poll_s: float = 5.0  # watchers re-read this often even without a wake-up
    bot_lease_s: float = 15.0  # a bot request handed to a pool is re-queued if no bot joined by then

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> RoomSettings:
        env = Env(environ)
        return cls(
            room_ttl_s=env.number("TAFEL_ROOM_TTL_S", 3600.0, 10.0, 7 * 86_400.0),
            started_ttl_s=env.number("TAFEL_ROOM_STARTED_TTL_S", 3600.0, 10.0, 7 * 86_400.0),
            closed_ttl_s=env.number("TAFEL_ROOM_CLOSED_TTL_S", 60.0, 1.0, 86_400.0),
            poll_s=env.number("TAFEL_ROOM_POLL_S", 5.0, 0.05, 300.0),
            bot_lease_s=env.number("TAFEL_BOT_LEASE_S", 15.0, 1.0, 600.0),
        )


@dataclass(frozen=True)
class RatingsTournamentsSettings:
    tournament_sweep_s: float = 5.0
    arena_wave_s: float = 2.0
    arena_standings_s: float = 5.0
    arena_min_s: float = 300.0
    rating_sweep_s: float = 30.0
    rating_sweep_lag_s: float = 300.0
    rating_applied_ttl_s: int = 90 * 86_400

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> RatingsTournamentsSettings:
        env = Env(environ)
        return cls(
            tournament_sweep_s=env.number("TAFEL_TOURNAMENT_SWEEP_S", 5.0, 0.05, 3600.0),
            arena_wave_s=env.number("TAFEL_ARENA_WAVE_S", 2.0, 0.05, 60.0),
            arena_standings_s=env.number("TAFEL_ARENA_STANDINGS_S", 5.0, 0.0, 600.0),
            arena_min_s=env.number("TAFEL_ARENA_MIN_S", 300.0, 1.0, 300.0),
            rating_sweep_s=env.number("TAFEL_RATING_SWEEP_S", 30.0, 0.05, 3600.0),
            rating_sweep_lag_s=env.number("TAFEL_RATING_SWEEP_LAG_S", 300.0, 1.0, 7 * 86_400.0),
            rating_applied_ttl_s=env.integer("TAFEL_RATING_APPLIED_TTL_S", 90 * 86_400, 3600, 10 * 365 * 86_400),
        )


@dataclass(frozen=True)
class WebSettings:
    port: int | None
    host: str = "127.0.0.1"
    origins: tuple[str, ...] = ()
    static_dir: Path | None = None
    max_body_bytes: int = 1 << 20
    tls_cert: Path | None = None
    tls_key: Path | None = None

    @property
    def scheme(self) -> str:
        return "https" if self.tls_cert is not None else "http"

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> WebSettings:
        env = Env(environ)
        raw_port = env.text("TAFEL_WEB_PORT", "").strip()
        port = env.integer("TAFEL_WEB_PORT", 0, 0, 65535) if raw_port else None
        origins = tuple(o.strip().rstrip("/") for o in env.text("TAFEL_WEB_ORIGINS", "").split(",") if o.strip())
        for origin in origins:
            if origin != "*" and not origin.startswith(("http://", "https://")):
                raise ConfigError(f"TAFEL_WEB_ORIGINS lists {origin!r}; an origin is http(s)://host[:port] or *")
        static = env.text("TAFEL_WEB_STATIC", "").strip()
        static_dir = Path(static) if static else (DEFAULT_STATIC if DEFAULT_STATIC.is_dir() else None)
        if static_dir is not None and not static_dir.is_dir():
            raise ConfigError(f"TAFEL_WEB_STATIC={static!r} is not a folder")
        max_message = env.integer("TAFEL_MAX_MESSAGE_BYTES", 1 << 20, 1024, 64 << 20)
        cert = env.text("TAFEL_WEB_TLS_CERT", env.text("TAFEL_TLS_CERT", "")).strip()
        key = env.text("TAFEL_WEB_TLS_KEY", env.text("TAFEL_TLS_KEY", "")).strip()
        if bool(cert) != bool(key):
            raise ConfigError("the web edge's TLS certificate and key are set together or not at all")
        for name, path in (("certificate", cert), ("key", key)):
            if path and not Path(path).is_file():
                raise ConfigError(f"the web edge's TLS {name} file {path!r} does not exist")
        return cls(
            port=port,
            host=env.text("TAFEL_WEB_HOST", env.text("TAFEL_HOST", "127.0.0.1")),
            origins=origins,
            static_dir=static_dir,
            max_body_bytes=env.integer("TAFEL_WEB_MAX_BODY_BYTES", max_message, 1024, 64 << 20),
            tls_cert=Path(cert) if cert else None,
            tls_key=Path(key) if key else None,
        )


@dataclass(frozen=True)
class MailSettings:
    smtp_host: str = ""  # "" = no relay: mails go to the log
    smtp_port: int = 25
    smtp_user: str = ""
    smtp_password: str = field(default="", repr=False)
    smtp_starttls: bool = False
    sender: str = "tafel <noreply@localhost>"
    public_url: str = "http://127.0.0.1:8080"
    retry_s: float = 30.0
    max_wait_s: float = 5.0
    lease_s: float = 120.0

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> MailSettings:
        env = Env(environ)
        user = env.text("TAFEL_SMTP_USER", "")
        starttls = env.choice("TAFEL_SMTP_STARTTLS", "1" if user else "0", ("0", "1")) == "1"
        public_url = env.text("TAFEL_PUBLIC_URL", "http://127.0.0.1:8080").rstrip("/")
        if not public_url.startswith(("http://", "https://")):
            raise ConfigError(f"TAFEL_PUBLIC_URL must be an http(s) URL, got {public_url!r}")
        sender = env.text("TAFEL_MAIL_FROM", "tafel <noreply@localhost>")
        if "@" not in sender:
            raise ConfigError(f"TAFEL_MAIL_FROM must be an address, got {sender!r}")
        return cls(
            smtp_host=env.text("TAFEL_SMTP_HOST", ""),
            smtp_port=env.integer("TAFEL_SMTP_PORT", 587 if starttls else 25, 1, 65535),
            smtp_user=user,
            smtp_password=env.text("TAFEL_SMTP_PASSWORD", ""),
            smtp_starttls=starttls,
            sender=sender,
            public_url=public_url,
            retry_s=env.number("TAFEL_MAIL_RETRY_S", 30.0, 0.01, 86_400.0),
            max_wait_s=env.number("TAFEL_MAIL_MAX_WAIT_S", 5.0, 0.01, 300.0),
            lease_s=env.number("TAFEL_MAIL_LEASE_S", 120.0, 1.0, 3600.0),
        )


@dataclass(frozen=True)
class GatewaySettings:
    server: ServerSettings
    # game -> addresses of its rules service replicas
    rules: Mapping[str, tuple[str, ...]] = field(repr=False)
    token_secret: bytes = field(repr=False)
    token_ttl_s: int = 24 * 3600
    per_move_s: float = 60.0
    min_per_move_s: float = 5.0
    max_per_move_s: float = 24 * 3600.0
    rules_streams: int = 2
    rules_batch_wait_s: float = 0.001
    rules_timeout_s: float = 5.0
    rules_resolve_s: float = 5.0
    clock_max_wait_s: float = 1.0
    record_ttl_s: int = 0
    game_ttl_s: int = 7 * 24 * 3600
    presence_lease_s: float = 60.0
    vacation_days: int = 30
    warning_max_wait_s: float = 1.0
    rules_tls_ca_file: str = ""
    rules_tls_cert_file: str = ""
    rules_tls_key_file: str = ""
    limits: LimitSettings = field(default_factory=LimitSettings)
    matchmaking: MatchmakingSettings = field(default_factory=MatchmakingSettings)
    rooms: RoomSettings = field(default_factory=RoomSettings)
    ratings_tournaments: RatingsTournamentsSettings = field(default_factory=RatingsTournamentsSettings)
    web: WebSettings = field(default_factory=lambda: WebSettings(port=None))
    mail: MailSettings = field(default_factory=MailSettings)
    # Benchmarks only (gateway/memtrace.py): trace Python allocations and dump a snapshot here on
    # SIGUSR2. "" = off (TAFEL_TRACEMALLOC=off, the default).
    tracemalloc_file: str = ""

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> GatewaySettings:
        env = Env(environ)
        server = ServerSettings.from_env(
            env, default_port=DEFAULT_GATEWAY_PORT, default_acceptors=DEFAULT_GATEWAY_ACCEPTORS
        )
        secret = env.text("TAFEL_TOKEN_SECRET")
        if len(secret) < 16:
            raise ConfigError("TAFEL_TOKEN_SECRET must be at least 16 characters")
        if secret == PUBLISHED_SECRET and not is_loopback(server.host):
            raise ConfigError("TAFEL_TOKEN_SECRET is the published make-run secret; set a secret of your own")
        rules_ca = env.environ.get("TAFEL_RULES_TLS_CA", "")
        rules_cert, rules_key = env.environ.get("TAFEL_RULES_TLS_CERT", ""), env.environ.get("TAFEL_RULES_TLS_KEY", "")
        if bool(rules_cert) != bool(rules_key) or (rules_cert and not rules_ca):
            raise ConfigError("TAFEL_RULES_TLS_CERT and TAFEL_RULES_TLS_KEY go together, with TAFEL_RULES_TLS_CA")
        rules: dict[str, tuple[str, ...]] = {}
        for game in GAMES:
            name = rules_env_name(game)
            default = f"127.0.0.1:{DEFAULT_PORTS[game]}" if game in DEFAULT_PORTS else None
            raw = env.text(name, default)
            if raw.strip().lower() == "off":
                continue
            rules[game] = parse_addresses(name, raw)
        min_per_move = env.number("TAFEL_MIN_PER_MOVE_S", 5.0, 0.1, 24 * 3600.0)
        max_per_move = env.number("TAFEL_MAX_PER_MOVE_S", 24 * 3600.0, 0.1, 7 * 24 * 3600.0)
        if min_per_move > max_per_move:
            raise ConfigError("TAFEL_MIN_PER_MOVE_S must not exceed TAFEL_MAX_PER_MOVE_S")
        per_move = env.number("TAFEL_PER_MOVE_S", 60.0, 0.1, 7 * 24 * 3600.0)
        return cls(
            server=server,
            rules=rules,
            token_secret=secret.encode(),
            token_ttl_s=env.integer("TAFEL_TOKEN_TTL_S", 24 * 3600, 60, 365 * 24 * 3600),
            per_move_s=per_move,
            min_per_move_s=min_per_move,
            max_per_move_s=max_per_move,
            rules_streams=env.integer("TAFEL_RULES_STREAMS", 2, 1, 64),
            rules_batch_wait_s=env.number("TAFEL_RULES_BATCH_WAIT_MS", 1.0, 0.0, 50.0) / 1000.0,
            rules_timeout_s=env.number("TAFEL_RULES_TIMEOUT_S", 5.0, 0.1, 300.0),
            rules_resolve_s=env.number("TAFEL_RULES_RESOLVE_S", 5.0, 0.1, 3600.0),
            clock_max_wait_s=env.number("TAFEL_CLOCK_MAX_WAIT_S", 1.0, 0.01, 60.0),
            record_ttl_s=env.integer("TAFEL_RECORD_TTL_S", 0, 0, 10 * 365 * 24 * 3600),
            game_ttl_s=env.integer("TAFEL_GAME_TTL_S", 7 * 24 * 3600, 60, 365 * 24 * 3600),
            presence_lease_s=env.number("TAFEL_PRESENCE_LEASE_S", 60.0, 0.5, 3600.0),
            vacation_days=env.integer("TAFEL_VACATION_DAYS", 30, 0, 366),
            warning_max_wait_s=env.number("TAFEL_WARNING_MAX_WAIT_S", 1.0, 0.01, 60.0),
            rules_tls_ca_file=rules_ca,
            rules_tls_cert_file=rules_cert,
            rules_tls_key_file=rules_key,
            limits=LimitSettings.from_env(env.environ),
            matchmaking=MatchmakingSettings.from_env(env.environ),
            rooms=RoomSettings.from_env(env.environ),
            ratings_tournaments=RatingsTournamentsSettings.from_env(env.environ),
            web=WebSettings.from_env(env.environ),
            mail=MailSettings.from_env(env.environ),
            tracemalloc_file=tracemalloc_file(env),
        )
