"""Correspondence games (a day or more a move): their notices, the warnings before a deadline, and
what a vacation does to their clocks.

Notices (the inbox, gateway/notices: `Inbox.notify`, idempotent by notification id): after every
applied action of such a game (gateway/actions.py calls after_action, a replayed answer too)
YOUR_TURN to each player now to act, OPPONENT_MOVED to the others after a move, GAME_OVER to every
player at the end; a game's start tells the first player. Ids are the game, the version and the
kind (and seat), so a retry, a replayed answer or two replicas make one notice each.

Warnings (TIME_RUNNING_OUT, 24 h and 1 h before a deadline, for turns longer than that): members
"<game>|<version>|<seat>|<hours>" in a per-shard set beside the shard's deadlines (warnings_key),
scored when to warn, written after each action (the previous version's removed in the same round
trip) and swept like the deadlines: claimed with clocks/claim's lease (a replica that dies
mid-send leaves the claim to be taken again), checked against the clock when due (an older version:
dropped; a deadline that moved: re-scored), sent once (the id is game+version+kind+seat+hours).
Being in Redis, they survive a restart of every gateway.

Vacations: the stored turn deadline is the one armed at the move (now + per-move time, by the rules
commit). The deadline that counts is model.effective_deadline: the turn's start (the armed deadline
minus the per-move time, kept as `b` once moved) plus the per-move time, the clock standing still
during the to-act player's vacations (their log, with a running vacation's planned end). It is
computed from stored facts only, so every replica, before or after a restart, gets the same:
- at the deadline (Actions.on_due asks postpone first): a later effective deadline moves the
  member there (clocks/extend, guarded by the clock's version) instead of timing out;
- at a vacation's start and end, for the player's live games where they are to act (so the shown
  deadline and the warnings are right at once; an early return pulls a deadline back);
- after a move to a player on vacation (a deadline armed while away).
The first is the authority: if a gateway dies before the other two, the deadline is still exact
when it comes due (a deadline moved to a planned end that was later cut short comes due late by at
most that difference only if the gateway died between storing the early end and pulling the
deadline back; EndVacation, retried, pulls it back).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from typing import Any, Protocol

from redis.exceptions import RedisError
from tafel.games.v1 import games_pb2
from tafel.play.v1 import notices_pb2, play_pb2
from tafel.rules.v1 import rules_pb2

from gateway.clocks import CLAIM_BATCH, Due
from gateway.games import GameDirectory, GameMeta
from gateway.vacation.model import HOUR_MS, Vacation, effective_deadline
from gateway.vacation.store import VacationStore
from kit import timesource
from kit.errors import Refused
from kit.loops import Loop
from kit.redis.keys import (
    GAME_SHARDS,
    claimed_key,
    clock_key,
    clocks_key,
    game_shard,
    player_games_key,
    warnings_claimed_key,
    warnings_key,
)
from kit.redis.layer import RedisLayer
from kit.redis.replies import text
from kit.redis.scripts import script
from kit.retry import Backoff

log = logging.getLogger("tafel.gateway.correspondence")
WARN_HOURS = (24, 1)


class InboxPort(Protocol):
    """gateway/notices' Inbox: stores the notice once (by id), as the player's settings say, and
    tells the account's event stream; True when it was new."""

    async def notify(self, player_id: str, note: notices_pb2.Notification, *, guest: bool = False) -> bool: ...


def notice_id(kind: str, *parts: object) -> str:
    """A notification id (gateway/notices' pattern: letters, digits, `_.:|-`)."""
    return ":".join([kind, *(str(p) for p in parts)])


def _per_move_ms(meta: GameMeta) -> int:
    return round(meta.per_move_s * 1000)


