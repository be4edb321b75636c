"""The Redis side of one matchmaking bucket: every method is one script (one round trip) on the
bucket's keys (kit/redis/keys.py bucket_keys, one hash tag), in kit/redis/lua/matchmaking/."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tafel.play.v1 import play_pb2

from gateway.matchmaking.model import BucketSpec, FormedMatch, MatchDetails, Taken, TicketStatus
from gateway.settings import MatchmakingSettings
from gateway.timecontrol import is_correspondence
from kit.redis.keys import MATCHED_CHANNEL, bucket_keys, player_key
from kit.redis.layer import RedisLayer
from kit.redis.replies import text
from kit.redis.scripts import script

# One pairing call forms at most this many matches (keeping each script short); a worker that
# hit the limit pairs again at once.
MAX_MATCHES_PER_PAIRING = 200
# What a withdrawal found (cancel.lua's answers; park.lua's too, PARKED for WITHDRAWN).
WITHDRAWN, PAIRED, UNKNOWN, TAKEN_OVER = 1, 2, 0, 3
PARKED = 1


def _player(raw: Any) -> play_pb2.Player:
    data = raw if isinstance(raw, bytes) else str(raw).encode()
    return play_pb2.Player.FromString(data)


def _formed(raw: Any) -> tuple[FormedMatch, ...]:
    return tuple(
        FormedMatch(
            game_id=text(game_id),
            tickets=tuple(text(t) for t in tickets),
            players=tuple(_player(p) for p in players),
        )
        for game_id, tickets, players in raw
    )


def block_keys(player_id: str) -> tuple[str, str]:
    """The player's block lists (the standing store writes them): the ids they block (hash) and
    the ids that block them (set). Pairing keeps the two players apart whichever blocked."""
    return player_key(player_id, "blocks"), player_key(player_id, "blocked-by")


class MatchQueue:
    def __init__(self, layer: RedisLayer, settings: MatchmakingSettings) -> None:
        self.layer = layer
        self.settings = settings

    async def avoids(self, player_ids: Sequence[str]) -> list[list[str]]:
        """Each player's block lists, both ways, in one round trip (on a cluster, where a bucket's
        script cannot read the players' keys: another slot)."""
        commands: list[tuple[str, str]] = []
        for player_id in player_ids:
            blocks, blocked_by = block_keys(player_id)
            commands += [("HKEYS", blocks), ("SMEMBERS", blocked_by)]
        replies = await self.layer.many(commands)
        return [
            sorted({text(i) for i in replies[2 * n]} | {text(i) for i in replies[2 * n + 1]})
            for n in range(len(player_ids))
        ]

    def hold_ms(self, per_move_ms: int = 0) -> int:
        """The longest a ticket of a bucket with this per-move time waits: a correspondence
        search a week (its stream may end: park), a real-time one ticket_ttl_s."""
        s = self.settings
        return int((s.correspondence_ttl_s if is_correspondence(per_move_ms) else s.ticket_ttl_s) * 1000)

    def keys_ttl_ms(self, per_move_ms: int = 0) -> int:
        """A bucket's keys outlive its longest ticket, its results and a lease."""
        s = self.settings
        return self.hold_ms(per_move_ms) + int((s.result_ttl_s + s.lease_s) * 1000)

    async def enqueue(
        self, bucket_id: str, ticket_id: str, player: play_pb2.Player, rating: float, now_ms: int
    ) -> str | None:
        """Queue a ticket; None when done, else the id of the player's ticket already queued here
        (taken over: the player's search goes on with it) or in another bucket."""
        taken = await self.take(bucket_id, ticket_id, player, rating, now_ms)
        return None if taken.queued and not taken.resumed else taken.ticket_id

    async def take(
        self,
        bucket_id: str,
        ticket_id: str,
        player: play_pb2.Player,
        rating: float,
        now_ms: int,
        *,
        request_id: str = "",
        owner: str = "",
        pairing: BucketSpec | None = None,
        claim: tuple[str, int] | None = None,
        avoid: Sequence[str] | None = None,
    ) -> Taken:
        """Queue `ticket_id`, or, for a search sent again with the same request id, take over the
        ticket it queued before (still queued or already paired); the player's ticket still queued
        in this bucket is taken over by any other search of theirs too (Taken.resumed). With `pairing` (the bucket's
        spec), a new ticket is paired at once in the same script: Taken.matches. With `claim`
        (the player's claim key and its lease, and `pairing`; one Redis only: another slot), the
        claim is taken and pointed at the answered ticket in the same script; another bucket's
        claim refuses it (not queued, `ticket_id` the other search's). The ticket is never seated
        with a player whom its player blocks or is blocked by: with `claim` the script reads the
        lists itself; else `avoid` (the ids, read by the caller: MatchQueue.avoids), or read here
        first when not given."""
        s = self.settings
        request_key = f"{player.player_id}|{request_id}" if request_id else ""
        pair_args = [*self._pairing(pairing), MAX_MATCHES_PER_PAIRING] if pairing is not None else []
        per_move_ms = pairing.per_move_ms if pairing is not None else 0
        args: list[Any] = [
            ticket_id,
            player.player_id,
            player.SerializeToString(),
            repr(float(rating)),
            now_ms,
            now_ms + s.lease_ms,
            now_ms + self.hold_ms(per_move_ms),
            self.keys_ttl_ms(per_move_ms),
            request_key,
            owner,
        ]
        keys = bucket_keys(bucket_id).all()
        if claim is None:
            if avoid is None:
                avoid = (await self.avoids([player.player_id]))[0]
            result = await self.layer.run(script("matchmaking/enqueue"), keys, [*args, ",".join(avoid), *pair_args])
        else:
            claim_key, claim_ttl_ms = claim
            result = await self.layer.run(
                script("matchmaking/claim_enqueue"),
                [*keys, claim_key, *block_keys(player.player_id)],
                [bucket_id, *args, claim_ttl_ms, *pair_args],
            )
        kind = int(result[0])
        if kind == 3:  # the claim is another bucket's search's: "<bucket id>|<ticket>"
            return Taken(text(result[1]).partition("|")[2], queued=False, resumed=False, enqueued_ms=0)
        if kind == 1:
            return Taken(ticket_id, queued=True, resumed=False, enqueued_ms=now_ms, matches=_formed(result[1]))
        if kind == 2:
            return Taken(text(result[1]), queued=True, resumed=True, enqueued_ms=int(result[2]))
        return Taken(text(result[1]), queued=False, resumed=False, enqueued_ms=0)

    async def withdraw(self, bucket_id: str, ticket_id: str, owner: str = "") -> int:
        """Take a ticket out of the queue: WITHDRAWN, PAIRED (too late), UNKNOWN (gone), or
        TAKEN_OVER (`owner` no longer holds it: a resent search does; left alone)."""
        result = await self.layer.run(script("matchmaking/cancel"), bucket_keys(bucket_id).all(), [ticket_id, owner])
        return int(result[0])

    async def withdraw_search(self, bucket_id: str, ticket_id: str) -> tuple[int, str]:
        """CancelSearch's withdrawal, whoever holds the ticket: (WITHDRAWN, ""), (PAIRED, its game
        id) or (UNKNOWN, "")."""
        result = await self.layer.run(script("matchmaking/cancel"), bucket_keys(bucket_id).all(), [ticket_id, ""])
        kind = int(result[0])
        return kind, text(result[1]).partition("|")[0] if kind == PAIRED else ""

    async def park(self, bucket_id: str, ticket_id: str, owner: str, now_ms: int, per_move_ms: int) -> tuple[int, int]:
        """A correspondence search's stream ended without withdrawing it: its ticket stays queued,
        unowned, until its hard expiry (park.lua). (PARKED, the expiry ms), or (PAIRED | UNKNOWN |
        TAKEN_OVER, 0)."""
        result = await self.layer.run(
            script("matchmaking/park"),
            bucket_keys(bucket_id).all(),
            [ticket_id, owner, now_ms, self.keys_ttl_ms(per_move_ms)],
        )
        kind = int(result[0])
        return (kind, int(result[1])) if kind == PARKED else (kind, 0)

    async def cancel(self, bucket_id: str, ticket_id: str, owner: str = "") -> bool:
        """Remove a queued ticket; False when it was already paired or gone, or when `owner` no
        longer holds it (a resent search took it over)."""
        return await self.withdraw(bucket_id, ticket_id, owner) == WITHDRAWN

    async def renew(
        self,
        bucket_id: str,
        tickets: Sequence[str],
        now_ms: int,
        owners: Sequence[str] = (),
        *,
        players: Sequence[str] = (),
        per_move_ms: int = 0,
    ) -> list[TicketStatus]:
        """The tickets' statuses, their leases renewed; with `owners` (each ticket's stream), a
        ticket another search took over since is "taken_over" (its stream ends) and not renewed.
        With `players` (each ticket's player), the block lists of the tickets still queued are read
        again, so a block made while both players wait keeps them apart too (on one Redis in the
        same script; on a cluster, another slot, read first in one round trip)."""
        if not tickets:
            return []
        owners = owners or [""] * len(tickets)
        keys = bucket_keys(bucket_id).all()
        blocks = ""
        if not players:
            named = [f"{t}|{o}" if o else t for t, o in zip(tickets, owners, strict=True)]
        elif self.layer.cluster:
            blocks = "a"
            lists = await self.avoids(players)
            named = [f"{t}|{o}|{','.join(ids)}" for t, o, ids in zip(tickets, owners, lists, strict=True)]
        else:
            blocks = "k"
            named = [f"{t}|{o}" for t, o in zip(tickets, owners, strict=True)]
            keys += [key for _, player_id in zip(tickets, players, strict=True) for key in block_keys(player_id)]
        raw = await self.layer.run(
            script("matchmaking/renew"),
            keys,
            [now_ms, now_ms + self.settings.lease_ms, self.keys_ttl_ms(per_move_ms), blocks, *named],
        )
        out: list[TicketStatus] = []
        for item in raw:
            answer = text(item)
            if answer == "q":
                out.append(TicketStatus("queued"))
            elif answer == "t":
                out.append(TicketStatus("taken_over"))
            elif answer.startswith("m|"):
                _, game_id, seat, started = answer.split("|")
                out.append(TicketStatus("matched", game_id, int(seat), started == "1", started == "f"))
            else:
                out.append(TicketStatus("gone"))
        return out

    def _pairing(self, spec: BucketSpec) -> list[Any]:
        """The pairing rule's arguments (pair.lua's and enqueue.lua's, in this order)."""
        s = self.settings
        return [
            s.base_window,
            repr(s.widen_per_s / 1000.0),
            s.max_window,
            spec.min_seats,
            spec.max_seats,
            int(s.fill_wait_s * 1000),
            int(s.result_ttl_s * 1000),
        ]

    async def pair(self, spec: BucketSpec, now_ms: int) -> list[FormedMatch]:
        raw = await self.layer.run(
            script("matchmaking/pair"),
            bucket_keys(spec.bucket_id).all(),
            [now_ms, *self._pairing(spec), self.keys_ttl_ms(spec.per_move_ms), MAX_MATCHES_PER_PAIRING],
        )
        return list(_formed(raw))

    async def lookup(self, bucket_id: str, game_id: str) -> MatchDetails | None:
        raw = await self.layer.run(script("matchmaking/lookup"), bucket_keys(bucket_id).all(), [game_id])
        if not raw:
            return None
        return MatchDetails(
            game_id=game_id,
            tickets=tuple(text(raw[0]).split(",")),
            players=tuple(_player(p) for p in raw[2:]),
            started=text(raw[1]) == "1",
        )

    async def mark_started(
        self,
        bucket_id: str,
        game_id: str,
        tickets: Sequence[str] = (),
        *,
        refused: bool = False,
        claims: Sequence[tuple[str, str]] = (),
        told: Sequence[str] = (),
    ) -> bool:
        """Mark the match started (or refused); `claims` (claim key, token: one Redis only, other
        slots) are released in the same script first, each if its search still holds it; `told`:
        the tickets whose players the caller tells now (the others stay attachable, told())."""
        keys, args = self.started_call(bucket_id, game_id, tickets, refused=refused, claims=claims, told=told)
        return int(await self.layer.run(script("matchmaking/started"), keys, args)) == 1

    def started_call(
        self,
        bucket_id: str,
        game_id: str,
        tickets: Sequence[str],
        *,
        refused: bool = False,
        claims: Sequence[tuple[str, str]] = (),
        guard: str = "",
        told: Sequence[str] = (),
    ) -> tuple[list[str], list[Any]]:
        """mark_started's keys and arguments; with `guard` (the game's clock key), for a call in
        the same write as the game's start, which does nothing (answers 2) unless the start ran."""
        # The wake-up names the bucket and the match's tickets: only a replica holding one of
        # those tickets' streams needs to look (the one that started it has told its own).
        payload = f"{bucket_id}|{','.join(tickets)}"
        return (
            [*bucket_keys(bucket_id).all(), *([guard] if guard else []), *(key for key, _ in claims)],
            [
                game_id,
                MATCHED_CHANNEL,
                payload,
                "f" if refused else "1",
                "1" if guard else "0",
                ",".join(told),
                *(token for _, token in claims),
            ],
        )

    async def told(self, bucket_id: str, ticket_id: str, claim: tuple[str, str] | None = None) -> None:
        """A search told its player the match of `ticket_id`: their next search here queues afresh
        rather than attaching to it. `claim` (claim key, token; one Redis only: another slot):
        released in the same call if the search still holds it."""
        keys = bucket_keys(bucket_id).all()
        if claim is None:
            await self.layer.run(script("matchmaking/told"), keys, [ticket_id])
        else:
            await self.layer.run(script("matchmaking/told"), [*keys, claim[0]], [ticket_id, claim[1]])
