"""Presence: online (a stream open on some gateway), playing (seated in a running game), offline.

Every public stream passes the front door (gateway/limits.py CallLimiter), which counts a player's
open streams on this gateway and tells this tracker when the first opens and the last closes. The
tracker holds a lease per player it has (the field c:<gateway> in their presence hash, and the
member "<gateway>|<player>" of PRESENCE_LEASES, both with the lease's end) and renews all of them
every `renew_s` (one script per player in one pipelined batch, then one ZADD). A gateway killed
with -9 stops renewing: its leases run out and the sweep (every gateway runs it; each step is a
compare-and-set, so several at once tell followers once) turns those players offline unless
another gateway holds them. Games starting (GameDirectory's announce) and ending (the records'
game-end hooks) move players between online and playing.

lua/people/presence.lua works out the state in the player's own slot and answers only a change;
the change then goes to each follower's event stream (PresenceChanged), except to anyone in a block
relation with the player either way. Changes of one player made on this gateway are told in order
(one queue per player)."""

from __future__ import annotations

import asyncio
import logging
import secrets
import time
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

from redis.exceptions import RedisError
from tafel.play.v1 import challenges_pb2, play_pb2, social_pb2

from gateway.auth import Identity
from gateway.events.feed import KEEP_S, AccountEvents, contacts_key
from gateway.people.store import PeopleStore
from kit.loops import is_outage
from kit.redis.keys import PRESENCE_LEASES, player_key, presence_key
from kit.redis.layer import RedisLayer
from kit.redis.replies import text
from kit.redis.scripts import script
from kit.tasks import spawn

log = logging.getLogger("tafel.gateway.people")
STATES = {
    "offline": social_pb2.PRESENCE_STATE_OFFLINE,
    "online": social_pb2.PRESENCE_STATE_ONLINE,
    "playing": social_pb2.PRESENCE_STATE_PLAYING,
}
SWEEP_BATCH = 500
Change = list[Any]  # presence.lua's answer: state, seen ms, username, display name


def presence_of(state: str, seen_ms: int, now_ms: int | None = None) -> social_pb2.Presence:
    """A Presence from the stored state "<state>|<game id>|<game>|<watchable>"."""
    name, game_id, game, watchable = [*state.split("|"), "", "", "", "0"][:4]
    out = social_pb2.Presence(state=STATES.get(name, social_pb2.PRESENCE_STATE_UNSPECIFIED))
    if out.state == social_pb2.PRESENCE_STATE_PLAYING:
        out.game_id, out.game, out.watchable = game_id, game, watchable == "1"
    if out.state in (social_pb2.PRESENCE_STATE_ONLINE, social_pb2.PRESENCE_STATE_PLAYING):
        out.last_seen.FromMilliseconds(now_ms if now_ms is not None else int(time.time() * 1000))
    elif out.state == social_pb2.PRESENCE_STATE_OFFLINE and seen_ms:
        out.last_seen.FromMilliseconds(seen_ms)
    return out


def announcing(*announcers: Callable[[Any], Awaitable[None]]) -> Callable[[Any], Awaitable[None]]:
    """One GameDirectory `announce` calling each of `announcers` in turn (the event stream's
    game_started, then presence)."""

    async def announce(meta: Any) -> None:
        for each in announcers:
            await each(meta)

    return announce


