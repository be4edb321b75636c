"""The player's correspondence searches, for ListMySearches and CancelSearch: a hash per player
(kit/redis/keys.py match_searches_key, beside the claims in {mmp:<player>}) game -> the bucket and
the WaitingSearch as it queued. Written as a correspondence search queues (a real-time search
writes nothing: its stream is its only reader). The claim (claims.py) stays the truth: an entry
counts only while the game's claim names its ticket and its expiry is ahead, so a search paired,
withdrawn or expired anywhere drops out of the list without anyone having to erase it. An entry
whose claim is gone is kept until its expiry (one a game at most): CancelSearch finds a paired
search's bucket through it, to answer its game."""

from __future__ import annotations

from dataclasses import dataclass

from tafel.play.v1 import play_pb2

from gateway.matchmaking.claims import claim_token
from kit.redis.keys import match_claim_key, match_searches_key
from kit.redis.layer import RedisLayer
from kit.redis.replies import pairs, text


@dataclass(frozen=True)
class Noted:
    bucket_id: str
    search: play_pb2.WaitingSearch

    @property
    def expires_ms(self) -> int:
        return int(self.search.expires_at.ToMilliseconds())

    @property
    def token(self) -> str:
        return claim_token(self.bucket_id, self.search.ticket_id)


def _parse(raw: bytes) -> Noted | None:
    bucket_id, sep, body = raw.partition(b"|")
    if not sep:
        return None
    try:
        return Noted(bucket_id.decode(), play_pb2.WaitingSearch.FromString(body))
    except Exception:  # an entry of another version: not listed
        return None


class WaitingSearches:
    def __init__(self, layer: RedisLayer) -> None:
        self.layer = layer

    async def note(self, player_id: str, bucket_id: str, search: play_pb2.WaitingSearch) -> None:
        """Record (or replace) the player's search for `search.game`; the hash lives until the
        latest expiry it holds."""
        key = match_searches_key(player_id)
        ttl_ms = max(1, int(search.expires_at.ToMilliseconds()) - int(search.queued_at.ToMilliseconds()))
        await self.layer.many(
            [
                ("HSET", key, search.game, bucket_id.encode() + b"|" + search.SerializeToString()),
                ("PEXPIRE", key, ttl_ms, "GT"),
                ("PEXPIRE", key, ttl_ms, "NX"),
            ]
        )

    async def get(self, player_id: str, game: str) -> Noted | None:
        raw = await self.layer.call("HGET", match_searches_key(player_id), game)
        return None if raw is None else _parse(raw if isinstance(raw, bytes) else str(raw).encode())

    async def forget(self, player_id: str, game: str, ticket_id: str) -> None:
        """Drop the entry for `game` if it still names `ticket_id` (a newer search's is kept)."""
        noted = await self.get(player_id, game)
        if noted is not None and noted.search.ticket_id == ticket_id:
            await self.layer.call("HDEL", match_searches_key(player_id), game)

    async def waiting(self, player_id: str, now_ms: int) -> list[Noted]:
        """The player's searches still waiting, oldest first (expired entries erased)."""
        key = match_searches_key(player_id)
        entries = pairs(await self.layer.call("HGETALL", key))
        if not entries:
            return []
        games = [text(game) for game in entries]
        claims = await self.layer.many([("GET", match_claim_key(player_id, game)) for game in games])
        kept: list[Noted] = []
        stale: list[str] = []
        for game, claim in zip(games, claims, strict=True):
            noted = _parse(entries[game.encode()])
            if noted is None or noted.expires_ms <= now_ms:
                stale.append(game)
            elif claim is not None and text(claim) == noted.token:
                kept.append(noted)
        if stale:
            await self.layer.call("HDEL", key, *stale)
        kept.sort(key=lambda n: (n.search.queued_at.ToMilliseconds(), n.search.game))
        return kept
