"""Configuration from environment variables, read once into frozen values, failing fast.

A missing or malformed variable stops the process at start with one clear line naming it, instead
of a stack trace later in the first request that needs it. Each process reads its settings once,
in its entry point, and its composition root hands them down: a rules service reads
``RulesSettings`` (services/host/main.py), a gateway ``GatewaySettings`` (gateway/settings.py, which
lists the gateway's own variables). Nothing else reads the environment, except kit/grpc_polling.py:
``TAFEL_GRPC_EVENT_ENGINE=1`` keeps gRPC's own defaults (gRPC reads GRPC_EXPERIMENTS when it is
imported, so that module sets it before any setting can be read), and kit/timesource.py: a test's
moved clock (``TAFEL_TIME_OFFSET_FILE`` with ``TAFEL_TEST_TIME=on``), the same from the first line
for every caller.

Every server (ServerSettings):
- ``REDIS_URL`` (required), ``TAFEL_HOST`` (127.0.0.1), ``TAFEL_PORT`` (the process's default),
  ``TAFEL_METRICS_PORT`` (0 = no metrics endpoint), ``TAFEL_LOG_LEVEL`` (INFO),
- ``TAFEL_MAX_MESSAGE_BYTES`` (1 MiB), ``TAFEL_MAX_CONCURRENT_STREAMS`` (1000 per connection),
  ``TAFEL_MAX_PENDING_CALLS`` (20,000), ``TAFEL_GRACE_S`` (5: the stop's grace period),
  ``TAFEL_HANDSHAKE_TIMEOUT_S`` (10), ``TAFEL_ACCEPTORS`` (gRPC servers sharing the port: 8 in a
  gateway, 1 in a rules service; kit/server.py ServerGroup),
- ``TAFEL_TLS_CERT`` / ``TAFEL_TLS_KEY`` (PEM: serve TLS), ``TAFEL_TLS_CLIENT_CA`` (require client
  certificates it signed), ``TAFEL_INTERNAL_SECRET`` (16+ characters: gateway -> rules calls),
- ``TAFEL_HEALTH_CHECK_S`` (5: how often the health service's answer is checked again, kit/health.py).

A rules service (RulesSettings) besides: ``TAFEL_LIVE_TTL_S`` (60 days: an untouched running game
expires, 15/16 to all of it after its last move: lua/rules/commit.lua; until its first move a
game's keys have only this TTL, later at least its clock's, so it must outlast the longest first
turn: a correspondence game's 14 days and a year's vacation allowance; a real-time game is timed
out long before it matters), ``TAFEL_FINISHED_TTL_S``
(1 hour: a finished game's live keys), ``TAFEL_CACHE_GAMES`` (10,000 decoded states in memory),
``TAFEL_RULES_BASE_URL`` (where docs/ is published).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field


class ConfigError(Exception):
    """A setting is missing or malformed; the message names the variable and what was expected."""


class Env:
    """Typed reads of an environment mapping (os.environ by default)."""

    def __init__(self, environ: Mapping[str, str] | None = None) -> None:
        self.environ = os.environ if environ is None else environ

    def text(self, name: str, default: str | None = None) -> str:
        value = self.environ.get(name)
        if value is None or value == "":
            if default is None:
                raise ConfigError(f"{name} is required but not set")
            return default
        return value

    def integer(self, name: str, default: int, minimum: int, maximum: int) -> int:
        raw = self.environ.get(name)
        if raw is None or raw == "":
            return default
        try:
            value = int(raw)
        except ValueError:
            raise ConfigError(f"{name} must be an integer, got {raw!r}") from None
        if not minimum <= value <= maximum:
            raise ConfigError(f"{name} must be {minimum}..{maximum}, got {value}")
        return value

    def number(self, name: str, default: float, minimum: float, maximum: float) -> float:
        raw = self.environ.get(name)
        if raw is None or raw == "":
            return default
        try:
            value = float(raw)
        except ValueError:
            raise ConfigError(f"{name} must be a number, got {raw!r}") from None
        if not minimum <= value <= maximum:
            raise ConfigError(f"{name} must be {minimum}..{maximum}, got {value}")
        return value

    def choice(self, name: str, default: str, choices: tuple[str, ...]) -> str:
        value = self.text(name, default)
        if value not in choices:
            raise ConfigError(f"{name} must be one of {', '.join(choices)}, got {value!r}")
        return value


@dataclass(frozen=True)
class ServerSettings:
    """What every gRPC server of the platform reads (rules services and gateways)."""

    host: str
    port: int
    redis_url: str
    metrics_port: int  # 0 = no metrics endpoint
    log_level: str
    max_message_bytes: int
    max_concurrent_streams: int
    # Calls the transport has accepted and the server's event loop has not picked up yet (a burst
    # of new streams). Above this gRPC refuses new calls (as CANCELLED) with a probability rising
    # to 1 at twice it; gRPC's own default (1,000, 3,000 hard) drops part of a burst of a few
    # thousand watchers that all connect at once.
    max_pending_calls: int
    grace_s: float
    # TLS from certificate files (PEM) named in TAFEL_TLS_CERT / TAFEL_TLS_KEY; with
    # TAFEL_TLS_CLIENT_CA set, callers must present a certificate that CA signed (mutual TLS).
    tls_cert_file: str = ""
    tls_key_file: str = ""
    tls_client_ca_file: str = ""
    # TAFEL_INTERNAL_SECRET: the shared secret internal callers (gateway -> rules) send; a rules
    # service with it set refuses every other caller (health checks excepted).
    internal_secret: str = field(default="", repr=False)
    # A connection that has not completed its HTTP/2 (and TLS) handshake by then is closed.
    handshake_timeout_s: float = 10.0
    # grpc.aio servers sharing the port (kit/server.py ServerGroup): how many new calls the
    # process asks the core for at once. More take a burst of new connections in faster.
    acceptors: int = 1
    # How often the server checks it can do its work (kit/health.py) and sets its health status.
    health_check_s: float = 5.0

    @classmethod
    def from_env(cls, env: Env, *, default_port: int, default_acceptors: int = 1) -> ServerSettings:
        cert, key = env.environ.get("TAFEL_TLS_CERT", ""), env.environ.get("TAFEL_TLS_KEY", "")
        if bool(cert) != bool(key):
            raise ConfigError("TAFEL_TLS_CERT and TAFEL_TLS_KEY are set together or not at all")
        client_ca = env.environ.get("TAFEL_TLS_CLIENT_CA", "")
        if client_ca and not cert:
            raise ConfigError("TAFEL_TLS_CLIENT_CA needs TAFEL_TLS_CERT and TAFEL_TLS_KEY")
        for name, path in (("TAFEL_TLS_CERT", cert), ("TAFEL_TLS_KEY", key), ("TAFEL_TLS_CLIENT_CA", client_ca)):
            if path and not os.path.isfile(path):
                raise ConfigError(f"{name} names {path!r}, which is not a readable file")
        internal = env.environ.get("TAFEL_INTERNAL_SECRET", "")
        if internal and len(internal) < 16:
            raise ConfigError("TAFEL_INTERNAL_SECRET must be at least 16 characters")
        return cls(
            host=env.text("TAFEL_HOST", "127.0.0.1"),
            port=env.integer("TAFEL_PORT", default_port, 0, 65535),
            redis_url=env.text("REDIS_URL"),
            metrics_port=env.integer("TAFEL_METRICS_PORT", 0, 0, 65535),
            log_level=env.choice("TAFEL_LOG_LEVEL", "INFO", ("DEBUG", "INFO", "WARNING", "ERROR")),
            max_message_bytes=env.integer("TAFEL_MAX_MESSAGE_BYTES", 1 << 20, 1024, 64 << 20),
            max_concurrent_streams=env.integer("TAFEL_MAX_CONCURRENT_STREAMS", 1000, 1, 100_000),
            max_pending_calls=env.integer("TAFEL_MAX_PENDING_CALLS", 20_000, 1, 1_000_000),
            grace_s=env.number("TAFEL_GRACE_S", 5.0, 0.0, 300.0),
            tls_cert_file=cert,
            tls_key_file=key,
            tls_client_ca_file=client_ca,
            internal_secret=internal,
            handshake_timeout_s=env.number("TAFEL_HANDSHAKE_TIMEOUT_S", 10.0, 0.1, 300.0),
            acceptors=env.integer("TAFEL_ACCEPTORS", default_acceptors, 1, 64),
            health_check_s=env.number("TAFEL_HEALTH_CHECK_S", 5.0, 0.05, 3600.0),
        )


@dataclass(frozen=True)
class RulesSettings:
    """A rules service: the server settings plus how long games stay in Redis."""

    server: ServerSettings
    live_ttl_s: int  # a running game untouched this long expires
    finished_ttl_s: int  # live keys of a finished game expire after this
    cache_games: int  # decoded states kept in memory (validated by version on every write)
    rules_base_url: str  # where docs/ is published ("" = rules_url is the source-tree path)

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None, *, default_port: int = 0) -> RulesSettings:
        env = Env(environ)
        return cls(
            server=ServerSettings.from_env(env, default_port=default_port),
            live_ttl_s=env.integer("TAFEL_LIVE_TTL_S", 60 * 24 * 3600, 60, 400 * 24 * 3600),
            finished_ttl_s=env.integer("TAFEL_FINISHED_TTL_S", 3600, 1, 30 * 24 * 3600),
            cache_games=env.integer("TAFEL_CACHE_GAMES", 10_000, 0, 10_000_000),
            rules_base_url=env.text("TAFEL_RULES_BASE_URL", ""),
        )
