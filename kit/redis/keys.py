"""Every Redis key and channel of the platform, grouped by the module that owns it (writes it).

Only the owner writes a key; others may read what its section says they read. Keys of one room,
account, bucket or pool share a hash tag (`{room:C}`, `{u:name}`, `{mm:B}`, `{r:pool}`); a game's live
keys share its shard's (`{gs:k}`, with that shard's clock sets, see "Game shards"), so every script
touches one slot (a Redis Cluster's rule for scripts). The global sets at the end of each section are one key
each; docs/cluster.md says why each scales as it is.

What each key holds is documented next to its function; the scripts that write them are in
kit/redis/lua/<owner>/ (one file a script, arguments in its header).
"""

from __future__ import annotations

import hashlib
import zlib
from dataclasses import dataclass

# ---------------------------------------------------------------------------------------------
# The layout's version. Owner: kit/redis/migrations (run by `python -m tools.migrate`); every server
# reads it once at start and refuses a layout it does not read (docs/migrations.md). One tag for
# both, so a step's last script checks the lock and moves the version in one slot.

SCHEMA_VERSION = "tafel:{schema}:version"  # string: the layout version of every tafel key here
SCHEMA_LOCK = "tafel:{schema}:lock"  # string: the running migration's lease (a random token)


# ---------------------------------------------------------------------------------------------
# Game shards. A turn clock is armed in the same script as the move (rules/commit) and must land in
# a set the sweepers scan: on a Cluster both must be in one slot. So games live in GAME_SHARDS
# shards, and every live key of a game that a clock script touches (state, events, clock,
# meta; the wake-up channel too, for sharded pub/sub) carries its shard's hash tag
# `{gs:k}`, beside that shard's own clock sets (clocks_key / claimed_key). 256 shards spread over any
# number of masters up to a few dozen, and resharding moves whole shards; a sweep is one script per
# shard on a cluster, one script for all of them on a single Redis (docs/cluster.md). Keys that
# outlive a game and are never in a clock script (record_key, rated_hint_key) keep `{g:ID}`.
# Changing GAME_SHARDS or game_shard() loses every live game (their keys are not found): never.

GAME_SHARDS = 256


def game_shard(game_id: str) -> int:
    """The game's shard: crc32 (stable across processes and versions, unlike hash())."""
    return zlib.crc32(game_id.encode()) % GAME_SHARDS


def shard_tag(shard: int) -> str:
    return f"{{gs:{shard}}}"


def game_prefix(game_id: str) -> str:
    """`tafel:{gs:k}:g:<id>`, the start of every live key of the game."""
    return f"tafel:{shard_tag(game_shard(game_id))}:g:{game_id}"


# ---------------------------------------------------------------------------------------------
# A game's live keys. Owner: the rules service's GameStore (services/host/store.py, scripts in
# lua/rules/); the gateway reads the state, the event stream and the action list through
# kit/redis/game_reads.py, never writes them. All expire (live TTL, a shorter one once over).


@dataclass(frozen=True)
class GameKeys:
    # hash: v version, s state bytes, g game, n seats, o GameOptions bytes, l last event id,
    # c the creating request id, f 1 when over, w the version the commuting window began at ("": none),
    # q 1 (every game of layout 1), z the game's seed (what a takeback replays from: services/host/replay.py),
    # "r:<request id>" -> the request's first answer (response bytes),
    # "r:<request id>#" -> the digest of the request it answered (a reused id with another request
    # is refused; ":" and "#" never occur in an id, so these never meet the one-letter fields)
    state: str
    # stream: e a GameEvent, t the GameStatus after that event's move, a (on a move's first entry)
    # its RecordedAction, the game's record; a move without events has an entry <version>-0 with
    # only a. Ids <version>-<index>
    events: str
    channel: str  # pub/sub: a GameEventBatch per committed action that caused events


def game_keys(game_id: str) -> GameKeys:
    prefix = game_prefix(game_id)
    return GameKeys(
        state=f"{prefix}:state",
        events=f"{prefix}:events",
        channel=f"{prefix}:wake",
    )


