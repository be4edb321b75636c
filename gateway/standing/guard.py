"""The front door's access decision for one call (gateway/limits.py calls it before anything
else): the method must have an entry in the role table (roles.py), a staff method needs a session
whose role it lists, and a session whose account is suspended or banned is refused whatever it
calls. It also ends the open streams of an account the moment a suspension or ban reaches this
gateway (StandingTables tells it): each stream's task is cancelled and the stream's wrapper answers
with the refusal instead of the cancellation."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import grpc

from gateway.auth import Identity
from gateway.standing.model import BAN, SanctionRecord, iso, now_ms
from gateway.standing.roles import EVERYONE, POLICY, Access, role_names
from gateway.standing.tables import StandingTables
from kit.errors import Refused


def barred_refusal(sanction: SanctionRecord) -> Refused:
    if sanction.kind == BAN:
        return Refused(
            grpc.StatusCode.PERMISSION_DENIED,
            "ACCOUNT_BANNED",
            f"this account is banned: {sanction.reason}",
            metadata={"reason": sanction.reason},
        )
    until = iso(sanction.ends_ms)
    return Refused(
        grpc.StatusCode.PERMISSION_DENIED,
        "ACCOUNT_SUSPENDED",
        f"this account is suspended until {until}: {sanction.reason}",
        metadata={"until": until, "reason": sanction.reason},
    )


class Guard:
    def __init__(self, tables: StandingTables, policy: dict[str, Access] | None = None) -> None:
        self.tables = tables
        self.policy = POLICY if policy is None else policy
        self.streams: dict[str, set[asyncio.Task[object]]] = {}
        self.kicked: dict[asyncio.Task[object], Refused] = {}
        tables.listeners.append(self._changed)

    def admit(self, method: str, identity: Callable[[], Identity | None], strict: Callable[[], Identity]) -> None:
        """Refuse the call (Refused) or let it through. `identity` gives the caller's session or
        None; `strict` the session or its UNAUTHENTICATED refusal (for staff methods)."""
        access = self.policy.get(method)
        if access is None:
            raise Refused(grpc.StatusCode.UNIMPLEMENTED, "UNKNOWN_METHOD", "this method is not served here")
        caller = identity()
        if caller is not None and not caller.guest:
            barred = self.tables.barred(caller.player_id)
            if barred is not None:
                raise barred_refusal(barred)
        if access.anonymous or access.roles == EVERYONE:
            return
        caller = strict()
        role = self.tables.role(caller.player_id) if not caller.guest else None
        if role not in access.roles:
            raise Refused(
                grpc.StatusCode.PERMISSION_DENIED,
                "ROLE_REQUIRED",
                f"this needs the role {role_names(access).replace(',', ' or ')}",
                metadata={"roles": role_names(access)},
            )

    # -- open streams -----------------------------------------------------------------------------

    def watch(self, player_id: str | None) -> asyncio.Task[object] | None:
        """Register the current task as one of the player's open streams."""
        task = asyncio.current_task()
        if player_id is None or task is None:
            return None
        self.streams.setdefault(player_id, set()).add(task)
        return task

    def unwatch(self, player_id: str | None, task: asyncio.Task[object] | None) -> Refused | None:
        """Forget the stream; the refusal it was ended with, if it was."""
        if player_id is None or task is None:
            return None
        tasks = self.streams.get(player_id)
        if tasks is not None:
            tasks.discard(task)
            if not tasks:
                del self.streams[player_id]
        return self.kicked.pop(task, None)

    def _changed(self, player_id: str) -> None:
        barred = self.tables.barred(player_id, now_ms())
        if barred is None:
            return
        refusal = barred_refusal(barred)
        for task in self.streams.get(player_id, ()):
            if task not in self.kicked and not task.done():
                self.kicked[task] = refusal
                task.cancel()
