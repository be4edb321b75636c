"""Identity: accounts, guests and session tokens.

- Accounts live in Redis, one hash per username (kit/redis/keys.py account_key: player id, login
  name as typed, scrypt salt and hash and parameters, and ``dn`` the display name when one is set).
  Registration is one Lua script (kit/redis/lua/auth/register.lua) that creates the hash only if
  it does not exist, so a username is taken exactly once, by any replica.
- Passwords are stored only as salted scrypt (hashlib.scrypt), computed off the event loop.
- A session token is ``v1.<payload>.<signature>``: the payload (base64url JSON: player id, name,
  display name, guest flag, expiry) signed with HMAC-SHA256 under TAFEL_TOKEN_SECRET, shared by every replica.
  Checking one costs no Redis round trip. A guest exists only in its token.
- Wrong passwords are throttled without handing strangers a lock-out: failures count
  per source (the caller's address) and per account; past a few free tries each further try waits
  twice as long as the last (up to 15 min). The account's delay does not apply to its owner signing
  in from a source that has signed in to it before, or with a valid session of the account, so a
  stranger guessing from elsewhere slows only themself.
- A display name is what others see: any script, 1-32 characters once trimmed and in
  NFC, no control or format characters, and nothing that passes for what the platform marks itself
  (a bot, a guest, staff). The login name stays 3-24 of A-Z a-z 0-9 _ -. A guest's lives in its
  token alone, an account's also in its hash (signing in reads it).
- Hashing (scrypt, ~50 ms of CPU) runs on a few threads through a queue where sign-ins go first and
  registrations wait in a bounded line (RESOURCE_EXHAUSTED when it is full): a flood of Register
  calls cannot starve sign-in.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import hashlib
import hmac
import json
import math
import re
import secrets
import time
import unicodedata
from collections import OrderedDict, deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import grpc
from tafel.play.v1 import play_pb2

from gateway.sessions import Revocations
from kit.errors import Refused, invalid
from kit.redis.keys import account_key, failures_key, known_sources_key, source_failures_key
from kit.redis.layer import RedisLayer
from kit.redis.scripts import script

USERNAME = re.compile(r"^[A-Za-z0-9_-]{3,24}$")
GUEST_PREFIX = "guest-"
MIN_PASSWORD, MAX_PASSWORD = 8, 128
SCRYPT_N, SCRYPT_R, SCRYPT_P, SCRYPT_LEN = 1 << 14, 8, 1, 32
ACCOUNT_FREE_FAILURES = 5  # wrong passwords for one account before its delay starts (unknown sources)
SOURCE_FREE_FAILURES = 20  # wrong passwords from one source before its delay starts
MAX_DELAY_S = 900.0
FAILURE_WINDOW_S = 3600  # a failure count is forgotten this long after the last failure
KNOWN_SOURCE_TTL_S = 90 * 24 * 3600
SIGN_IN, REGISTER = 0, 1  # hashing priorities
TOKEN_VERSION = "v1"
DISPLAY_NAME_MAX = 32
# Names the platform gives itself (Player.bot, guests, staff): no display name may pass for one.
_RESERVED_FIRST_WORDS = frozenset({"bot", "admin", "administrator", "moderator", "mod", "staff"})
# Direction overrides and isolates: a name could reverse the text after it on someone's screen.
_BIDI_CONTROLS = frozenset(range(0x202A, 0x202F)) | frozenset(range(0x2066, 0x206A))
# Joiners are format characters that scripts need (Persian, Indic, emoji sequences): allowed.
_JOINERS = frozenset({0x200C, 0x200D})
_CACHE_SIZE = 10_000


def source_id(source: str) -> str:
    """A source as stored: hashed, so the store holds no addresses in clear."""
    return hashlib.sha256(source.encode()).hexdigest()[:24]


def delay_after(failures: int, free: int) -> float:
    """How long after the last failure the next try may come: 0 for the free tries, then 1 s,
    2 s, 4 s ... up to MAX_DELAY_S."""
    if failures < free:
        return 0.0
    return float(min(MAX_DELAY_S, 2.0 ** (failures - free)))


class PlayerSource(Protocol):
    """Who the caller is (the Authenticator below): what the lobby and the bot service ask of it."""

    async def player(self, context: grpc.aio.ServicerContext[Any, Any]) -> play_pb2.Player: ...


class HashQueue:
    """`threads` scrypt computations at a time; waiting callers are served by priority (sign-ins
    first), and each priority's line is bounded (RESOURCE_EXHAUSTED when full, with a retry)."""

    def __init__(self, threads: int, max_waiting: tuple[int, int]) -> None:
        self.free = threads
        self.max_waiting = max_waiting
        self.waiting: tuple[deque[asyncio.Future[None]], ...] = (deque(), deque())

    async def run(self, priority: int, password: str, salt: bytes, n: int, r: int, p: int) -> bytes:
        if self.free > 0:
            self.free -= 1
        else:
            line = self.waiting[priority]
            if len(line) >= self.max_waiting[priority]:
                raise Refused(
                    grpc.StatusCode.RESOURCE_EXHAUSTED, "BUSY", "the service is busy; retry shortly", retry_after_s=1.0
                )
            turn: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            line.append(turn)
            try:
                await turn
            except asyncio.CancelledError:
                if turn.done() and not turn.cancelled():
                    self._release()  # the slot was handed to us as we were cancelled: pass it on
                raise
        try:
            return await asyncio.to_thread(_scrypt, password, salt, n, r, p)
        finally:
            self._release()

    def _release(self) -> None:
        for line in self.waiting:
            while line:
                turn = line.popleft()
                if not turn.done():
                    turn.set_result(None)
                    return
        self.free += 1


