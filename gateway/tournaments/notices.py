"""Tournament notices to players' inboxes: a round started (ROUND_STARTED, each player of the round),
a round starts soon (ROUND_STARTING_SOON, an hour before its planned time, or 15 minutes when
rounds are planned closer together), a director's announcement and corrected result.

Exactly once, restarts included: each notice's id is fixed by what it is about (the inbox stores an
id once), and a set in the tournament (store.noticed) records the batches that all went out, so a
sweep does not send a batch again; a gateway that dies mid-batch leaves it unmarked, and the next
pass sends the rest (the ones already sent are ignored by id).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Iterable
from typing import Protocol

from tafel.play.v1 import notices_pb2, play_pb2

from gateway.tournaments import engine
from gateway.tournaments.store import Loaded, TournamentStore, now_ms

log = logging.getLogger("tafel.gateway.tournaments")

HOUR_MS = 3_600_000
SOON_MS = HOUR_MS
SOON_CLOSE_MS = 15 * 60_000
# Rounds planned closer than this after the one before get their notice 15 minutes ahead.
CLOSE_ROUNDS_MS = 2 * HOUR_MS
BATCH = 200


class Notifier(Protocol):
    """gateway/notices/inbox.py's Inbox: idempotent by note.notification_id."""

    def notify(self, player_id: str, note: notices_pb2.Notification, *, guest: bool = False) -> Awaitable[bool]: ...


def soon_lead_ms(previous_ms: int, at_ms: int) -> int:
    """How long before a round's planned start its notice goes: an hour, or 15 minutes when it
    follows the round before (or the start) by less than two hours."""
    if previous_ms and at_ms - previous_ms < CLOSE_ROUNDS_MS:
        return SOON_CLOSE_MS
    return SOON_MS


class RoundNotices:
    def __init__(self, store: TournamentStore, inbox: Notifier | None = None) -> None:
        self.store = store
        self.inbox = inbox

    async def send(self, players: Iterable[play_pb2.Player], note: notices_pb2.Notification) -> int:
        """One notice (the same id) to each player, a batch at a time; how many were new."""
        if self.inbox is None:
            return 0
        inbox = self.inbox
        sent = 0
        pending = list(players)
        for start in range(0, len(pending), BATCH):
            batch = pending[start : start + BATCH]
            results = await asyncio.gather(
                *(inbox.notify(p.player_id, note, guest=bool(p.guest)) for p in batch),
            )
            sent += sum(1 for r in results if r)
        return sent

    async def round_started(self, loaded: Loaded) -> None:
        state = loaded.state
        if self.inbox is None or state is None or state.current is None:
            return
        rnd = state.current
        tid = loaded.spec.tournament_id
        what = f"started:{rnd.number}"
        if await self.store.noticed(tid, what):
            return
        inbox = self.inbox
        calls = []
        for g in rnd.games:
            game_id = (
                "" if g.bye or (g.result is not None and g.result.unplayed) else engine.game_id(tid, rnd.number, g)
            )
            for p in g.seats:
                entrant = state.entrant(p)
                note = notices_pb2.Notification(
                    notification_id=f"tround:{tid}:{rnd.number}",
                    kind=notices_pb2.NOTIFICATION_KIND_ROUND_STARTED,
                    tournament_id=tid,
                    tournament_name=loaded.spec.name,
                    round=rnd.number,
                    game_id=game_id,
                    game=loaded.spec.game,
                )
                calls.append((p, entrant.guest, note))
        for start in range(0, len(calls), BATCH):
            await asyncio.gather(*(inbox.notify(p, n, guest=guest) for p, guest, n in calls[start : start + BATCH]))
        await self.store.mark_noticed(tid, what)

    async def starting_soon(self, loaded: Loaded) -> None:
        """The next planned round (or the start of a tournament that starts by itself), when its
        notice is due and not yet sent."""
        if self.inbox is None:
            return
        spec = loaded.spec
        now = now_ms()
        state = loaded.state
        if loaded.status == "registering":
            number, at, previous = 1, spec.starts_at_ms, 0
        elif loaded.status == "running" and state is not None and not state.finished:
            number = len(state.rounds) + 1
            if number > engine.total_rounds(state) or spec.manual_rounds:
                return
            at = spec.schedule.time_of(number)
            previous = spec.schedule.time_of(number - 1) or loaded.started_ms
        else:
            return
        # Checked on every advance: the field is listed only once a notice is due and unsent.
        if not at or now >= at or now < at - soon_lead_ms(previous, at):
            return
        what = f"soon:{number}"
        if await self.store.noticed(spec.tournament_id, what):
            return
        if state is None:
            players = [play_pb2.Player(player_id=p, username=n, guest=g) for p, n, g in loaded.players]
        else:
            withdrawn = set(state.withdrawn)
            players = [
                play_pb2.Player(player_id=e.player_id, username=e.username, guest=e.guest)
                for e in state.entrants
                if e.player_id not in withdrawn
            ]
        note = notices_pb2.Notification(
            notification_id=f"tsoon:{spec.tournament_id}:{number}",
            kind=notices_pb2.NOTIFICATION_KIND_ROUND_STARTING_SOON,
            tournament_id=spec.tournament_id,
            tournament_name=spec.name,
            round=number,
            game=spec.game,
        )
        note.starts_at.FromMilliseconds(at)
        await self.send(players, note)
        await self.store.mark_noticed(spec.tournament_id, what)
