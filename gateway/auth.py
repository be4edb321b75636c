"""Identity: accounts, guests and session tokens.

- Accounts live in Redis, one hash per username (``tafel:{u:<lowercased name>}:account``: player
  id, display name, scrypt salt and hash and parameters). Registration is one Lua script that
  creates the hash only if it does not exist, so a username is taken exactly once, by any replica.
- Passwords are stored only as salted scrypt (hashlib.scrypt), computed off the event loop.
- A session token is ``v1.<payload>.<signature>``: the payload (base64url JSON: player id, name,
  guest flag, expiry) signed with HMAC-SHA256 under TAFEL_TOKEN_SECRET, shared by every replica.
  Checking one costs no Redis round trip. A guest exists only in its token.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import hashlib
import hmac
import json
import re
import secrets
import time
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import grpc
from redis.asyncio import Redis
from tafel.play.v1 import play_pb2

from services.kit.errors import Refused, invalid

USERNAME = re.compile(r"^[A-Za-z0-9_-]{3,24}$")
GUEST_PREFIX = "guest-"
MIN_PASSWORD, MAX_PASSWORD = 8, 128
SCRYPT_N, SCRYPT_R, SCRYPT_P, SCRYPT_LEN = 1 << 14, 8, 1, 32
MAX_FAILED_SIGN_INS = 10  # per username per minute
TOKEN_VERSION = "v1"
_CACHE_SIZE = 10_000

REGISTER_LUA = """
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], 'id', ARGV[1], 'name', ARGV[2], 'salt', ARGV[3], 'hash', ARGV[4],
           'n', ARGV[5], 'r', ARGV[6], 'p', ARGV[7], 'created', ARGV[8])