# ---------------------------------------------------------------------------------------------
# Turn clocks. Owner: gateway/clocks.py. The rules commit (lua/rules/commit.lua) arms them in the
# same script as the move (one round trip a move) through the one function that writes them,
# lua/clocks/arm_function.lua, which both clocks/arm and rules/commit include. Both scripts also
# refresh the game's meta_key (below) with the clock's TTL; no script refreshes any other key.
# The deadline sets are per game shard (above): a game's clock goes into clocks_key(game_shard(id)).


def clocks_key(shard: int) -> str:
    """zset: member "<game id>|<version>|<seats>", score the deadline (ms); the shard's games."""
    return f"tafel:{shard_tag(shard)}:clocks"


def claimed_key(shard: int) -> str:
    """zset: the shard's members being handled, score the claim's lease end (ms)."""
    return f"tafel:{shard_tag(shard)}:clocks:claimed"


def clock_key(game_id: str) -> str:
    """hash: v the version the deadline belongs to, d the deadline (ms since the epoch); b
    "<version>|<ms>" the deadline that version was armed with, once a vacation moved d (written by
    clocks/extend only)."""
    return f"{game_prefix(game_id)}:clock"


# Correspondence warnings. Owner: gateway/correspondence.py (ZADD/ZREM; claimed with clocks/claim,
# as the deadlines are): "time running out" 24 h and 1 h before a correspondence turn deadline, in
# sets beside the shard's deadlines and swept like them.


def warnings_key(shard: int) -> str:
    """zset: member "<game id>|<version>|<seat>|<hours>", score when to warn (ms)."""
    return f"tafel:{shard_tag(shard)}:warnings"


def warnings_claimed_key(shard: int) -> str:
    """zset: the shard's warnings being sent, score the claim's lease end (ms)."""
    return f"tafel:{shard_tag(shard)}:warnings:claimed"


# ---------------------------------------------------------------------------------------------
# Games the gateway started. Owner: gateway/games.py.

GAMES_LIVE = "tafel:games:live"  # zset: running games by creation time (per game: live_key(game))


def meta_key(game_id: str) -> str:
    """hash: g game type, p players per seat (JSON), o options, t per-move ms, r rated, src origin,
    c created (ms). Written once; its TTL follows the clock's (clocks/arm, rules/commit refresh it),
    so it is in the game's shard."""
    return f"{game_prefix(game_id)}:meta"


def meta_pattern(game_glob: str = "*") -> str:
    """A SCAN/KEYS pattern for the metadata keys of games whose id matches `game_glob` (any shard)."""
    return f"tafel:{{gs:*}}:g:{game_glob}:meta"


def game_of_meta_key(key: str) -> str:
    """The game id in a meta_key (ids never hold ':')."""
    return key.rsplit(":g:", 1)[1].removesuffix(":meta")


def live_key(game: str | None = None) -> str:
    return f"{GAMES_LIVE}:{game}" if game else GAMES_LIVE


def player_games_key(player_id: str, phase: str) -> str:
    """zset: a player's games by creation time; phase "live" or "done"."""
    return f"tafel:player:{player_id}:{phase}"


# ---------------------------------------------------------------------------------------------
# Finished games' records. Owner: gateway/records.py.

RECORDS = "tafel:records"  # zset: every record by end time; per player/game: records_index_key


def record_key(game_id: str) -> str:
    """string: a GameRecord (SET NX: the first write stands). Outlives the game and is in no
    script: it keeps the name it had before game shards, so existing data folders' records stay."""
    return f"tafel:record:{{g:{game_id}}}"


def records_index_key(player_id: str = "", game: str = "") -> str:
    key = RECORDS
    if player_id:
        key += f":p:{player_id}"
    if game:
        key += f":g:{game}"
    return key


# ---------------------------------------------------------------------------------------------
# Accounts and sign-in throttling. Owner: gateway/auth.py.


def account_key(username: str) -> str:
    """hash: the account of a (case-insensitive) user name."""
    return f"tafel:{{u:{username.lower()}}}:account"


def failures_key(username: str) -> str:
    return f"tafel:{{u:{username.lower()}}}:fails"


def known_sources_key(username: str) -> str:
    return f"tafel:{{u:{username.lower()}}}:known"


