"""tafel.admin.v1: ModerationService (moderators and admins) and AdminService (admins). Who may
call them is the role table's decision (roles.py, enforced at the front door); each handler here
names the acting staff account, because every change it makes goes into the audit log."""

from __future__ import annotations

from typing import Any

import grpc
from tafel.admin.v1 import admin_pb2, admin_pb2_grpc
from tafel.play.v1 import play_pb2

from gateway.auth import Authenticator
from gateway.records import Records
from gateway.standing.account_life import AccountLife
from gateway.standing.consequences import Consequences
from gateway.standing.store import AccountRow, StandingStore
from kit.errors import Refused, refusing

UNAVAILABLE = "the moderation storage is unavailable; retry"
RECENT_GAMES = 20


class Accounts:
    """An account as staff see it (admin_pb2.Account), from the store and the records."""

    def __init__(self, store: StandingStore, records: Records) -> None:
        self.store = store
        self.records = records

    async def describe(self, row: AccountRow) -> admin_pb2.Account:
        pid = row.player_id
        history = await self.store.sanction_history(pid)
        in_force = await self.store.in_force(pid)
        about, made = await self.store.report_counts(pid)
        recent, _ = await self.records.list(player_id=pid, game="", page_size=RECENT_GAMES, page_token="")
        out = admin_pb2.Account(
            player=row.player(),
            role=await self.store.role_of(pid),  # type: ignore[arg-type]
            sanctions=[s.to_proto() for s in in_force],
            history=[s.to_proto() for s in history],
            warnings=[w.to_proto() for w in await self.store.warnings(pid)],
            reports_about=about,
            reports_made=made,
            recent_games=recent,
        )
        if row.joined_ms:
            out.joined_at.FromMilliseconds(row.joined_ms)
        return out


class ModerationServicer(admin_pb2_grpc.ModerationServiceServicer):
    def __init__(
        self,
        auth: Authenticator,
        store: StandingStore,
        records: Records,
        consequences: Consequences,
        life: AccountLife,
    ) -> None:
        self.auth = auth
        self.store = store
        self.records = records
        self.accounts = Accounts(store, records)
        self.consequences = consequences
        self.life = life

    async def _actor(self, context: grpc.aio.ServicerContext[Any, Any]) -> AccountRow:
        identity = self.auth.identity(context.invocation_metadata())
        return await self.store.require(identity.username)

    @refusing(UNAVAILABLE)
    async def ListReports(
        self, request: admin_pb2.ListReportsRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> admin_pb2.ListReportsResponse:
        reports, token, open_count = await self.store.reports(
            request.include_resolved, request.page_size, request.page_token
        )
        return admin_pb2.ListReportsResponse(reports=reports, next_page_token=token, open_count=open_count)

    @refusing(UNAVAILABLE)
    async def GetReport(
        self, request: admin_pb2.GetReportRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> admin_pb2.GetReportResponse:
        report = await self.store.get_report(request.report_id)
        out = admin_pb2.GetReportResponse(report=report)
        if report.game_id:
            try:
                out.game.CopyFrom(await self.records.get(report.game_id))
            except Refused:
                pass  # not finished (or expired): the report stands without it
        row = await self.store.account(report.reported.username)
        if row is not None and row.player_id == report.reported.player_id:
            out.account.CopyFrom(await self.accounts.describe(row))
        return out

    @refusing(UNAVAILABLE)
    async def ResolveReport(
        self, request: admin_pb2.ResolveReportRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> admin_pb2.ResolveReportResponse:
        actor = await self._actor(context)
        report = await self.store.resolve(actor, request.report_id, request.resolution)
        return admin_pb2.ResolveReportResponse(report=report)

    @refusing(UNAVAILABLE)
    async def LookUpAccount(
        self, request: admin_pb2.LookUpAccountRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> admin_pb2.LookUpAccountResponse:
        row = await self.store.require(request.username)
        return admin_pb2.LookUpAccountResponse(account=await self.accounts.describe(row))

    @refusing(UNAVAILABLE)
    async def WarnPlayer(
        self, request: admin_pb2.WarnPlayerRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> admin_pb2.WarnPlayerResponse:
        actor = await self._actor(context)
        warning = await self.store.warn(actor, request.username, request.message, request.report_id)
        return admin_pb2.WarnPlayerResponse(warning=warning.to_proto())

    @refusing(UNAVAILABLE)
    async def SanctionPlayer(
        self, request: admin_pb2.SanctionPlayerRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> admin_pb2.SanctionPlayerResponse:
        actor = await self._actor(context)
        duration_s = request.duration.ToTimedelta().total_seconds() if request.HasField("duration") else 0.0
        subject, record = await self.store.sanction(
            actor, request.username, request.kind, duration_s, request.reason, request.report_id
        )
        if record.bars:
            await self.consequences.remove_from_play(subject.player(), f"x{record.sanction_id}")
        return admin_pb2.SanctionPlayerResponse(sanction=record.to_proto())

    @refusing(UNAVAILABLE)
    async def LiftSanction(
        self, request: admin_pb2.LiftSanctionRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> admin_pb2.LiftSanctionResponse:
        actor = await self._actor(context)
        await self.store.lift(actor, request.username, request.sanction_id, request.reason)
        return admin_pb2.LiftSanctionResponse()

    @refusing(UNAVAILABLE)
    async def RenameAccount(
        self, request: admin_pb2.RenameAccountRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> admin_pb2.RenameAccountResponse:
        actor = await self._actor(context)
        player = await self.life.rename(actor, request.username, request.new_username, request.reason)
        return admin_pb2.RenameAccountResponse(player=player)

    @refusing(UNAVAILABLE)
    async def ListAuditLog(
        self, request: admin_pb2.ListAuditLogRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> admin_pb2.ListAuditLogResponse:
        entries, token = await self.store.audit_log(request.username, request.page_size, request.page_token)
        return admin_pb2.ListAuditLogResponse(entries=entries, next_page_token=token)


class AdminServicer(admin_pb2_grpc.AdminServiceServicer):
    def __init__(self, auth: Authenticator, store: StandingStore, records: Records) -> None:
        self.auth = auth
        self.store = store
        self.accounts = Accounts(store, records)

    @refusing(UNAVAILABLE)
    async def SetRole(
        self, request: admin_pb2.SetRoleRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> admin_pb2.SetRoleResponse:
        identity = self.auth.identity(context.invocation_metadata())
        actor = await self.store.require(identity.username)
        row = await self.store.set_role(actor, request.username, request.role, request.reason)
        return admin_pb2.SetRoleResponse(account=await self.accounts.describe(row))

    @refusing(UNAVAILABLE)
    async def ListStaff(
        self, request: admin_pb2.ListStaffRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> admin_pb2.ListStaffResponse:
        out = admin_pb2.ListStaffResponse()
        for player_id, role, username in await self.store.staff():
            out.staff.append(
                admin_pb2.Account(player=play_pb2.Player(player_id=player_id, username=username), role=role)  # type: ignore[arg-type]
            )
        return out