class Correspondence:
    def __init__(
        self,
        layer: RedisLayer,
        directory: GameDirectory,
        vacations: VacationStore,
        inbox: InboxPort | None,
        *,
        max_wait_s: float = 1.0,
        lease_s: float = 30.0,
    ) -> None:
        self.layer = layer
        self.directory = directory
        self.vacations = vacations
        self.inbox = inbox
        self.max_wait_s = max_wait_s
        self.lease_ms = int(lease_s * 1000)
        self._loop: Loop | None = None
        self._first_shard = 0
        self.warned = 0  # warnings sent (new notices)
        self.postponed = 0  # due deadlines moved on by a vacation

    # -- notices ------------------------------------------------------------------------------------

    async def _notify(self, meta: GameMeta, player_id: str, note: notices_pb2.Notification) -> bool:
        if self.inbox is None:
            return False
        note.at.FromMilliseconds(timesource.now_ms())
        # A guest's inbox expires with the guest (gateway/notices): say which it is.
        guest = any(pid == player_id and is_guest for pid, _, is_guest in meta.players)
        return await self.inbox.notify(player_id, note, guest=guest)

    @staticmethod
    def _player(meta: GameMeta, seat: int) -> play_pb2.Player:
        return meta.seated_players()[seat].player

    async def started(self, meta: GameMeta, status: games_pb2.GameStatus, deadline: float | None) -> None:
        """A correspondence game began: YOUR_TURN to whoever moves first, and their warnings."""
        await self._follow(meta, None, status, moved=False)

    async def after_action(
        self, meta: GameMeta, request: rules_pb2.ApplyMoveRequest, status: games_pb2.GameStatus
    ) -> None:
        try:
            await self._follow(meta, request.seat, status, moved=request.HasField("move"))
        except (RedisError, Refused) as error:  # the move stands; its notices are the loss
            log.warning("correspondence follow-up failed", extra={"game_id": meta.game_id, "error": str(error)})

    async def _follow(self, meta: GameMeta, mover: int | None, status: games_pb2.GameStatus, *, moved: bool) -> None:
        gid, version = meta.game_id, status.version
        if status.over:
            for seat, (player_id, _, _) in enumerate(meta.players):
                note = notices_pb2.Notification(
                    notification_id=notice_id("over", gid, seat),
                    kind=notices_pb2.NOTIFICATION_KIND_GAME_OVER,
                    game_id=gid,
                    game=meta.game,
                    outcome=status.outcome,
                    seat=seat,
                )
                await self._notify(meta, player_id, note)
            return
        to_act = list(status.to_act)
        deadline = await self.adjust(meta, version, to_act, warn=True)
        mover_id = meta.players[mover][0] if mover is not None else ""
        by = self._player(meta, mover) if mover is not None else None
        told: set[str] = set()
        for seat in to_act:
            player_id = meta.players[seat][0]
            if player_id == mover_id or player_id in told:
                continue
            told.add(player_id)
            note = notices_pb2.Notification(
                notification_id=notice_id("turn", gid, version, seat),
                kind=notices_pb2.NOTIFICATION_KIND_YOUR_TURN,
                game_id=gid,
                game=meta.game,
                seat=seat,
            )
            if by is not None:
                note.player.CopyFrom(by)
            else:  # the game's start: name an opponent, so a client can say whom it is against
                others = [other for other, (pid, _, _) in enumerate(meta.players) if pid != player_id]
                if others:
                    note.player.CopyFrom(self._player(meta, others[0]))
            if deadline:
                note.deadline.FromMilliseconds(deadline)
            await self._notify(meta, player_id, note)
        if moved and by is not None:
            for seat, (player_id, _, _) in enumerate(meta.players):
                if player_id == mover_id or player_id in told:
                    continue
                told.add(player_id)
                note = notices_pb2.Notification(
                    notification_id=notice_id("moved", gid, version, seat),
                    kind=notices_pb2.NOTIFICATION_KIND_OPPONENT_MOVED,
                    game_id=gid,
                    game=meta.game,
                    seat=seat,
                    player=by,
                )
                await self._notify(meta, player_id, note)

    # -- the deadline and its warnings --------------------------------------------------------------

    async def adjust(self, meta: GameMeta, version: int, to_act: Sequence[int], *, warn: bool = False) -> int:
        """Make the turn's stored deadline (at `version`) the effective one (model.py), its warnings
        with it when it moved (or `warn`: a new turn); returns it (0: not this clock's turn any
        more). The first seat to act's player decides, as the timeout is theirs (Actions.on_due).
        A warning already sent and armed again (the deadline moved) has the same id: the inbox
        keeps one."""
        if not to_act:
            return 0
        gid = meta.game_id
        row: Any = await self.layer.call("HMGET", clock_key(gid), "v", "d", "b", "m")
        if row[0] is None or int(row[0]) != version or not row[1] or int(row[1]) <= 0:
            return 0
        stored = int(row[1])
        base = stored
        if row[2] is not None:
            bv, _, bd = text(row[2]).partition("|")
            if bv == str(version) and bd.isdigit():
                base = int(bd)
        per_move = _per_move_ms(meta)
        start = base - per_move
        away = await self.vacations.away(meta.players[to_act[0]][0], start)
        deadline = effective_deadline(start, per_move, away)
        member = text(row[3])
        if deadline != stored:
            shard = game_shard(gid)
            moved: Any = await self.layer.run(
                script("clocks/extend"),
                [clock_key(gid), clocks_key(shard), claimed_key(shard)],
                [member, version, deadline],
            )
            if int(moved[0]) != 1:
                return 0
            warn = True
        if warn:
            await self._arm_warnings(meta, version, to_act, deadline)
        return deadline

    async def _arm_warnings(self, meta: GameMeta, version: int, to_act: Sequence[int], deadline: int) -> None:
        per_move = _per_move_ms(meta)
        hours = [h for h in WARN_HOURS if per_move > h * HOUR_MS]
        if not hours:
            return
        key = warnings_key(game_shard(meta.game_id))
        gid = meta.game_id
        stale = [f"{gid}|{version - 1}|{seat}|{h}" for seat in range(meta.seats) for h in hours]
        fresh: list[str | int] = []
        for seat in to_act:
            for h in hours:
                fresh.extend((deadline - h * HOUR_MS, f"{gid}|{version}|{seat}|{h}"))
        commands: list[tuple[str | int, ...]] = [("ZREM", key, *stale)] if version > 0 else []
        commands.append(("ZADD", key, *fresh))
        await self.layer.many(commands)

    async def postpone(self, meta: GameMeta, due: Due) -> bool:
        """A correspondence deadline came due: whether it moved on instead (a vacation)."""
        deadline = await self.adjust(meta, due.version, due.seats)
        if deadline > timesource.now_ms():
            self.postponed += 1
            log.info("deadline moved by a vacation", extra={"game_id": meta.game_id, "version": due.version})
            return True
        return False

    # -- vacations ----------------------------------------------------------------------------------

    async def _live_games(self, player_id: str) -> list[GameMeta]:
        ids: Any = await self.layer.call("ZRANGE", player_games_key(player_id, "live"), 0, -1)
        out: list[GameMeta] = []
        for raw in ids:
            try:
                meta = await self.directory.meta(text(raw))
            except Refused:
                continue
            if _per_move_ms(meta) >= 86_400_000:
                out.append(meta)
        return out

    async def _turns(self, meta: GameMeta) -> tuple[int, list[int]] | None:
        row: Any = await self.layer.call("HMGET", clock_key(meta.game_id), "v", "a")
        if row[0] is None or not row[1]:
            return None
        return int(row[0]), [int(s) for s in text(row[1]).split(",") if s]

    async def vacation_changed(self, player_id: str, vacation: Vacation, *, started: bool) -> None:
        """A vacation started or ended: the deadlines of the player's turns follow at once, and
        at a start their opponents are told (once per vacation and game)."""
        for meta in await self._live_games(player_id):
            turn = await self._turns(meta)
            if turn is not None and turn[1] and meta.players[turn[1][0]][0] == player_id:
                await self.adjust(meta, turn[0], turn[1])
            if not started or vacation.start_ms is None:
                continue
            seats = meta.seats_of(player_id)
            for seat, (other, _, _) in enumerate(meta.players):
                if other == player_id:
                    continue
                note = notices_pb2.Notification(
                    notification_id=notice_id("away", player_id, vacation.start_ms, meta.game_id, seat),
                    kind=notices_pb2.NOTIFICATION_KIND_OPPONENT_ON_VACATION,
                    game_id=meta.game_id,
                    game=meta.game,
                    player=self._player(meta, seats[0]),
                    seat=seat,
                )
                if vacation.end_ms is not None:
                    note.until.FromMilliseconds(vacation.end_ms)
                await self._notify(meta, other, note)

    async def vacation_seats(self, meta: GameMeta) -> list[int]:
        away = await self.vacations.on_vacation([p[0] for p in meta.players], timesource.now_ms())
        return [seat for seat, p in enumerate(meta.players) if p[0] in away]

    # -- the warning sweeper ------------------------------------------------------------------------

    def start(self) -> None:
        if self._loop is None:
            self._loop = Loop(
                "warning sweeper",
                self._sweep_step,
                every_s=self.max_wait_s,
                log=log,
                backoff=Backoff(first_s=min(0.1, self.max_wait_s), cap_s=self.max_wait_s),
            )
            self._loop.start()

    async def stop(self) -> None:
        if self._loop is not None:
            await self._loop.stop()
            self._loop = None

    async def sweep_once(self) -> tuple[int, float | None]:
        """Claim what is due in every shard and send it; (claimed, the next warning in ms)."""
        now = timesource.now_ms()
        start = self._first_shard
        self._first_shard = (start + 1) % GAME_SHARDS
        shards = [(start + i) % GAME_SHARDS for i in range(GAME_SHARDS)]
        if self.layer.cluster:
            groups = [[warnings_key(k), warnings_claimed_key(k)] for k in shards]
        else:
            groups = [[key for k in shards for key in (warnings_key(k), warnings_claimed_key(k))]]
        args = [now, self.lease_ms, CLAIM_BATCH]
        replies: list[Any] = list(
            await asyncio.gather(*(self.layer.run(script("clocks/claim"), keys, args) for keys in groups))
        )
        members = [text(raw) for reply in replies for raw in reply[0]]
        candidates = [float(x) for reply in replies for x in reply[1:] if x not in (b"", "", None)]
        # A batch at once (several round trips each): many due together (a tournament round's
        # games began together) go out at many a millisecond, not one by one.
        await asyncio.gather(*(self._warn_logged(member, now) for member in members))
        return len(members), (min(candidates) if candidates else None)

    async def _warn_logged(self, member: str, now: int) -> None:
        try:
            await self._warn(member, now)
        except (Refused, RedisError) as error:  # left claimed: taken again when its lease ends
            log.warning("warning not sent", extra={"member": member, "error": str(error)})

    async def _warn(self, member: str, now: int) -> None:
        parts = member.split("|")
        gid = parts[0]
        claimed = warnings_claimed_key(game_shard(gid))
        if len(parts) != 4 or not all(p.isdigit() for p in parts[1:]):
            await self.layer.call("ZREM", claimed, member)
            return
        version, seat, hours = int(parts[1]), int(parts[2]), int(parts[3])
        try:
            meta = await self.directory.meta(gid)
        except Refused:
            await self.layer.call("ZREM", claimed, member)
            return
        turn = await self._turns(meta)
        if turn is None or turn[0] != version or seat not in turn[1]:
            await self.layer.call("ZREM", claimed, member)  # the turn is over: nothing to say
            return
        deadline = await self.adjust(meta, version, turn[1])  # re-arms the warnings if it moved
        if deadline <= 0:
            await self.layer.call("ZREM", claimed, member)
            return
        at = deadline - hours * HOUR_MS
        if at > now:  # not yet (the deadline moved on): back in the set for then
            await self.layer.many([("ZADD", warnings_key(game_shard(gid)), at, member), ("ZREM", claimed, member)])
            return
        note = notices_pb2.Notification(
            notification_id=notice_id("due", gid, version, seat, hours),
            kind=notices_pb2.NOTIFICATION_KIND_TIME_RUNNING_OUT,
            game_id=gid,
            game=meta.game,
            seat=seat,
            hours_left=hours,
        )
        note.deadline.FromMilliseconds(deadline)
        if await self._notify(meta, meta.players[seat][0], note):
            self.warned += 1
        await self.layer.many([("ZREM", claimed, member), ("ZREM", warnings_key(game_shard(gid)), member)])

    async def _sweep_step(self) -> float:
        claimed, next_ms = await self.sweep_once()
        if claimed >= CLAIM_BATCH:
            return 0.0
        if next_ms is None:
            return self.max_wait_s
        return min(self.max_wait_s, max(0.0, (next_ms - timesource.now_ms()) / 1000.0))