def source_failures_key(source_id: str) -> str:
    """Failures from one source; `source_id` is already hashed (no addresses in clear)."""
    return f"tafel:{{src:{source_id}}}:fails"


# ---------------------------------------------------------------------------------------------
# Sessions. Owner: gateway/sessions.py.

REVOKED_SESSIONS = "tafel:sessions:revoked"  # hash: session id -> when it can be forgotten (s)
SIGNED_OUT_PLAYERS = "tafel:sessions:signed-out"  # hash: player id -> revoke tokens issued before (ms)
SESSIONS_CHANNEL = "tafel:sessions:revocations"  # pub/sub: a revocation, for every replica's cache


# ---------------------------------------------------------------------------------------------
# Private rooms. Owner: gateway/rooms.py.

ROOMS_CHANNEL = "tafel:lobby:rooms"  # pub/sub: a room changed (payload: its code)


def room_keys(code: str) -> list[str]:
    """[hash: the room, list: seated player ids in seat order, hash: player id -> Player bytes]."""
    tag = f"tafel:{{room:{code}}}"
    return [tag, f"{tag}:seats", f"{tag}:who"]


# ---------------------------------------------------------------------------------------------
# Matchmaking. Owner: gateway/matchmaking. A bucket's keys share {mm:<bucket>}; a player's claims
# (one search per game) share {mmp:<player>}: taken before the bucket's script, never in it.

MATCHED_CHANNEL = "tafel:lobby:matched"  # pub/sub: tickets paired (payload names them)


def match_claim_key(player_id: str, game: str) -> str:
    """string: "<bucket id>|<ticket id>", the player's one search for this game (TTL: the lease)."""
    return f"tafel:{{mmp:{player_id}}}:{game}"


def match_searches_key(player_id: str) -> str:
    """hash: game -> "<bucket id>|" + WaitingSearch bytes, the player's correspondence searches
    (ListMySearches; an entry counts while the game's claim still names its ticket). Beside the
    claims, in {mmp:<player>} ("~" is in no game's name)."""
    return f"tafel:{{mmp:{player_id}}}:~searches"


def ratings_source_key(game: str) -> str:
    """hash: player id -> rating, what the matchmaker pairs by (written by the rating book)."""
    return f"tafel:ratings:{game}"


@dataclass(frozen=True)
class BucketKeys:
    queue: str
    tickets: str
    leases: str
    players: str
    owners: str
    results: str
    matches: str
    gc: str
    requests: str

    def all(self) -> list[str]:
        return [
            self.queue,
            self.tickets,
            self.leases,
            self.players,
            self.owners,
            self.results,
            self.matches,
            self.gc,
            self.requests,
        ]


def bucket_keys(bucket_id: str) -> BucketKeys:
    tag = f"tafel:{{mm:{bucket_id}}}"
    return BucketKeys(
        queue=f"{tag}:q",
        tickets=f"{tag}:t",
        leases=f"{tag}:l",
        players=f"{tag}:p",
        owners=f"{tag}:w",
        results=f"{tag}:r",
        matches=f"{tag}:m",
        gc=f"{tag}:gc",
        requests=f"{tag}:k",
    )


# ---------------------------------------------------------------------------------------------
# Ratings and leaderboards. Owner: gateway/ratings.

RATINGS_SWEEP_LOCK = "tafel:ratings:sweep:lock"  # string: the sweeper's lease (one replica at a time)
RATINGS_SWEEP_CURSOR = "tafel:ratings:sweep:cursor"  # string: end time the sweep has reached (ms)


def pool_key(pool: str, part: str) -> str:
    """A rating pool's keys (gateway/ratings/book.py): ratings (hash), board / all (zsets), names
    (hash), applied:<game id>, history:<player id> (list: the player's rating after each rated game,
    the latest 100); a game's personal-best boards (bests.py) under their own name:
    best:<board> (zset), bestgame:<board> (hash), names. Pool and board names come from the games'
    DescribeGame answers."""
    return f"tafel:{{r:{pool}}}:{part}"


