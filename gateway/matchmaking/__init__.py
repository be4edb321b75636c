"""Matchmaking: queues in Redis, paired by one atomic Lua script, so any number of gateway
replicas take tickets and none is ever paired twice.

A *bucket* is everything two tickets must agree on: the game, its options (canonical bytes, every
default filled in), the time control and the table size range. Each bucket's keys share one hash
tag (``{mm:<bucket id>}``), so every script touches one slot and runs unchanged on Redis Cluster
(kit/redis/keys.py bucket_keys; the scripts are kit/redis/lua/matchmaking/*.lua):

- ``q``  zset  ticket -> rating
- ``t``  hash  ticket -> ``<enqueued ms>|<hard expiry ms>|<player id>``
- ``l``  zset  ticket -> lease expiry ms (renewed while the ticket's stream is alive)
- ``p``  hash  ticket -> Player bytes (kept after pairing, for MatchFound)
- ``w``  hash  player id -> its queued ticket (one ticket per player per bucket), or its paired
  ticket until a search of theirs told them the match (their next search attaches to it)
- ``r``  hash  ticket -> ``<game id>|<seat>`` once paired
- ``m``  hash  game id -> the match's tickets in seat order; ``<game id>|s`` -> 1 once started
- ``gc`` zset  game id -> when its result entries are dropped
- ``k``  hash  ``k|<player id>|<request id>`` -> the ticket of a search sent with a request id;
  ``r|<ticket>`` -> that key; ``o|<ticket>`` -> the stream that holds the ticket now (its owner);
  ``p|<ticket>`` -> the player of a paired ticket still in ``w`` (to drop it with the result);
  ``a|<ticket>`` -> ``,<id>,<id>,`` the players it must never sit with (blocks, either way round),
  ``a#`` -> how many tickets have such a list

Pairing (lua/matchmaking/pairing.lua: run by the bucket worker's pass, pair.lua, on every tick, and
by a new ticket's own enqueue.lua, in the round trip that queues it) takes the queue oldest ticket
first; each ticket's rating window is ``base + widen * waited`` (capped), and two tickets fit when
their distance is within the larger of their two windows (a long wait widens what the waiting
ticket accepts, so nobody starves) and neither player blocks the other. The oldest ticket's table
is filled with the nearest fitting ratings; a table forms when full, or at its minimum once its
oldest ticket has waited ``fill_wait``. The script removes the paired tickets, records each one's
game id and seat, and names the game after the oldest ticket (``m-<ticket>``), so the game id is
fixed before any game is created: a crash or a retry can only create that one game, because
``GameDirectory.start_game`` is idempotent for a given game id.

The gateway that formed a match starts the game and then marks the match started, publishing a
wake-up; the waiting streams (on whichever replica) learn their game id and seat from the wake-up
or, if it is lost, from their next lease renewal (every tick). If the forming gateway dies before
starting the game, a waiting stream starts it itself after a grace period (same game id).

Blocks: the bucket's scripts cannot read a player's block lists on a cluster (their
own slot, ``{p:<id>}``), so a search reads whom its player blocks and who blocks them as it queues
(on one Redis the enqueue script reads them) and the ticket keeps that list, cut to the players
queued in the bucket then (one who queues later brings a list naming this one); pairing never seats
two tickets at one table when either's list names the other. The renewal reads the lists again
every ``update_s``, so a block made while both wait holds from then on (MatchQueue.renew's
``players``).

Tickets carry a short lease renewed by their stream's gateway: a crashed gateway's tickets vanish
within the lease, and every ticket has a hard expiry. Cancelling the call removes the ticket, but
for a correspondence search (a day or more a move), which outlives its stream: a stream ending
without StopFinding parks its ticket until its hard expiry, a week (lua/matchmaking/park.lua,
matchmaker.py's docstring); CancelSearch withdraws it and searches.py lists it.

A search may carry a request id (FindMatchRequest.request_id). Sent again with the same id — the
SDK does so after a lost connection, through whichever gateway it reaches — it takes over the
ticket still queued for it (or learns the match it was paired into) instead of being refused
ALREADY_QUEUED while the dead stream's ticket waits out its lease and may be paired without its
player. The take-over names a new owner, and a withdrawal by the old owner (its gateway noticing
the lost stream late) is ignored. Any search of the player in the bucket takes over the same way,
without a request id too; the older stream, on any gateway, learns it on its next
renewal and ends SEARCH_TAKEN_OVER. A ticket paired before its player was told (their gateway
died between the pairing and the answer) stays theirs in ``w`` until a stream of theirs tells them
(lua/matchmaking/told.lua, or started.lua for the seats waiting on the starting gateway), so
their next search is answered with that match while its result is kept.

One search per player per *game*: a second search for the same game in another bucket (another
clock, other options, another table size) is refused ALREADY_QUEUED while the first waits, on any
gateway; one for another game is not. The claim behind it is a key of its own per player and game
(``tafel:{mmp:<player>}:<game>``), taken before the bucket's script and leased like the ticket;
claims.py says why that order is safe when a gateway dies.

The files, model to service (the settings, MatchmakingSettings, are in gateway/settings.py):

- model.py           BucketSpec, what the scripts answer (Taken, TicketStatus, FormedMatch, ...)
- ports.py           what matchmaking calls on the rest of the gateway (GameStarter, RatingSource)
- ratings_source.py  HashRatings, ratings from a hash when no rating book is wired
- queue.py           MatchQueue: one bucket's scripts, one method each
- claims.py          SearchClaims: one search per player per game
- searches.py        WaitingSearches: the player's correspondence searches (ListMySearches)
- matchmaker.py      Matchmaker: the waiting streams, the per-bucket workers, starting the games
"""
