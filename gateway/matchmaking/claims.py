"""One search per player per game: a claim key per player and game (kit/redis/keys.py
match_claim_key, its own hash tag {mmp:<player>}) naming the bucket and ticket of the search.

The claim lives in another slot than the bucket, and a script may touch one slot only (Redis
Cluster), so it is taken *before* the bucket's enqueue script runs and is a lease like the ticket:

1. claim (SET if free, or already ours) with a TTL of the ticket lease; another bucket's claim
   held -> refused ALREADY_QUEUED before anything is written to this bucket;
2. enqueue in the bucket (whose script still decides a resent search's take-over, and one ticket
   per player per bucket);
3. point the claim at the ticket the bucket answered (a resumed or prior ticket), by compare-and-set.

The waiting stream's gateway extends the claim with the ticket's lease on every renewal (only if
it still holds it), and releases it (compare-and-delete) when the search ends: paired (the
gateway that formed the match releases its players' claims before creating the game), expired,
refused or withdrawn, but not when a resent search took the ticket over (that search holds the
same claim now). A crash anywhere leaves at most a claim that runs out with the lease, exactly as
the crashed gateway's ticket does: the player is never blocked longer than their ticket would
have been queued, and a claim never names a ticket that outlives it unrenewed.

On one Redis (which checks no slots) steps 1-3 are one script instead (lua/matchmaking/
claim_enqueue.lua, MatchQueue.take's `claim`): atomic, so their order is moot, and two round
trips fewer a search; and a started match's claims are released in the script that marks it
started (lua/matchmaking/started.lua), before anyone learns the match.
"""

from __future__ import annotations

from kit.redis.keys import match_claim_key
from kit.redis.layer import RedisLayer
from kit.redis.replies import text
from kit.redis.scripts import script


def claim_token(bucket_id: str, ticket_id: str) -> str:
    return f"{bucket_id}|{ticket_id}"


class SearchClaims:
    def __init__(self, layer: RedisLayer, lease_ms: int) -> None:
        self.layer = layer
        self.lease_ms = lease_ms

    @staticmethod
    def key(player_id: str, game: str) -> str:
        return match_claim_key(player_id, game)

    async def claim(self, player_id: str, game: str, token: str, *, replacing: str = "") -> str | None:
        """Make the player's search for `game` the one of `token` (free, already `token`'s, or
        `replacing`'s); None when done, else the token of the search that holds it."""
        result = await self.layer.run(
            script("matchmaking/claim"), [match_claim_key(player_id, game)], [token, replacing, self.lease_ms]
        )
        return None if int(result[0]) == 1 else text(result[1])

    async def refresh(self, player_id: str, game: str, token: str, ttl_ms: int | None = None) -> None:
        """Extend the claim by the lease (or `ttl_ms`: a parked correspondence search's, to its expiry)."""
        ttl = self.lease_ms if ttl_ms is None else ttl_ms
        await self.layer.run(script("matchmaking/refresh"), [match_claim_key(player_id, game)], [token, ttl])

    async def release(self, player_id: str, game: str, token: str) -> None:
        await self.layer.run(script("leases/release"), [match_claim_key(player_id, game)], [token])