def rated_hint_key(game_id: str) -> str:
    """string: set once a game's record has been applied to the ratings (plain SET/EXISTS, no
    script: the name it had before game shards)."""
    return f"tafel:{{g:{game_id}}}:rated"


# ---------------------------------------------------------------------------------------------
# Tournaments. Owner: gateway/tournaments/store.py. One hash tag for all of them: a tournament's
# scripts move it between the status lists atomically.

TOURNAMENTS = "tafel:{tour}"
TOURNAMENTS_DUE = f"{TOURNAMENTS}:due"  # zset: registering tournaments by start time
TOURNAMENTS_RUNNING = f"{TOURNAMENTS}:running"  # set: running tournament ids


def tournament_key(tid: str, part: str = "") -> str:
    """hash: spec, status, ... ; with a part: its events stream, players, ..."""
    return f"{TOURNAMENTS}:t:{tid}" + (f":{part}" if part else "")


def tournament_events_key(tid: str) -> str:
    return tournament_key(tid, "events")


def tournament_list_key(status: str = "all") -> str:
    """zset by creation time: every tournament ("all") or those of one status."""
    return f"{TOURNAMENTS}:list:{status}"


def request_digest(player_id: str, request_id: str) -> str:
    """A player's request id as a key names it: hashed, so no key name holds a player id (an
    erased account leaves none behind; these keys expire on their own a day later)."""
    return hashlib.sha256(f"{player_id}:{request_id}".encode()).hexdigest()[:32]


def tournament_request_key(organiser: str, request_id: str) -> str:
    """string: the id a CreateTournament request made (kept a day, for retries)."""
    return f"{TOURNAMENTS}:req:{request_digest(organiser, request_id)}"


# ---------------------------------------------------------------------------------------------
# Bot requests. Owner: gateway/bot_requests.py.


def bot_queue_key(game: str) -> str:
    """list: bot requests waiting for a bot pool, per game. One hash tag for every game's queue: a
    bot pool BLPOPs the queues of all the games it plays in one command (one slot on a cluster)."""
    return f"tafel:{{bots}}:requests:{game}"


# zset: requests handed to a bot pool, scored by their lease's end (removed when the bot joins or
# the sweeper decides on them). The {bots} tag: taken from a queue into it in one script.
BOTS_IN_FLIGHT = "tafel:{bots}:inflight"


def bot_pending_key(room_code: str) -> str:
    """hash: request id -> entry, a room's requests whose bot has not taken its seat yet (a repeat
    request is answered with one of them; the sweeper counts them against the empty seats)."""
    return f"tafel:{{bots}}:room:{room_code}"


def bot_signal_key(game: str) -> str:
    """list: wake-ups for the game's bot pools (one per request queued); a pool BLPOPs them, then
    takes the request itself with lua/bots/take.lua. A lost wake-up only delays: pools poll."""
    return f"tafel:{{bots}}:signal:{game}"


# ---------------------------------------------------------------------------------------------
# Standing: roles, sanctions, blocks, mutes, warnings, reports and the audit log. Owner:
# gateway/standing (the store; `tafel-admin grant` writes roles through it too). Roles and sanctions
# in force are small tables every gateway keeps in memory (loaded, then kept by STANDING_CHANNEL);
# what belongs to one player is under its id's tag {p:<id>}, reports under {reports}, the audit log
# under {audit}. Names stored beside ids are the names at the time (a rename rewrites them).

STAFF_ROLES = "tafel:{staff}:roles"  # hash: player id -> "<role>|<username>" (staff only)
SANCTIONS = "tafel:{staff}:sanctions"  # hash: player id -> JSON list of the sanctions in force
STANDING_CHANNEL = "tafel:standing"  # pub/sub: "<player id>": its role or sanctions changed


def player_key(player_id: str, part: str) -> str:
    """A player's own data: blocks (hash: blocked id -> name), blocked-by (set of ids that block
        this player: pairing reads both sides), mutes (hash: id -> name), muted-by (set of ids: an erased or
    renamed account's entry in others' mute lists is found through it), warnings (list: JSON, newest
        first), sanctions (list: JSON, every sanction ever, newest first), reports-made and
        reports-about (zsets of report ids by time)."""
    return f"tafel:{{p:{player_id}}}:{part}"


