"""The gateway's configuration: environment variables read once into a frozen value, failing fast.

Variables (besides the server ones every process reads, see kit/settings.py):

- ``REDIS_URL`` (required)
- ``TAFEL_TOKEN_SECRET`` (required): the key that signs session tokens, at least 16 characters;
  every gateway replica must share it.
- ``TAFEL_RULES_<GAME>`` for each game in kit.catalog.GAMES, e.g.
  ``TAFEL_RULES_CONNECT4=127.0.0.1:50061`` — ``host:port``, a comma-separated list for several
  replicas. Unset = ``127.0.0.1:<the catalog's default port>``; ``off`` = the game is not offered.
- ``TAFEL_TOKEN_TTL_S`` session lifetime (default 1 day), ``TAFEL_PER_MOVE_S`` default per-move
  time (60), ``TAFEL_MIN_PER_MOVE_S`` / ``TAFEL_MAX_PER_MOVE_S`` the range a client may ask for
  (5 s .. 1 day), ``TAFEL_TICKET_TTL_S`` how long a matchmaking ticket waits (300),
  ``TAFEL_RULES_STREAMS`` long-lived ApplyMoves streams per rules replica (2),
  ``TAFEL_RULES_TIMEOUT_S`` how long to wait for a rules service (5),
  ``TAFEL_CLOCK_MAX_WAIT_S`` the longest a clock sweeper sleeps between looks at Redis (1),
  ``TAFEL_RECORD_TTL_S`` how long a finished game's record is kept (0 = forever),
  ``TAFEL_GAME_TTL_S`` how long a game's gateway metadata lives after its last move (7 days).
- Calls to the rules services: ``TAFEL_INTERNAL_SECRET`` (sent on every call; the rules services
  set the same), ``TAFEL_RULES_TLS_CA`` (PEM: the CA that signed the rules services' certificates;
  set = TLS to them), ``TAFEL_RULES_TLS_CERT`` / ``TAFEL_RULES_TLS_KEY`` (the gateway's client
  certificate for mutual TLS). Limits: gateway/limits.py.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from gateway.limits import LimitSettings
from kit.catalog import DEFAULT_PORTS, GAMES
from kit.settings import ConfigError, Env, ServerSettings

DEFAULT_GATEWAY_PORT = 50051
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


def parse_addresses(name: str, raw: str) -> tuple[str, ...]:
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
class GatewaySettings:
    server: ServerSettings
    # game -> addresses of its rules service replicas
    rules: Mapping[str, tuple[str, ...]] = field(repr=False)
    token_secret: bytes = field(repr=False)
    token_ttl_s: int = 24 * 3600
    per_move_s: float = 60.0
    min_per_move_s: float = 5.0
    max_per_move_s: float = 24 * 3600.0
    ticket_ttl_s: int = 300
    rules_streams: int = 2
    rules_timeout_s: float = 5.0
    clock_max_wait_s: float = 1.0
    record_ttl_s: int = 0
    game_ttl_s: int = 7 * 24 * 3600
    rules_tls_ca_file: str = ""
    rules_tls_cert_file: str = ""
    rules_tls_key_file: str = ""
    limits: LimitSettings = field(default_factory=LimitSettings)

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> GatewaySettings:
        env = Env(environ)
        server = ServerSettings.from_env(env, default_port=DEFAULT_GATEWAY_PORT)
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
            ticket_ttl_s=env.integer("TAFEL_TICKET_TTL_S", 300, 5, 24 * 3600),
            rules_streams=env.integer("TAFEL_RULES_STREAMS", 2, 1, 64),
            rules_timeout_s=env.number("TAFEL_RULES_TIMEOUT_S", 5.0, 0.1, 300.0),
            clock_max_wait_s=env.number("TAFEL_CLOCK_MAX_WAIT_S", 1.0, 0.01, 60.0),
            record_ttl_s=env.integer("TAFEL_RECORD_TTL_S", 0, 0, 10 * 365 * 24 * 3600),
            game_ttl_s=env.integer("TAFEL_GAME_TTL_S", 7 * 24 * 3600, 60, 365 * 24 * 3600),
            rules_tls_ca_file=rules_ca,
            rules_tls_cert_file=rules_cert,
            rules_tls_key_file=rules_key,
            limits=LimitSettings.from_env(env.environ),
        )
