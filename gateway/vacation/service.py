"""VacationService (notices.proto): accounts only (VACATION_NEEDS_ACCOUNT); a start or an end moves
the player's correspondence deadlines at once and tells their opponents
(gateway/correspondence.py)."""

from __future__ import annotations

from typing import Any, Protocol

import grpc
from tafel.play.v1 import notices_pb2, notices_pb2_grpc

from gateway.auth import Authenticator, Identity
from gateway.vacation.model import HOUR_MS, Vacation
from gateway.vacation.store import VacationStore
from kit import timesource
from kit.errors import Refused, invalid, refusing

UNAVAILABLE = "vacations are unavailable; retry"


class Changed(Protocol):
    async def vacation_changed(self, player_id: str, vacation: Vacation, *, started: bool) -> None: ...


def needs_account() -> Refused:
    return Refused(grpc.StatusCode.FAILED_PRECONDITION, "VACATION_NEEDS_ACCOUNT", "guests do not take vacations")


def message(vacation: Vacation) -> notices_pb2.Vacation:
    out = notices_pb2.Vacation(active=vacation.active)
    if vacation.active and vacation.start_ms is not None and vacation.end_ms is not None:
        out.started_at.FromMilliseconds(vacation.start_ms)
        out.ends_at.FromMilliseconds(vacation.end_ms)
    out.allowance.FromMilliseconds(vacation.allowance_ms)
    out.allowance_left.FromMilliseconds(vacation.left_ms)
    return out


def length_of(request: notices_pb2.StartVacationRequest) -> int:
    """The asked length in ms (0: unset, until ended or the allowance is used up)."""
    if not request.HasField("duration"):
        return 0
    d = request.duration
    if d.seconds <= 0 or d.nanos != 0 or d.seconds % 3600 != 0:
        raise invalid("BAD_VACATION_LENGTH", "a vacation is a positive number of whole hours", field="duration")
    return int(d.seconds) * 1000


class VacationServicer(notices_pb2_grpc.VacationServiceServicer):
    def __init__(self, auth: Authenticator, store: VacationStore, changed: Changed | None) -> None:
        self.auth = auth
        self.store = store
        self.changed = changed

    def _account(self, context: grpc.aio.ServicerContext[Any, Any]) -> Identity:
        me = self.auth.identity(context.invocation_metadata())
        if me.guest:
            raise needs_account()
        return me

    @refusing(UNAVAILABLE)
    async def StartVacation(
        self, request: notices_pb2.StartVacationRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> notices_pb2.StartVacationResponse:
        me = self._account(context)
        length = length_of(request)
        if length and length % HOUR_MS:
            raise invalid("BAD_VACATION_LENGTH", "a vacation is whole hours", field="duration")
        _, vacation = await self.store.start(me.player_id, timesource.now_ms(), length)
        # Also when it ran already (a retry): the deadlines and notices are idempotent.
        if self.changed is not None:
            await self.changed.vacation_changed(me.player_id, vacation, started=True)
        return notices_pb2.StartVacationResponse(vacation=message(vacation))

    @refusing(UNAVAILABLE)
    async def EndVacation(
        self, request: notices_pb2.EndVacationRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> notices_pb2.EndVacationResponse:
        me = self._account(context)
        _, vacation = await self.store.end(me.player_id, timesource.now_ms())
        # Also when none ran (a retry after a failure past the end's write): pulls deadlines back.
        if self.changed is not None:
            await self.changed.vacation_changed(me.player_id, vacation, started=False)
        return notices_pb2.EndVacationResponse(vacation=message(vacation))

    @refusing(UNAVAILABLE)
    async def GetVacation(
        self, request: notices_pb2.GetVacationRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> notices_pb2.GetVacationResponse:
        me = self._account(context)
        vacation = await self.store.get(me.player_id, timesource.now_ms())
        return notices_pb2.GetVacationResponse(vacation=message(vacation))
