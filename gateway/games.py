"""The game directory: who sits where in which game, and the indexes that list games.

Keys (kit/redis/keys.py, "Games the gateway started"; this module owns them):

- ``meta_key(game)`` hash: game type, players per seat (JSON list of [player_id, username, guest],
  and after those [display_name, bot_level] when the seat has either),
  GameOptions bytes (defaults filled in), per-move time, rated, origin (``match``, ``room``,
  ``tournament``, ``test``...), created. Written once (lua/games/start.lua never overwrites it, and
  arms the first clock in the same script), so a retried start is harmless. It expires
  TAFEL_GAME_TTL_S after the last move: the clock's arming (lua/clocks/arm.lua, games/start.lua,
  and the rules commit when it arms) refreshes it, the one key outside the clock's own they touch.
  The game's record (gateway/records.py) outlives it.
- ``live_key()`` / ``live_key(game)`` sorted sets: running games by creation time.
- ``player_games_key(player, "live" | "done")`` sorted sets: a player's games by creation time.

Metadata never changes after creation, so each gateway keeps a bounded in-memory copy: the hot path
(which seat is this caller?) costs no Redis round trip after a game's first move.
"""

from __future__ import annotations

import asyncio
import json
import secrets
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import grpc
from tafel.games.v1 import games_pb2
from tafel.play.v1 import play_pb2
from tafel.rules.v1 import rules_pb2

from gateway.clocks import Clocks
from gateway.paging import PageCursor, page_size_of, zpage_newest
from gateway.rules import RulesRouter
from gateway.timecontrol import is_correspondence, time_control_of
from kit import timesource
from kit.errors import Refused, invalid
from kit.ids import check_id
from kit.redis.keys import live_key, meta_key, player_games_key
from kit.redis.layer import RedisLayer
from kit.redis.pipe import Command, RespError
from kit.redis.scripts import Script, script

_META_CACHE = 20_000

# The origin of a game from a room whose owner did not make it watchable: it is never listed in the
# live lists and only its seated players may see or watch it.
PRIVATE_ORIGIN = "private-room"


def new_game_id() -> str:
    return secrets.token_urlsafe(12).replace("_", "x").replace("-", "y")


def not_found(game_id: str) -> Refused:
    return Refused(grpc.StatusCode.NOT_FOUND, "GAME_NOT_FOUND", f"there is no game {game_id}")


@dataclass
class Followup:
    """A script sent in the same write as a start's games/start on one Redis (a matched game
    marked started: a round trip fewer a game). It must check for itself that the start ran (a
    NOSCRIPT answer to games/start lets it run first) and answer `not_ran` when it did not.
    `ran` and `reply` say what came of it; when it did not run, its caller runs it on its own."""

    script: Script
    keys: list[str]
    args: list[Any]
    not_ran: int = 2
    ran: bool = False
    reply: Any = None


@dataclass(frozen=True)
class GameMeta:
    game_id: str
    game: str
    players: tuple[tuple[str, str, bool], ...]  # per seat: player_id, username, guest
    options: bytes
    per_move_s: float
    rated: bool
    origin: str
    created_at: float  # seconds since the epoch
    # Per seat: the display name and bot level (0: not a bot) it was taken with; () = none at all.
    shown: tuple[tuple[str, int], ...] = ()

    @property
    def private(self) -> bool:
        return self.origin == PRIVATE_ORIGIN

    def visible_to(self, player_id: str) -> bool:
        """Whether the player may see and watch the game: anyone, unless it is private."""
        return not self.private or bool(self.seats_of(player_id))

    @property
    def seats(self) -> int:
        return len(self.players)

    @cached_property
    def key(self) -> str:
        """Its Redis key (meta_key): every action keeps it alive, so worked out once per metadata."""
        return meta_key(self.game_id)

    @cached_property
    def _seats_by_player(self) -> dict[str, tuple[int, ...]]:
        # Asked on every move (which seat is this caller?): once per metadata, not a scan a call.
        by_player: dict[str, tuple[int, ...]] = {}
        for seat, player in enumerate(self.players):
            by_player[player[0]] = (*by_player.get(player[0], ()), seat)
        return by_player

    def seats_of(self, player_id: str) -> tuple[int, ...]:
        return self._seats_by_player.get(player_id, ())

    def seated_players(self) -> list[play_pb2.SeatedPlayer]:
        shown = self.shown or (("", 0),) * len(self.players)
        return [
            play_pb2.SeatedPlayer(
                seat=seat,
                player=play_pb2.Player(
                    player_id=pid, username=name, guest=guest, display_name=display, bot=level > 0, bot_level=level
                ),
            )
            for seat, ((pid, name, guest), (display, level)) in enumerate(zip(self.players, shown, strict=True))
        ]

    def time_control(self) -> play_pb2.TimeControl:
        return time_control_of(round(self.per_move_s * 1000))

    def game_options(self) -> games_pb2.GameOptions:
        return games_pb2.GameOptions.FromString(self.options)