# Vacations. Owner: gateway/vacation (scripts lua/vacation/). Under the player's {p:<id>} tag.


def vacation_key(player_id: str) -> str:
    """hash: s the vacation in progress's start (ms; absent: none), e its end (ms), y the UTC year
    whose allowance `u` (ms used, whole hours) counts."""
    return player_key(player_id, "vacation")


def vacation_log_key(player_id: str) -> str:
    """zset: the player's vacations of the last year and a half, member "<start ms>|<end ms>" (the
    one in progress with its planned end), score the start: the time each clock stood still."""
    return player_key(player_id, "vacation-log")


REPORTS = "tafel:{reports}"
REPORTS_OPEN = f"{REPORTS}:open"  # zset: open report ids by filing time (ms)
REPORTS_ALL = f"{REPORTS}:all"  # zset: every report id by filing time (ms)


def report_key(report_id: str) -> str:
    """string: the Report (protobuf bytes), rewritten when resolved or when a party is erased."""
    return f"{REPORTS}:r:{report_id}"


def report_request_key(player_id: str, request_id: str) -> str:
    """string: the report id a Report request made (kept a day, for retries)."""
    return f"{REPORTS}:req:{request_digest(player_id, request_id)}"


# stream: the audit log (append only: no API edits or trims it). Entries name players by their
# audit alias (AUDIT_NAMES), so erasing an account leaves entries that point at no one.
AUDIT_LOG = "tafel:{audit}:log"
AUDIT_NAMES = "tafel:{audit}:names"  # hash: alias -> JSON {"id", "name"}; erased with the account


# ---------------------------------------------------------------------------------------------
# The account event stream. Owner: gateway/events. Per player, under its {p:<id>} tag: a stream
# of AccountEvents (player_key(id, "events"): field e, the event's bytes; ~1,000 kept, a day) and
# its wake-up channel (player_key(id, "wake"), pub/sub: an event was added).


# ---------------------------------------------------------------------------------------------
# Challenges. Owner: gateway/challenges. A challenge's hash under {ch:<id>}; the lists by player
# under {p:<id>} (player_key(id, "challenges"): zset of pending challenge ids by expiry); the open
# ones and the expiry sweep in one global zset each.

CHALLENGES_OPEN = "tafel:{challenges}:open"  # zset: open challenge ids by creation time (ms)
CHALLENGES_DUE = "tafel:{challenges}:due"  # zset: pending challenge ids by expiry (ms), for the sweep


def challenge_key(challenge_id: str) -> str:
    """hash: s the status ("pending", "starting", "accepted", ...), p the Challenge (protobuf bytes);
    kept a day after it is settled."""
    return f"tafel:{{ch:{challenge_id}}}"


def challenge_request_key(player_id: str, request_id: str) -> str:
    """string: the challenge id a CreateChallenge request made (kept a day, for retries)."""
    return f"tafel:{{challenges}}:req:{request_digest(player_id, request_id)}"


def challenge_pair_key(first: str, second: str) -> str:
    """string: the pending challenge between two players, either way (ids sorted)."""
    low, high = sorted((first, second))
    return f"tafel:{{challenges}}:pair:{request_digest(low, high)}"


# ---------------------------------------------------------------------------------------------
# Offers in a game. Owner: gateway/offers. Beside the game's record, outliving the live game for
# rematches: a hash per game under {g:<id>} (kind -> the pending Offer's bytes) and the list of
# every offer made (for the record).


def offers_key(game_id: str) -> str:
    """hash: offer kind name -> the Offer (protobuf bytes), the pending or last one of each kind."""
    return f"tafel:{{g:{game_id}}}:offers"


def offers_request_key(game_id: str, player_id: str, request_id: str) -> str:
    """string: the Offer a MakeOffer request made (kept a day, for retries)."""
    return f"tafel:{{g:{game_id}}}:offers:req:{request_digest(player_id, request_id)}"


def offers_log_key(game_id: str) -> str:
    """list: every Offer as it was settled (protobuf bytes), in order: the record's offers."""
    return f"tafel:{{g:{game_id}}}:offers:log"