def display_name_of(raw: str, field: str = "display_name") -> str:
    """A display name as stored: trimmed, inner runs of white space one space, Unicode NFC; or
    INVALID_ARGUMENT with its reason. "" stays "" (no display name)."""
    name = unicodedata.normalize("NFC", raw)
    for char in name:
        category = unicodedata.category(char)
        if char in " \u00a0\u3000" or (category == "Zs"):
            continue
        if (
            category in ("Cc", "Cs", "Co", "Cn", "Zl", "Zp") or (category == "Cf" and ord(char) not in _JOINERS)
        ) or ord(char) in _BIDI_CONTROLS:
            raise invalid(
                "BAD_DISPLAY_NAME",
                f"a display name cannot hold {unicodedata.name(char, '').lower() or 'control characters'}: "
                "use letters, digits, punctuation and single spaces",
                field=field,
            )
    name = " ".join(name.split())
    if not name:
        if raw:
            raise invalid("BAD_DISPLAY_NAME", "a display name needs a visible character", field=field)
        return ""
    if len(name) > DISPLAY_NAME_MAX:
        raise invalid(
            "DISPLAY_NAME_TOO_LONG",
            f"a display name is at most {DISPLAY_NAME_MAX} characters; this one has {len(name)}",
            field=field,
        )
    # Compared as the eye reads it: fullwidth or styled letters fold to plain ones.
    folded = unicodedata.normalize("NFKC", name).casefold()
    first = re.split(r"[^\w]|_", folded, maxsplit=1)[0]
    if first in _RESERVED_FIRST_WORDS or folded.startswith(GUEST_PREFIX):
        raise invalid(
            "DISPLAY_NAME_RESERVED",
            f'a display name cannot start with "{name.split()[0]}": the platform marks bots, guests and staff itself',
            field=field,
        )
    return name


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
    session_id: str = ""  # tokens issued before sessions could be revoked have none
    issued_ms: int = 0
    display_name: str = ""

    def player(self) -> play_pb2.Player:
        return play_pb2.Player(
            player_id=self.player_id, username=self.username, guest=self.guest, display_name=self.display_name
        )


