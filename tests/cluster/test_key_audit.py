"""The key inventory (kit/redis/keys.py) is Cluster-safe where it says so: the keys one script
touches together share a hash tag (one slot), and every global key has a decision written in
docs/cluster.md. The end-to-end flows on a real cluster (test_flows_on_cluster.py) catch a script
called with keys of two slots (CROSSSLOT) at the call sites themselves."""

from __future__ import annotations

import re
from pathlib import Path

from redis.crc import key_slot

from kit.redis import keys

DOC = Path(__file__).resolve().parents[2] / "docs" / "cluster.md"


def slots(*names: str) -> set[int]:
    return {key_slot(name.encode()) for name in names}


def test_a_games_keys_share_one_slot() -> None:
    game = "g-7XyZ"
    live = keys.game_keys(game)
    # The rules commit touches state/events and the clock and metadata keys, and
    # arms the deadline in its shard's set; the claim moves it to the shard's claimed set.
    shard = keys.game_shard(game)
    together = (live.state, live.events, keys.clock_key(game), keys.meta_key(game))
    assert len(slots(*together, keys.clocks_key(shard), keys.claimed_key(shard))) == 1
    # The wake-up channel carries the tag too (sharded pub/sub publishes it from the commit).
    assert slots(live.channel) == slots(live.state)
    assert len(slots(*(keys.game_keys(f"g-{i}").state for i in range(50)))) > 40  # games spread out
    # Every shard a slot of its own, so the shards spread over any number of masters.
    assert len(slots(*(keys.clocks_key(k) for k in range(keys.GAME_SHARDS)))) == keys.GAME_SHARDS


def test_entity_keys_share_their_tag() -> None:
    assert len(slots(*keys.room_keys("ABCDE12345"))) == 1
    assert len(slots(keys.account_key("Ada"), keys.failures_key("ADA"), keys.known_sources_key("ada"))) == 1
    assert len(slots(*keys.bucket_keys("connect4:1500").all())) == 1
    pool = [keys.pool_key("connect4", part) for part in ("ratings", "board", "all", "names", "applied:g-1", "best:x")]
    assert len(slots(*pool)) == 1
    # Tournaments: one slot for all of them by design (a script moves one between status lists).
    tournament = [
        keys.tournament_key("t1"),
        keys.tournament_events_key("t2"),
        keys.tournament_list_key(),
        keys.tournament_list_key("running"),
        keys.tournament_request_key("ada", "r1"),
        keys.TOURNAMENTS_DUE,
        keys.TOURNAMENTS_RUNNING,
    ]
    assert len(slots(*tournament)) == 1
    # Every game's bot queue in one slot: a bot pool BLPOPs them all in one command.
    assert len(slots(*(keys.bot_queue_key(game) for game in ("connect4", "plus4", "coloursquare")))) == 1


def test_every_global_key_has_a_decision_in_docs_cluster() -> None:
    """A global key (one key for the whole platform, not one per entity) is one slot: docs/cluster.md
    must say why that scales or how it is sharded. A new one fails here until it does."""
    doc = DOC.read_text()
    documented = set(re.findall(r"`([A-Z_]+)`", doc))
    constants = [name for name, value in vars(keys).items() if name.isupper() and isinstance(value, str)]
    assert constants, "kit/redis/keys.py names no global keys?"
    missing = [name for name in constants if name not in documented]
    assert not missing, f"docs/cluster.md has no decision for: {', '.join(missing)}"
    # Keys without an entity's hash tag, made by a function (per game type, per player).
    functions = ("live_key", "player_games_key", "records_index_key", "ratings_source_key", "source_failures_key")
    assert not [name for name in functions if f"`{name}" not in doc]
