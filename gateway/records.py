"""Finished games' records: players, options, every applied action, result and timestamps.

Written when a game ends (seen on the apply path or by the clock), from the game's metadata and its
action list (read with kit/redis/game_reads.py: the list is the rules service's), so it outlives the
live keys, which expire. Keys (kit/redis/keys.py, "Finished games' records"; this module owns them):

- ``record_key(game)`` a GameRecord (SET NX: when two replicas see the same end, the first
  write stands and the second changes nothing);
- ``records_index_key(player, game)``: every record, per game, per player and per player and game,
  sorted sets by end time, for listing newest first.

Hooks (``Records.hooks``): what hangs off the end of a game (ratings, tournaments) is called with
the record that stands after every write, the first or a repeated one, once the record and its
index entries are stored. A hook must be idempotent; one that fails is logged and left to its own
sweeper (gateway/ratings, gateway/tournaments), never failing the move that ended the game.
Companions (``Records.companions``): idempotent commands a hook stores with the record, in its
round trip, for a record it then has nothing to do with (the ratings' processed hint for an
unrated game: a round trip fewer a game).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import grpc
from tafel.games.v1 import games_pb2
from tafel.play.v1 import play_pb2

from gateway.games import GameMeta
from gateway.paging import PageCursor, page_size_of, zpage_newest
from kit.errors import Refused
from kit.ids import check_id
from kit.redis.game_reads import GameReads
from kit.redis.keys import record_key, records_index_key
from kit.redis.layer import RedisLayer
from kit.redis.pipe import Command

log = logging.getLogger("tafel.gateway.records")
# The outcome of a game ended before every player had moved (reasons.proto): no result, so its
# record is never rated (no rating change, no leaderboard entry, no personal best).
ABORTED = "ABORTED"

RecordHook = Callable[[play_pb2.GameRecord], Awaitable[None]]
RecordCompanion = Callable[[play_pb2.GameRecord], Sequence[Command]]


def visible_to(record: play_pb2.GameRecord, viewer: str) -> bool:
    return not record.private or any(seat.player.player_id == viewer for seat in record.players)


def no_show(actions: list[games_pb2.RecordedAction]) -> bool:
    """A seat timed out without ever acting itself: its player never arrived (a matched player
    whose connection died before the game began). Such a game is not rated, for either side."""
    acted = {action.seat for action in actions if not action.timed_out}
    return any(action.timed_out and action.seat not in acted for action in actions)


def current_line(actions: Sequence[games_pb2.RecordedAction]) -> list[games_pb2.RecordedAction]:
    """The actions that made the game's position now, in order: a take-back (taken_back_to T)
    leaves the line as it was at version T, so moves it undid, and itself, are not in it (a
    player's last move is the last one here, never one taken back)."""
    lines: dict[int, list[games_pb2.RecordedAction]] = {0: []}
    line: list[games_pb2.RecordedAction] = []
    for action in actions:
        if action.WhichOneof("action") == "taken_back_to":
            line = lines.get(action.taken_back_to, line)
        else:
            line = [*line, action]
        lines[action.version] = line
    return line


class Records:
    def __init__(self, layer: RedisLayer, games: GameReads, *, ttl_s: int = 0) -> None:
        self.layer = layer
        self.games = games  # where the game's action list is read
        self.ttl_s = ttl_s
        self.hooks: list[RecordHook] = []
        self.companions: list[RecordCompanion] = []

    async def write(
        self, meta: GameMeta, outcome: games_pb2.Outcome, *, then: Sequence[Sequence[Command]] = ()
    ) -> play_pb2.GameRecord:
        """Write the record of a game that just ended; idempotent. Returns the record that stands.
        `then`: the end's bookkeeping after the record (the live lists, the finalise deadline),
        steps of idempotent commands stored after the record and its index and before the hooks:
        on one Redis in the record's round trip (one connection runs them in order, so any part
        of the batch that lands is a prefix of it: never a game off its lists without its record),
        on a cluster step by step (its masters keep no order across slots)."""
        rows = await self.games.read_actions(meta.game_id)
        actions = [games_pb2.RecordedAction.FromString(row) for row in rows]
        record = play_pb2.GameRecord(
            game_id=meta.game_id,
            game=meta.game,
            options=meta.game_options(),
            players=meta.seated_players(),
            actions=actions,
            outcome=outcome,
            time_control=meta.time_control(),
            rated=meta.rated and not no_show(actions) and outcome.reason != ABORTED,
            private=meta.private,
        )
        record.started_at.FromMilliseconds(int(meta.created_at * 1000))
        if actions:
            record.ended_at.CopyFrom(actions[-1].at)  # the same on every replica
        else:
            record.ended_at.FromMilliseconds(int(time.time() * 1000))
        key = record_key(meta.game_id)
        data = record.SerializeToString()
        expiry: tuple[str | int, ...] = ("EX", self.ttl_s) if self.ttl_s else ()
        store: Command = ("SET", key, data, "NX", *expiry)
        together = bool(actions) and not self.layer.cluster
        if together:
            # The index's score is the last action's time, the record's on every replica, so it
            # goes in the same round trip as the record: one connection runs them in this order,
            # so the index never names a record not yet stored. (A cluster's masters do not keep
            # one order across slots: there, the record is stored first.) The record is the same
            # on every replica too, so its companions are known before the SET's answer.
            after = [*self._index(record), *self._companions(record), *(c for step in then for c in step)]
            written: Any = (await self.layer.many([store, *after]))[0]
        else:
            written = await self.layer.call(*store)
        if not written:
            stored: Any = await self.layer.call("GET", key)
            if stored is not None:
                record = play_pb2.GameRecord.FromString(stored)
        if not together:
            if self.layer.cluster:
                await self.layer.many([*self._index(record), *self._companions(record)])
                for step in then:
                    await self.layer.many(step)
            else:
                await self.layer.many(
                    [*self._index(record), *self._companions(record), *(c for step in then for c in step)]
                )
        for hook in self.hooks:
            try:
                await hook(record)
            except Exception:
                log.exception("a game-end hook failed", extra={"game_id": meta.game_id})
        return record

    def _companions(self, record: play_pb2.GameRecord) -> list[Command]:
        return [command for companion in self.companions for command in companion(record)]

    @staticmethod
    def _index(record: play_pb2.GameRecord) -> list[Command]:
        score = record.ended_at.ToMilliseconds()
        return [
            ("ZADD", records_index_key(player_id, game), score, record.game_id)
            for player_id in {p.player.player_id for p in record.players} | {""}
            for game in ("", record.game)
        ]

    async def get(self, game_id: str, viewer: str | None = None) -> play_pb2.GameRecord:
        """A record; a private one is NOT_FOUND to a viewer who did not play in it (viewer None:
        the platform's own use)."""
        check_id("game_id", game_id)
        stored: Any = await self.layer.call("GET", record_key(game_id))
        record = play_pb2.GameRecord.FromString(stored) if stored is not None else None
        if record is None or (viewer is not None and not visible_to(record, viewer)):
            raise Refused(grpc.StatusCode.NOT_FOUND, "RECORD_NOT_FOUND", f"no record of a finished game {game_id}")
        return record

    async def exists(self, game_id: str) -> bool:
        return bool(await self.layer.call("EXISTS", record_key(game_id)))

    async def list(
        self, *, player_id: str, game: str, page_size: int, page_token: str, viewer: str | None = None
    ) -> tuple[list[play_pb2.GameRecord], str]:
        """A page of records, newest first; private ones are left out for a viewer who did not play
        in them (so a page may hold fewer than page_size; the token still moves on)."""
        if player_id:
            check_id("player_id", player_id)
        if game:
            check_id("game", game)
        size = page_size_of(page_size)
        cursor = PageCursor.decode(page_token, ("records",))
        after = (cursor.score, cursor.member) if cursor else None
        rows, more = await zpage_newest(self.layer, records_index_key(player_id, game), size, after)
        records: list[play_pb2.GameRecord] = []
        if rows:
            # One GET each in one round trip: every record is in its own slot on a cluster.
            stored: Any = await self.layer.many([("GET", record_key(member)) for member, _ in rows])
            records = [play_pb2.GameRecord.FromString(data) for data in stored if data is not None]
            records = [record for record in records if viewer is None or visible_to(record, viewer)]
        token = PageCursor("records", rows[-1][1], rows[-1][0]).encode() if more and rows else ""
        return records, token