class Presence:
    """This gateway's presence tracker, its lease renewal and its share of the sweep."""

    def __init__(
        self,
        redis: RedisLayer,
        events: AccountEvents,
        people: PeopleStore,
        *,
        lease_s: float = 60.0,
        gateway_id: str | None = None,
        revoked: Callable[[Identity], bool] | None = None,
    ) -> None:
        self.redis = redis
        self.events = events
        self.people = people
        self.lease_ms = int(lease_s * 1000)
        self.renew_s = lease_s / 3
        self.sweep_s = min(5.0, lease_s / 4)
        self.gateway_id = gateway_id or secrets.token_hex(6)
        self.held: dict[str, Identity] = {}  # the players held here, by id
        # Whether the player's sessions were all revoked (signed out everywhere, renamed, deleted):
        # the renewal lets go of them rather than keep (or bring back) their presence.
        self.revoked = revoked
        self._tails: dict[str, asyncio.Task[None]] = {}
        self._loops: list[asyncio.Task[None]] = []

    # -- the front door's hooks (gateway/limits.py) -----------------------------------------------

    def opened(self, identity: Identity) -> None:
        """The player's first stream on this gateway opened (guests have no presence)."""
        if identity.guest:
            return
        self.held[identity.player_id] = identity
        self._queue(identity.player_id, lambda: self._up(identity.player_id))

    def closed(self, player_id: str) -> None:
        """The player's last stream on this gateway closed."""
        if self.held.pop(player_id, None) is not None:
            self._queue(player_id, lambda: self._down(player_id))

    def _queue(self, player_id: str, step: Callable[[], Awaitable[None]]) -> asyncio.Task[None]:
        """Run `step` after the player's earlier steps here: their changes are made and told in order."""
        before = self._tails.get(player_id)

        async def run() -> None:
            if before is not None:
                await asyncio.wait((before,))
            try:
                await step()
            except RedisError as error:
                if not is_outage(error):
                    raise
                log.warning("presence not updated (Redis unavailable); the renewal or the sweep repairs it")

        task = spawn(run(), "presence", log=log)
        self._tails[player_id] = task

        def done(finished: asyncio.Task[None]) -> None:
            if self._tails.get(player_id) is finished:
                del self._tails[player_id]

        task.add_done_callback(done)
        return task

    async def _up(self, player_id: str, end_ms: int = 0) -> None:
        """(Re)new this gateway's lease on a player still held, telling any change; `end_ms` given
        (the renewal): the lease's end, which the renewal then writes for all in one ZADD."""
        identity = self.held.get(player_id)
        if identity is None:
            return
        if self.revoked is not None and self.revoked(identity):
            del self.held[player_id]
            await self._down(player_id)
            return
        names = f"{identity.username}|{identity.display_name}"
        now = int(time.time() * 1000)
        end = end_ms or now + self.lease_ms
        change = await self.redis.run(
            script("people/presence"), [presence_key(player_id)], ["up", now, self.gateway_id, end, names]
        )
        if not end_ms:
            await self.redis.call("ZADD", PRESENCE_LEASES, end, self._member(player_id))
        if change:
            await self.tell(player_id, change)

    async def _down(self, player_id: str) -> None:
        now = int(time.time() * 1000)
        change = await self.redis.run(
            script("people/presence"), [presence_key(player_id)], ["down", now, self.gateway_id]
        )
        await self.redis.call("ZREM", PRESENCE_LEASES, self._member(player_id))
        if change:
            await self.tell(player_id, change)

    def _member(self, player_id: str) -> str:
        return f"{self.gateway_id}|{player_id}"

    # -- games starting and ending -----------------------------------------------------------------

    async def game_started(self, meta: Any) -> None:
        """GameDirectory's announce (with the event stream's GameAnnouncer): its players are playing."""
        value = f"{int(meta.created_at * 1000)}|{meta.game}|{0 if meta.private else 1}"
        for pid in dict.fromkeys(p[0] for p in meta.players if not p[2]):
            await self._change(pid, ["start", meta.game_id, value])

    async def on_record(self, record: play_pb2.GameRecord) -> None:
        """A game-end hook (Records.hooks): its players are no longer playing it."""
        for pid in dict.fromkeys(s.player.player_id for s in record.players if not s.player.guest):
            await self._change(pid, ["end", record.game_id])

    async def _change(self, player_id: str, op: list[Any]) -> None:
        try:
            now = int(time.time() * 1000)
            change = await self.redis.run(script("people/presence"), [presence_key(player_id)], [op[0], now, *op[1:]])
            if change:
                await self.tell(player_id, change)
        except Exception:  # never fails the game's start or end; the next change corrects it
            log.exception("could not update a player's presence", extra={"player_id": player_id})

    # -- telling followers ---------------------------------------------------------------------------

    async def tell(self, player_id: str, change: Change) -> None:
        """A PresenceChanged to each follower of the player not in a block relation with them."""
        followers = await self.people.followers(player_id)
        if not followers:
            return
        blocks, blocked_by = await self.redis.many(
            [("HKEYS", player_key(player_id, "blocks")), ("SMEMBERS", player_key(player_id, "blocked-by"))]
        )
        avoided = {text(p) for p in (*blocks, *blocked_by)}
        told = [f for f in followers if f not in avoided]
        if not told:
            return
        state, seen, username, display = (text(part) for part in change)
        event = challenges_pb2.AccountEvent(
            presence=social_pb2.PresenceChanged(
                player=play_pb2.Player(player_id=player_id, username=username, display_name=display),
                presence=presence_of(state, int(seen or 0)),
            )
        )
        await self.events.append(told, event)
        # The streams that now name the player: an erased account's name is replaced there.
        contacts = contacts_key(player_id)
        await self.redis.many([("SADD", contacts, *told), ("EXPIRE", contacts, KEEP_S)])

    # -- reading -------------------------------------------------------------------------------------

    async def read(self, player_ids: Iterable[str]) -> dict[str, social_pb2.Presence]:
        ids = list(dict.fromkeys(player_ids))
        rows = await self.redis.many([("HMGET", presence_key(pid), "s", "seen") for pid in ids])
        now = int(time.time() * 1000)
        out: dict[str, social_pb2.Presence] = {}
        for pid, (state, seen) in zip(ids, rows, strict=True):
            out[pid] = presence_of(text(state), int(seen or 0), now) if state is not None else social_pb2.Presence()
        return out

    # -- renewal and the sweep -----------------------------------------------------------------------

    def start(self) -> None:
        if not self._loops:
            self._loops = [
                spawn(self._every(self.renew_s, self.renew), "presence renewal", log=log),
                spawn(self._every(self.sweep_s, self.sweep_once), "presence sweep", log=log),
            ]

    async def renew(self) -> None:
        """Every held player's lease, a batch at a time: their scripts pipelined, then one ZADD."""
        ids = list(self.held)
        for start in range(0, len(ids), SWEEP_BATCH):
            chunk = ids[start : start + SWEEP_BATCH]
            end = int(time.time() * 1000) + self.lease_ms
            await asyncio.gather(*[self._queue(pid, lambda p=pid, e=end: self._up(p, e)) for pid in chunk])  # type: ignore[misc]
            still = [pid for pid in chunk if pid in self.held]
            if still:
                await self.redis.call("ZADD", PRESENCE_LEASES, *[x for pid in still for x in (end, self._member(pid))])

    async def sweep_once(self, now_ms: int | None = None) -> int:
        """Players whose gateway's lease ran out: offline unless another gateway holds them."""
        now = int(time.time() * 1000) if now_ms is None else now_ms
        rows: Any = await self.redis.call(
            "ZRANGEBYSCORE", PRESENCE_LEASES, "-inf", now, "WITHSCORES", "LIMIT", 0, SWEEP_BATCH
        )
        swept = 0
        for raw, score in zip(rows[::2], rows[1::2], strict=True):
            member = text(raw)
            gateway, _, pid = member.partition("|")
            if gateway == self.gateway_id and pid in self.held:
                continue  # held here: its renewal is only late
            change = await self.redis.run(script("people/presence"), [presence_key(pid)], ["expire", now, gateway])
            if change:
                await self.tell(pid, change)
            swept += int(await self.redis.run(script("people/unlease"), [PRESENCE_LEASES], [member, int(float(score))]))
        return swept

    async def _every(self, every_s: float, work: Callable[[], Awaitable[Any]]) -> None:
        while True:
            await asyncio.sleep(every_s)
            try:
                await work()
            except RedisError as error:
                if not is_outage(error):
                    raise
                log.warning("presence: Redis unavailable; retrying")

    async def stop(self) -> None:
        """After the server stopped (its streams closed): every player held here is let go."""
        for loop in self._loops:
            loop.cancel()
        for loop in self._loops:
            try:
                await loop
            except asyncio.CancelledError:
                pass
        self._loops = []
        for pid in list(self.held):
            self.closed(pid)
        tails = list(self._tails.values())
        if tails:
            await asyncio.wait(tails, timeout=5.0)