def _meta_from_row(game_id: str, row: dict[bytes, bytes]) -> GameMeta:
    players = json.loads(row[b"p"])
    return GameMeta(
        game_id=game_id,
        game=row[b"g"].decode(),
        players=tuple((str(p[0]), str(p[1]), bool(p[2])) for p in players),
        options=bytes(row.get(b"o", b"")),
        per_move_s=int(row[b"t"]) / 1000.0,
        rated=row.get(b"r") == b"1",
        origin=row.get(b"src", b"").decode(),
        created_at=int(row[b"c"]) / 1000.0,
        shown=tuple((str(p[3]), int(p[4])) if len(p) > 4 else ("", 0) for p in players),
    )


class GameDirectory:
    """Starts games and knows their players. One per gateway process (others may create their own)."""

    def __init__(
        self,
        layer: RedisLayer,
        router: RulesRouter,
        clocks: Clocks,
        *,
        game_ttl_s: int,
        announce: Callable[[GameMeta], Awaitable[None]] | None = None,
    ) -> None:
        self.layer = layer
        self.router = router
        self.clocks = clocks
        self.game_ttl_s = game_ttl_s
        # Tells the players a game started (their account event streams: gateway/events), once,
        # by the start that wrote it. Every way a game starts comes through start_game.
        self.announce = announce
        self._cache: OrderedDict[str, GameMeta] = OrderedDict()
        # Correspondence games (gateway/correspondence.py, set by the composition root): told of a
        # start (the first YOUR_TURN, warnings), asked which seats are on vacation (summaries).
        self.started: Callable[[GameMeta, games_pb2.GameStatus, float | None], Awaitable[None]] | None = None
        self.vacation_seats: Callable[[GameMeta], Awaitable[list[int]]] | None = None

    async def start_game(
        self,
        *,
        game: str,
        options: games_pb2.GameOptions,
        players: Sequence[play_pb2.Player],
        per_move_s: float,
        rated: bool,
        origin: str,
        game_id: str | None = None,
        followed_by: Followup | None = None,
    ) -> str:
        """Create a game on its rules service, record who sits where, index it and start its clock.
        Retrying with the same game_id is safe. Raises Refused (e.g. INVALID_ARGUMENT bad options).
        `followed_by`: sent right after the start's script, in its write, where it can be (one
        Redis); see Followup."""
        if not self.router.offers(game):
            raise invalid("UNKNOWN_GAME", f"there is no game type {game} here", field="game")
        if not players:
            raise invalid("NO_PLAYERS", "a game needs at least one player")
        if not per_move_s > 0:
            raise invalid("BAD_TIME_CONTROL", "the per-move time must be positive")
        game_id = game_id or new_game_id()
        check_id("game_id", game_id)
        created = await self.router.create_game(
            game,
            rules_pb2.CreateGameRequest(game_id=game_id, seats=len(players), options=options, request_id="create"),
        )
        now = timesource.now_s()
        created_ms = int(now * 1000)
        seats: list[tuple[str, str, bool]] = [(p.player_id, p.username, bool(p.guest)) for p in players]
        shown = tuple((p.display_name, int(p.bot_level) if p.bot else 0) for p in players)
        # A seat's display name and bot level follow its first three fields only where set.
        stored = [[*seat, *extra] if any(extra) else list(seat) for seat, extra in zip(seats, shown, strict=True)]
        # Listed live unless over at once or private: on one Redis in the start's own script.
        listing = (
            []
            if created.status.over
            else self._live_keys(game, {seat[0] for seat in seats}, private=origin == PRIVATE_ORIGIN)
        )
        in_script = [] if self.layer.cluster else listing
        # The metadata and the first clock in one script: a started game always has its clock.
        clock_keys, clock_args = self.clocks.arm_parts(game_id, created.status, per_move_s)
        start_keys = [meta_key(game_id), *clock_keys, *in_script]
        start_args: list[Any] = [
            game,
            json.dumps(stored, separators=(",", ":"), ensure_ascii=False),
            created.options.SerializeToString(),
            round(per_move_s * 1000),
            1 if rated else 0,
            origin,
            created_ms,
            self.game_ttl_s,
            *clock_args,
        ]
        started: Any = await self._run_start(start_keys, start_args, followed_by)
        deadline = self.clocks.settled(int(started[1]), int(started[2]))
        self.clocks.remember(game_id, created.status.version, deadline)
        written = bool(int(started[0]))
        meta = (
            await self.meta(game_id)
            if not written
            else GameMeta(
                game_id=game_id,
                game=game,
                players=tuple(seats),
                options=created.options.SerializeToString(),
                per_move_s=round(per_move_s * 1000) / 1000.0,
                rated=rated,
                origin=origin,
                created_at=created_ms / 1000.0,
                shown=shown if any(any(extra) for extra in shown) else (),
            )
        )
        self._remember(meta)
        if not written and not created.status.over:
            # A retried start: the stored game is listed, at its own creation time.
            score = int(meta.created_at * 1000)
            keys = self._live_keys(meta.game, {p[0] for p in meta.players}, private=meta.private)
            await self.layer.many([("ZADD", key, score, game_id) for key in keys])
        elif self.layer.cluster and listing:  # the lists are other slots there: after the game's own
            await self.layer.many([("ZADD", key, created_ms, game_id) for key in listing])
        if written and self.announce is not None:
            await self.announce(meta)
        if self.started is not None and not created.status.over and is_correspondence(round(per_move_s * 1000)):
            await self.started(meta, created.status, deadline)
        return game_id

    async def _run_start(self, keys: list[str], args: list[Any], followed_by: Followup | None) -> Any:
        """games/start's answer; with `followed_by`, both scripts in one write where the layer
        can (one Redis, connected), else the start alone (its caller then runs the followup)."""
        first = self.layer.start(script("games/start"), keys, args) if followed_by is not None else None
        if first is None or followed_by is None:
            return await self.layer.run(script("games/start"), keys, args)
        second = self.layer.start(followed_by.script, followed_by.keys, followed_by.args)
        replies = await asyncio.gather(first, *([second] if second is not None else []), return_exceptions=True)
        if isinstance(replies[0], BaseException) and not isinstance(replies[0], RespError):
            raise replies[0]  # the connection went: both are lost (or the second's fate unknown)
        if len(replies) > 1 and not isinstance(replies[1], BaseException) and replies[1] != followed_by.not_ran:
            followed_by.ran, followed_by.reply = True, replies[1]
        if isinstance(replies[0], RespError):  # NOSCRIPT (run() loads it) or an error run() raises
            return await self.layer.run(script("games/start"), keys, args)
        return replies[0]

    @staticmethod
    def _live_keys(game: str, player_ids: set[str], *, private: bool) -> list[str]:
        """The live lists a running game is in (a private one only in its players')."""
        keys = [] if private else [live_key(), live_key(game)]
        return keys + [player_games_key(player_id, "live") for player_id in sorted(player_ids)]

    def _remember(self, meta: GameMeta) -> None:
        self._cache[meta.game_id] = meta
        if len(self._cache) > _META_CACHE:
            self._cache.popitem(last=False)

    async def meta(self, game_id: str) -> GameMeta:
        """A game's metadata, or Refused(NOT_FOUND)."""
        cached = self._cache.get(game_id)
        if cached is not None:
            return cached
        # The pipelined connection, not redis-py's client: on a cluster, redis-py's async client
        # raised RuntimeError (a closed uvloop transport) under a burst of first reads (docs/cluster.md).
        flat: Any = await self.layer.call("HGETALL", meta_key(game_id))
        row = dict(zip(flat[::2], flat[1::2], strict=True))
        if not row:
            raise not_found(game_id)
        meta = _meta_from_row(game_id, row)
        self._remember(meta)
        return meta

    async def seat_of(self, game_id: str, player_id: str) -> int | None:
        """The player's (first) seat in the game, None for a spectator."""
        seats = (await self.meta(game_id)).seats_of(player_id)
        return seats[0] if seats else None

    async def finish(self, meta: GameMeta) -> None:
        """The game is over: it leaves the live lists. Idempotent."""
        await self.layer.many(self.finish_commands(meta))

    @staticmethod
    def finish_commands(meta: GameMeta) -> list[Command]:
        """finish()'s commands, for a caller that sends them with others (the game's record)."""
        score = int(meta.created_at * 1000)
        commands: list[Command] = [
            ("ZREM", live_key(), meta.game_id),
            ("ZREM", live_key(meta.game), meta.game_id),
        ]
        for player_id in {p[0] for p in meta.players}:
            commands.append(("ZREM", player_games_key(player_id, "live"), meta.game_id))
            commands.append(("ZADD", player_games_key(player_id, "done"), score, meta.game_id))
        return commands

    async def summary(
        self, game_id: str, status: games_pb2.GameStatus | None = None, meta: GameMeta | None = None
    ) -> play_pb2.GameSummary:
        meta = meta or await self.meta(game_id)
        if status is None:
            view = await self.router.get_view(meta.game, rules_pb2.GetViewRequest(game_id=game_id))
            status = view.status
        summary = play_pb2.GameSummary(
            game_id=game_id,
            game=meta.game,
            options=meta.game_options(),
            players=meta.seated_players(),
            status=status,
            time_control=meta.time_control(),
            rated=meta.rated,
        )
        summary.created_at.FromMilliseconds(int(meta.created_at * 1000))
        if not status.over:
            deadline = await self.clocks.deadline(game_id, status.version)
            if deadline is not None:
                summary.turn_deadline.FromMilliseconds(int(deadline * 1000))
            if self.vacation_seats is not None and is_correspondence(round(meta.per_move_s * 1000)):
                summary.vacation_seats.extend(await self.vacation_seats(meta))
        return summary

    async def _summaries(self, game_ids: Sequence[str]) -> list[play_pb2.GameSummary]:
        out: list[play_pb2.GameSummary] = []
        for game_id in game_ids:
            try:
                meta = await self.meta(game_id)
                if not self.router.offers(meta.game):
                    continue  # a game type this gateway has no rules service for: it cannot summarise it
                out.append(await self.summary(game_id, meta=meta))
            except Refused as refused:
                if refused.code != grpc.StatusCode.NOT_FOUND:
                    raise
        return out

    async def list_live(self, game: str, page_size: int, page_token: str) -> tuple[list[play_pb2.GameSummary], str]:
        if game and not self.router.offers(game):
            raise invalid("UNKNOWN_GAME", f"there is no game type {game} here", field="game")
        size = page_size_of(page_size)
        cursor = PageCursor.decode(page_token, ("live",))
        after = (cursor.score, cursor.member) if cursor else None
        rows, more = await zpage_newest(self.layer, live_key(game or None), size, after)
        summaries = await self._summaries([member for member, _ in rows])
        token = PageCursor("live", rows[-1][1], rows[-1][0]).encode() if more and rows else ""
        return summaries, token

    async def list_for_player(
        self, player_id: str, page_size: int, page_token: str
    ) -> tuple[list[play_pb2.GameSummary], str]:
        """The player's running games, newest first, then finished ones, newest first."""
        size = page_size_of(page_size)
        phases = ["live", "done"]
        cursor = PageCursor.decode(page_token, tuple(phases))
        if cursor is not None:
            phases = phases[phases.index(cursor.phase) :]
        rows: list[tuple[str, float, str]] = []
        next_token = ""
        for phase in phases:
            after = (cursor.score, cursor.member) if cursor is not None and cursor.phase == phase else None
            found, more = await zpage_newest(self.layer, player_games_key(player_id, phase), size - len(rows), after)
            rows.extend((member, score, phase) for member, score in found)
            if more:
                next_token = PageCursor(phase, rows[-1][1], rows[-1][0]).encode()
                break
            if len(rows) >= size:
                if phase == "live":
                    # There may be finished games still to list.
                    next_token = PageCursor("done", float("inf"), "").encode()
                break
        return await self._summaries([member for member, _, _ in rows]), next_token