# ---------------------------------------------------------------------------------------------
# Chat. Owner: gateway/chat. One stream per channel (field m: the ChatMessage's bytes, author and
# text; its id is the entry id, its time the id's milliseconds), at most CHAT_KEEP lines (MAXLEN),
# in the slot of what it belongs to, so it lives as long: a game's beside its record ({g:<id>},
# expiring with the record's TTL), a room's beside the room ({room:<code>}, the room's expiry), a
# tournament's under {tour} (kept as the tournament is). Beside each: its wake-up channel (pub/sub,
# sharded on a Redis 7 cluster: the entry's id) and the request ids it answered (hash i: the
# line's id; a day). Per player under {p:<id>}: the rate window, the channels written in, and a
# wake-up channel published by gateway/standing when the player's block or mute list changes (chat watches re-read it).

CHAT_KEEP = 500


def chat_key(kind: str, owner_id: str) -> str:
    """stream: a channel's lines; kind "players" / "spectators" (owner: a game id), "room" (a room
    code) or "tournament" (a tournament id)."""
    if kind in ("players", "spectators"):
        return f"tafel:{{g:{owner_id}}}:chat:{kind}"
    if kind == "room":
        return f"tafel:{{room:{owner_id}}}:chat"
    if kind == "tournament":
        return tournament_key(owner_id, "chat")
    raise ValueError(f"no chat channel kind {kind}")


def chat_wake_channel(lines_key: str) -> str:
    """pub/sub: a line was added to the channel (payload: its id)."""
    return f"{lines_key}:wake"


def chat_request_key(lines_key: str, player_id: str, request_id: str) -> str:
    """hash: i the message id a SendChatMessage request made (a day, for retries; the line is read
    back from the channel, so no name is kept here)."""
    return f"{lines_key}:req:{request_digest(player_id, request_id)}"


def chat_rate_key(player_id: str) -> str:
    """zset: the player's chat lines of the last window (member: a request digest, score: ms)."""
    return player_key(player_id, "chat-rate")


def chat_written_key(player_id: str) -> str:
    """set: the chat streams the player wrote in (kept as long as a game's record): an erased or
    renamed account's name is replaced in exactly those lines."""
    return player_key(player_id, "chat-written")


def avoid_channel(player_id: str) -> str:
    """pub/sub: the player's block or mute list or chat switch changed (chat watches of theirs re-read
    them)."""
    return player_key(player_id, "avoid-changed")


# ---------------------------------------------------------------------------------------------
# People: following, presence, settings. Owner: gateway/people. Under the player's {p:<id>} tag:
# player_key(id, "settings") is a hash of the player's own settings — "chat" ("0" = chat off;
# absent = on; gateway/chat reads it) and "challenges" (the ChallengePolicy number; absent =
# everyone; gateway/challenges reads it).


def settings_key(player_id: str) -> str:
    return player_key(player_id, "settings")


def following_key(player_id: str) -> str:
    """hash: followed player id -> "<followed at ms>|<username at the time>" (a rename rewrites it,
    found through the followed one's followers_key). At most 1,000 fields (people/follow)."""
    return player_key(player_id, "following")


def followers_key(player_id: str) -> str:
    """zset: follower ids by when they followed. A follow writes following_key first and this
    second (two slots on a cluster), an unfollow the other way round, so a follower here always
    follows (events and counts never go to someone who does not); a retry completes either."""
    return player_key(player_id, "followers")


def presence_key(player_id: str) -> str:
    """hash: the player's presence (people/presence): c:<gateway> -> that gateway's lease end
    (ms), g:<game id> -> "<started ms>|<game>|<watchable 0/1>" for each running game they sit in,
    s the state last told to followers ("<state>|<game id>|<game>|<watchable>"), seen the last
    time connected (ms), u / dn the username and display name to tell followers."""
    return player_key(player_id, "presence")


# zset: "<gateway id>|<player id>" by the end of the gateway's lease on that player's presence
# (ms). Each gateway renews its own in one ZADD; the sweep (any gateway) turns players of a
# gateway that stopped renewing (killed) offline. One key: a renewal is one command.
PRESENCE_LEASES = "tafel:{presence}:leases"