return 1
"""

FAIL_LUA = """
local n = redis.call('INCR', KEYS[1])
if n == 1 then redis.call('EXPIRE', KEYS[1], ARGV[1]) end
return n
"""


def account_key(username: str) -> str:
    return f"tafel:{{u:{username.lower()}}}:account"


def failures_key(username: str) -> str:
    return f"tafel:{{u:{username.lower()}}}:failures"


def new_player_id() -> str:
    return secrets.token_hex(12)


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _scrypt(password: str, salt: bytes, n: int, r: int, p: int) -> bytes:
    return hashlib.scrypt(password.encode(), salt=salt, n=n, r=r, p=p, dklen=SCRYPT_LEN, maxmem=64 << 20)


def unauthenticated(reason: str, message: str) -> Refused:
    return Refused(grpc.StatusCode.UNAUTHENTICATED, reason, message)


@dataclass(frozen=True)
class Identity:
    player_id: str
    username: str
    guest: bool
    expires_at: float

    def player(self) -> play_pb2.Player:
        return play_pb2.Player(player_id=self.player_id, username=self.username, guest=self.guest)


class Authenticator:
    """Registers, signs in and recognises players. Shared by every servicer of a gateway."""

    def __init__(self, redis: Redis, *, secret: bytes, token_ttl_s: int, hash_threads: int = 2) -> None:
        if len(secret) < 16:
            raise ValueError("the token secret must be at least 16 bytes")
        self.redis = redis
        self._secret = secret
        self.token_ttl_s = token_ttl_s
        self._register = redis.register_script(REGISTER_LUA)
        self._count_failure = redis.register_script(FAIL_LUA)
        self._hashing = asyncio.Semaphore(hash_threads)
        self._cache: OrderedDict[str, Identity] = OrderedDict()
        self._dummy_salt = secrets.token_bytes(16)

    # -- tokens -----------------------------------------------------------------------------------

    def issue(self, player: play_pb2.Player, now: float | None = None) -> play_pb2.Session:
        expires = int((time.time() if now is None else now) + self.token_ttl_s)
        payload = json.dumps(
            {"p": player.player_id, "u": player.username, "g": int(player.guest), "e": expires},
            separators=(",", ":"),
        ).encode()
        head = f"{TOKEN_VERSION}.{_b64(payload)}"
        signature = hmac.new(self._secret, head.encode(), hashlib.sha256).digest()
        session = play_pb2.Session(token=f"{head}.{_b64(signature)}")
        session.expires_at.FromSeconds(expires)
        session.player.CopyFrom(player)
        return session

    def verify(self, token: str, now: float | None = None) -> Identity:
        """The identity a token carries, or Refused(UNAUTHENTICATED)."""
        now = time.time() if now is None else now
        cached = self._cache.get(token)
        if cached is not None:
            if cached.expires_at <= now:
                raise unauthenticated("TOKEN_EXPIRED", "the session has expired; sign in again")
            return cached
        parts = token.split(".")
        if len(parts) != 3 or parts[0] != TOKEN_VERSION or len(token) > 2048:
            raise unauthenticated("TOKEN_INVALID", "the token is not a tafel session token")
        try:
            signature = _unb64(parts[2])
            payload: Any = json.loads(_unb64(parts[1]))
        except (binascii.Error, ValueError):
            raise unauthenticated("TOKEN_INVALID", "the token is not a tafel session token") from None
        expected = hmac.new(self._secret, f"{parts[0]}.{parts[1]}".encode(), hashlib.sha256).digest()
        if not hmac.compare_digest(signature, expected):
            raise unauthenticated("TOKEN_INVALID", "the token's signature does not match")
        try:
            identity = Identity(str(payload["p"]), str(payload["u"]), bool(payload["g"]), float(payload["e"]))
        except (KeyError, TypeError, ValueError):
            raise unauthenticated("TOKEN_INVALID", "the token is not a tafel session token") from None
        if identity.expires_at <= now:
            raise unauthenticated("TOKEN_EXPIRED", "the session has expired; sign in again")
        self._cache[token] = identity
        if len(self._cache) > _CACHE_SIZE:
            self._cache.popitem(last=False)
        return identity

    def identity(self, metadata: Sequence[tuple[str, str | bytes]] | None) -> Identity:
        """The identity of `authorization: Bearer <token>` in call metadata."""
        for key, value in metadata or ():
            if key == "authorization":
                text = value.decode(errors="replace") if isinstance(value, bytes) else value
                scheme, _, token = text.strip().partition(" ")
                if scheme.lower() != "bearer" or not token.strip():
                    raise unauthenticated("TOKEN_INVALID", 'send "authorization: Bearer <token>"')
                return self.verify(token.strip())
        raise unauthenticated("TOKEN_MISSING", 'sign in and send "authorization: Bearer <token>"')

    async def player(self, context: grpc.aio.ServicerContext[Any, Any]) -> play_pb2.Player:
        """The signed-in caller of a call, or Refused(UNAUTHENTICATED)."""
        return self.identity(context.invocation_metadata()).player()

    # -- accounts ---------------------------------------------------------------------------------

    async def _hash(self, password: str, salt: bytes, n: int, r: int, p: int) -> bytes:
        async with self._hashing:
            return await asyncio.to_thread(_scrypt, password, salt, n, r, p)

    @staticmethod
    def _check_credentials(username: str, password: str) -> None:
        if not USERNAME.match(username):
            raise invalid("BAD_USERNAME", "a username is 3-24 characters of A-Z a-z 0-9 _ -", field="username")
        if not MIN_PASSWORD <= len(password) <= MAX_PASSWORD:
            raise invalid(
                "BAD_PASSWORD", f"a password is {MIN_PASSWORD}-{MAX_PASSWORD} characters", field="password"
            )

    async def register(self, username: str, password: str) -> play_pb2.Session:
        self._check_credentials(username, password)
        if username.lower().startswith(GUEST_PREFIX):
            raise invalid("BAD_USERNAME", f"usernames starting with {GUEST_PREFIX!r} are reserved", field="username")
        salt = secrets.token_bytes(16)
        digest = await self._hash(password, salt, SCRYPT_N, SCRYPT_R, SCRYPT_P)
        player = play_pb2.Player(player_id=new_player_id(), username=username, guest=False)
        created = await self._register(
            keys=[account_key(username)],
            args=[player.player_id, username, salt.hex(), digest.hex(), SCRYPT_N, SCRYPT_R, SCRYPT_P,
                  int(time.time() * 1000)],
        )
        if not int(created):
            raise Refused(grpc.StatusCode.ALREADY_EXISTS, "USERNAME_TAKEN", f"the username {username!r} is taken")
        return self.issue(player)

    async def sign_in(self, username: str, password: str) -> play_pb2.Session:
        if not USERNAME.match(username) or not MIN_PASSWORD <= len(password) <= MAX_PASSWORD:
            raise unauthenticated("BAD_CREDENTIALS", "wrong username or password")
        failures = await self.redis.get(failures_key(username))
        if failures is not None and int(failures) >= MAX_FAILED_SIGN_INS:
            raise Refused(
                grpc.StatusCode.RESOURCE_EXHAUSTED, "TOO_MANY_ATTEMPTS", "too many failed sign-ins; wait a minute"
            )
        row: Any = await self.redis.hgetall(account_key(username))
        if not row:
            # Spend the same time as a real check so response times do not reveal usernames.
            await self._hash(password, self._dummy_salt, SCRYPT_N, SCRYPT_R, SCRYPT_P)
            await self._fail(username)
            raise unauthenticated("BAD_CREDENTIALS", "wrong username or password")
        digest = await self._hash(
            password, bytes.fromhex(row[b"salt"].decode()), int(row[b"n"]), int(row[b"r"]), int(row[b"p"])
        )
        if not hmac.compare_digest(digest, bytes.fromhex(row[b"hash"].decode())):
            await self._fail(username)
            raise unauthenticated("BAD_CREDENTIALS", "wrong username or password")
        player = play_pb2.Player(player_id=row[b"id"].decode(), username=row[b"name"].decode(), guest=False)
        return self.issue(player)

    async def _fail(self, username: str) -> None:
        await self._count_failure(keys=[failures_key(username)], args=[60])

    async def guest(self) -> play_pb2.Session:
        player = play_pb2.Player(
            player_id=new_player_id(), username=f"{GUEST_PREFIX}{secrets.token_hex(4)}", guest=True
        )
        return self.issue(player)