class Authenticator:
    """Registers, signs in and recognises players. Shared by every servicer of a gateway."""

    def __init__(
        self,
        redis: RedisLayer,
        *,
        secret: bytes,
        token_ttl_s: int,
        hash_threads: int = 2,
        barred: Callable[[str], Refused | None] | None = None,
    ) -> None:
        if len(secret) < 16:
            raise ValueError("the token secret must be at least 16 bytes")
        self.redis = redis
        self._secret = secret
        self.token_ttl_s = token_ttl_s
        self._hashing = HashQueue(hash_threads, max_waiting=(1024, 64))
        self._cache: OrderedDict[str, Identity] = OrderedDict()
        self._dummy_salt = secrets.token_bytes(16)
        self.revocations = Revocations(redis, token_ttl_s)
        # A suspended or banned account's refusal (gateway/standing), checked once the password is
        # right: a wrong password says nothing about the account.
        self.barred = barred

    # -- tokens -----------------------------------------------------------------------------------

    def issue(
        self, player: play_pb2.Player, now: float | None = None, session_id: str | None = None
    ) -> play_pb2.Session:
        now = time.time() if now is None else now
        expires = int(now + self.token_ttl_s)
        claims = {"p": player.player_id, "u": player.username, "g": int(player.guest), "e": expires}
        # The session id (kept across refreshes) and when this token was issued (ms): revocation.
        claims.update(s=session_id or secrets.token_hex(8), i=int(now * 1000))
        if player.display_name:
            claims["d"] = player.display_name
        payload = json.dumps(claims, separators=(",", ":")).encode()
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
            self.check_not_revoked(cached)
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
            identity = Identity(
                str(payload["p"]),
                str(payload["u"]),
                bool(payload["g"]),
                float(payload["e"]),
                str(payload.get("s", "")),
                int(payload.get("i", 0)),
                str(payload.get("d", "")),
            )
        except (KeyError, TypeError, ValueError, AttributeError):
            raise unauthenticated("TOKEN_INVALID", "the token is not a tafel session token") from None
        if identity.expires_at <= now:
            raise unauthenticated("TOKEN_EXPIRED", "the session has expired; sign in again")
        self.check_not_revoked(identity)
        self._cache[token] = identity
        if len(self._cache) > _CACHE_SIZE:
            self._cache.popitem(last=False)
        return identity

    def check_not_revoked(self, identity: Identity) -> None:
        if self.revocations.revoked(identity.player_id, identity.session_id, identity.issued_ms):
            raise unauthenticated("SESSION_REVOKED", "this session was signed out; sign in again")

    # -- sessions ---------------------------------------------------------------------------------

    def refresh(self, identity: Identity) -> play_pb2.Session:
        """A new token for a valid session, with a fresh expiry (guests too). It keeps the session
        id, so signing the session out revokes the tokens it was refreshed from too."""
        return self.issue(identity.player(), session_id=identity.session_id or None)

    async def sign_out(self, identity: Identity, everywhere: bool) -> None:
        if everywhere:
            await self.revocations.revoke_player(identity.player_id, int(time.time() * 1000) + 1)
        elif identity.session_id:
            # Forgotten once no token of the session can be unexpired: a refresh may have issued
            # one up to now, lasting token_ttl_s; none comes after (a revoked session cannot refresh).
            await self.revocations.revoke_session(identity.session_id, time.time() + self.token_ttl_s)
        else:  # a token from before session ids: only "everywhere" can reach it
            await self.revocations.revoke_player(identity.player_id, identity.issued_ms + 1)

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

    async def _hash(self, password: str, salt: bytes, n: int, r: int, p: int, priority: int = SIGN_IN) -> bytes:
        return await self._hashing.run(priority, password, salt, n, r, p)

    @staticmethod
    def _check_credentials(username: str, password: str) -> None:
        if not USERNAME.match(username):
            raise invalid("BAD_USERNAME", "a username is 3-24 characters of A-Z a-z 0-9 _ -", field="username")
        if not MIN_PASSWORD <= len(password) <= MAX_PASSWORD:
            raise invalid("BAD_PASSWORD", f"a password is {MIN_PASSWORD}-{MAX_PASSWORD} characters", field="password")

    async def register(
        self, username: str, password: str, *, source: str = "", display_name: str = ""
    ) -> play_pb2.Session:
        self._check_credentials(username, password)
        if username.lower().startswith(GUEST_PREFIX):
            raise invalid("BAD_USERNAME", f'usernames starting with "{GUEST_PREFIX}" are reserved', field="username")
        display_name = display_name_of(display_name)
        salt = secrets.token_bytes(16)
        digest = await self._hash(password, salt, SCRYPT_N, SCRYPT_R, SCRYPT_P, priority=REGISTER)
        player = play_pb2.Player(player_id=new_player_id(), username=username, guest=False, display_name=display_name)
        created = await self.redis.run(
            script("auth/register"),
            [account_key(username)],
            [
                player.player_id,
                username,
                salt.hex(),
                digest.hex(),
                SCRYPT_N,
                SCRYPT_R,
                SCRYPT_P,
                int(time.time() * 1000),
                *([display_name] if display_name else []),
            ],
        )
        if not int(created):
            raise Refused(grpc.StatusCode.ALREADY_EXISTS, "USERNAME_TAKEN", f"the username {username} is taken")
        if source:
            await self._remember(username, source)
        return self.issue(player)

    async def _wait_s(self, key: str, free: int, now: float) -> float:
        row: Any = await self.redis.call("HMGET", key, "n", "t")
        if row[0] is None:
            return 0.0
        return max(0.0, int(row[1] or 0) / 1000.0 + delay_after(int(row[0]), free) - now)

    async def _owner_vouched(self, username: str, source: str, session: Identity | None) -> bool:
        """The caller is the account's owner as far as throttling goes: a valid session of this
        account, or a source that has signed in to it before."""
        if session is not None and not session.guest and session.username.lower() == username.lower():
            return True
        return bool(source) and bool(await self.redis.call("HEXISTS", known_sources_key(username), source_id(source)))

    async def _remember(self, username: str, source: str) -> None:
        key = known_sources_key(username)
        await self.redis.many(
            [("HSET", key, source_id(source), int(time.time() * 1000)), ("EXPIRE", key, KNOWN_SOURCE_TTL_S)]
        )

    async def sign_in(
        self, username: str, password: str, *, source: str = "", session: Identity | None = None
    ) -> play_pb2.Session:
        if not USERNAME.match(username) or not MIN_PASSWORD <= len(password) <= MAX_PASSWORD:
            raise unauthenticated("BAD_CREDENTIALS", "wrong username or password")
        now = time.time()
        wait = await self._wait_s(source_failures_key(source_id(source)), SOURCE_FREE_FAILURES, now) if source else 0.0
        if not wait and not await self._owner_vouched(username, source, session):
            wait = await self._wait_s(failures_key(username), ACCOUNT_FREE_FAILURES, now)
        if wait:
            raise Refused(
                grpc.StatusCode.RESOURCE_EXHAUSTED,
                "TOO_MANY_ATTEMPTS",
                f"too many failed sign-ins; wait {math.ceil(wait)} s",
                retry_after_s=wait,
            )
        flat: Any = await self.redis.call("HGETALL", account_key(username))
        row = dict(zip(flat[::2], flat[1::2], strict=True))
        if not row:
            # Spend the same time as a real check so response times do not reveal usernames.
            await self._hash(password, self._dummy_salt, SCRYPT_N, SCRYPT_R, SCRYPT_P)
            await self._fail(username, source)
            raise unauthenticated("BAD_CREDENTIALS", "wrong username or password")
        digest = await self._hash(
            password, bytes.fromhex(row[b"salt"].decode()), int(row[b"n"]), int(row[b"r"]), int(row[b"p"])
        )
        if not hmac.compare_digest(digest, bytes.fromhex(row[b"hash"].decode())):
            await self._fail(username, source)
            raise unauthenticated("BAD_CREDENTIALS", "wrong username or password")
        if source:
            await self._remember(username, source)
        player = play_pb2.Player(
            player_id=row[b"id"].decode(),
            username=row[b"name"].decode(),
            guest=False,
            display_name=row.get(b"dn", b"").decode(),
        )
        refused = self.barred(player.player_id) if self.barred is not None else None
        if refused is not None:
            raise refused
        return self.issue(player)

    async def _fail(self, username: str, source: str) -> None:
        now_ms = int(time.time() * 1000)
        await self.redis.run(script("auth/fail"), [failures_key(username)], [now_ms, FAILURE_WINDOW_S])
        if source:
            key = source_failures_key(source_id(source))
            await self.redis.run(script("auth/fail"), [key], [now_ms, FAILURE_WINDOW_S])

    # -- an account's life: its password, checked and changed --------------------------------------

    async def check_password(self, identity: Identity, password: str) -> dict[bytes, bytes]:
        """The caller's account row when `password` is its password; Refused otherwise (a wrong
        one counts as a failed sign-in of the account, so guessing through here is throttled too)."""
        if identity.guest:
            raise Refused(
                grpc.StatusCode.FAILED_PRECONDITION, "GUEST_ACCOUNT", "a guest has no account or password; register"
            )
        wait = await self._wait_s(failures_key(identity.username), ACCOUNT_FREE_FAILURES, time.time())
        if wait:
            raise Refused(
                grpc.StatusCode.RESOURCE_EXHAUSTED,
                "TOO_MANY_ATTEMPTS",
                f"too many wrong passwords; wait {math.ceil(wait)} s",
                retry_after_s=wait,
            )
        flat: Any = await self.redis.call("HGETALL", account_key(identity.username))
        row = dict(zip(flat[::2], flat[1::2], strict=True))
        if not row or row[b"id"].decode() != identity.player_id:
            raise unauthenticated("SESSION_REVOKED", "this account no longer exists under this name; sign in again")
        ok = False
        if MIN_PASSWORD <= len(password) <= MAX_PASSWORD:
            digest = await self._hash(
                password, bytes.fromhex(row[b"salt"].decode()), int(row[b"n"]), int(row[b"r"]), int(row[b"p"])
            )
            ok = hmac.compare_digest(digest, bytes.fromhex(row[b"hash"].decode()))
        if not ok:
            await self._fail(identity.username, "")
            raise Refused(grpc.StatusCode.PERMISSION_DENIED, "WRONG_PASSWORD", "the current password is wrong")
        return row

    async def change_password(self, identity: Identity, current: str, new: str) -> play_pb2.Session:
        """Set a new password; every other session of the account is revoked, the caller gets a
        fresh one."""
        await self.check_password(identity, current)
        if not MIN_PASSWORD <= len(new) <= MAX_PASSWORD:
            raise invalid(
                "BAD_PASSWORD", f"a password is {MIN_PASSWORD}-{MAX_PASSWORD} characters", field="new_password"
            )
        salt = secrets.token_bytes(16)
        digest = await self._hash(new, salt, SCRYPT_N, SCRYPT_R, SCRYPT_P, priority=REGISTER)
        changed = await self.redis.run(
            script("auth/set_password"),
            [account_key(identity.username)],
            [identity.player_id, salt.hex(), digest.hex(), SCRYPT_N, SCRYPT_R, SCRYPT_P],
        )
        if not int(changed):
            raise unauthenticated("SESSION_REVOKED", "this account no longer exists under this name; sign in again")
        now = time.time()
        await self.revocations.revoke_player(identity.player_id, int(now * 1000))
        return self.issue(identity.player(), now=now + 0.001)

    async def guest(self, display_name: str = "") -> play_pb2.Session:
        player = play_pb2.Player(
            player_id=new_player_id(),
            username=f"{GUEST_PREFIX}{secrets.token_hex(4)}",
            guest=True,
            display_name=display_name_of(display_name),
        )
        return self.issue(player)

    async def set_display_name(self, identity: Identity, raw: str) -> play_pb2.Session:
        """The caller's new display name ("" removes it): kept with an account, and in a fresh token
        of the same session either way (a guest's lives only there)."""
        name = display_name_of(raw)
        if not identity.guest:
            changed = await self.redis.run(
                script("auth/set_display_name"), [account_key(identity.username)], [identity.player_id, name]
            )
            if not int(changed):
                raise unauthenticated("SESSION_REVOKED", "this account no longer exists under this name; sign in again")
        player = identity.player()
        player.display_name = name
        return self.issue(player, session_id=identity.session_id or None)