# ---------------------------------------------------------------------------------------------
# Notices: the inbox of each account and how notices reach it. Owner: gateway/notices (scripts in
# lua/notices/). Under the player's {p:<id>} tag, beside the account's event stream, so a notice and
# its AccountEvent are written by one script in one slot (Redis Cluster too).


def inbox_key(player_id: str) -> str:
    """hash: notification id -> the Notification (protobuf bytes, `read` unset: the zsets say)."""
    return player_key(player_id, "inbox")


def inbox_order_key(player_id: str) -> str:
    """zset: every kept notification id by its place (an increasing number per account)."""
    return player_key(player_id, "inbox-order")


def inbox_unread_key(player_id: str) -> str:
    """zset: the unread notification ids by their place (ZCARD: the badge)."""
    return player_key(player_id, "inbox-unread")


def inbox_read_key(player_id: str) -> str:
    """zset: the read notification ids by their place (the cap drops the oldest of these first)."""
    return player_key(player_id, "inbox-read")


def inbox_seen_key(player_id: str) -> str:
    """zset: every notification id stored lately (ms): a notice cleared or dropped by the cap is not
    made again by a late retry of its producer (30 days, at most 5,000 ids)."""
    return player_key(player_id, "inbox-seen")


def inbox_seq_key(player_id: str) -> str:
    """string: the last place given to a notice (INCR)."""
    return player_key(player_id, "inbox-seq")


def inbox_named_key(player_id: str) -> str:
    """set: accounts whose inbox holds a notice naming this player (the challenger, the opponent,
    the director): an erased account's name is replaced in exactly those."""
    return player_key(player_id, "inbox-named")


def inbox_mentions_key(player_id: str) -> str:
    """set: the players named in this account's notices: its erasure takes it out of their
    inbox_named_key (and their event contacts)."""
    return player_key(player_id, "inbox-mentions")


def notice_settings_key(player_id: str) -> str:
    """string: the player's NotificationSettings (protobuf bytes, every kind listed) once changed;
    absent = the defaults (gateway/notices/settings.py)."""
    return player_key(player_id, "notice-settings")


# ---------------------------------------------------------------------------------------------
# E-mail. Owner: gateway/mail (scripts in lua/mail/). The address under the player's {p:<id>} tag
# (player_key(id, "email"): a hash — a the confirmed address, p a pending one, l the mails' language,
# u the username (for the confirming page), ct/ce the live confirmation token's SHA-256 and expiry
# (ms), cd the digest of the token that confirmed the address (a second click answers the same), n
# the nonce the unsubscribe links of the confirmed address are signed with (what an unsubscribe
# turns off is in the notice settings); player_key(id, "email-rate"): a zset of the confirmation
# mails of the last hour). The outbox under {mail},
# one slot: a mail is queued, claimed and settled by one script each.

MAIL = "tafel:{mail}"
MAIL_DUE = f"{MAIL}:due"  # zset: queued mail ids by when they may go (ms)
MAIL_CLAIMED = f"{MAIL}:claimed"  # zset: mail ids being sent, by the end of the sender's lease (ms)
MAIL_DIGESTS = f"{MAIL}:digests"  # zset: player ids with a confirmed address, by their next digest look (ms)


def mail_key(mail_id: str) -> str:
    """hash: a queued mail — p the player, to, subject, text, unsub (the List-Unsubscribe URL),
    tries. Deleted once sent (or given up); the ids are digests, never a player's id."""
    return f"{MAIL}:m:{mail_id}"


def mail_sent_key(mail_id: str) -> str:
    """string: the mail went (or was given up), so the same id is never queued again (8 days)."""
    return f"{MAIL}:sent:{mail_id}"


def email_key(player_id: str) -> str:
    """hash: the account's address (above)."""
    return player_key(player_id, "email")


def email_rate_key(player_id: str) -> str:
    """zset: the account's confirmation mails of the last hour (member: the token's digest)."""
    return player_key(player_id, "email-rate")


def mail_player_key(player_id: str) -> str:
    """set: the player's queued mail ids (erasure drops their mails)."""
    return f"{MAIL}:p:{player_id}"
