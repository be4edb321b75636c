"""The staff's calls (tafel.admin.v1): reports, look-ups, warnings, sanctions, renames, the audit
log, and roles. For an account that holds a staff role; everyone else is refused with
PermissionDenied, reason ROLE_REQUIRED (its metadata "roles" says who may).

    async with await TafelClient.connect("127.0.0.1:50051") as client:
        await client.sign_in("alice", password)          # a moderator
        staff = StaffClient(client)
        for report in (await staff.list_reports()).reports:
            ...
        await staff.sanction("troll", "suspension", "insults in chat", duration_s=7 * 86400)

It rides on a signed-in TafelClient: the same channel, session, retries and errors. Reads are
retried like the public API's; the actions are not (tafel/retry.py), as none carries a request id.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

from tafel.admin.v1 import admin_pb2, admin_pb2_grpc
from tafel.client import TafelClient
from tafel.play.v1 import play_pb2, safety_pb2
from tafel.requests import duration, role, sanction_kind


class StaffClient:
    """ModerationService (moderators and admins) and AdminService (admins) over `client`."""

    def __init__(self, client: TafelClient) -> None:
        self.client = client
        self.moderation = admin_pb2_grpc.ModerationServiceStub(client.channel)
        self.admin = admin_pb2_grpc.AdminServiceStub(client.channel)
        client.never_resend(self.moderation, self.admin)

    # -- reports ------------------------------------------------------------------------------------

    async def list_reports(
        self, *, include_resolved: bool = False, page_size: int = 0, page_token: str = ""
    ) -> admin_pb2.ListReportsResponse:
        """Open reports, oldest first (every report with `include_resolved`), one page; the answer
        also counts the open ones (`open_count`)."""
        request = admin_pb2.ListReportsRequest(
            include_resolved=include_resolved, page_size=page_size, page_token=page_token
        )
        return await self.client._call(self.moderation.ListReports, request)  # type: ignore[no-any-return]

    async def all_reports(self, *, include_resolved: bool = False) -> AsyncIterator[admin_pb2.Report]:
        """Every report the queue holds, page after page."""
        token = ""
        while True:
            page = await self.list_reports(include_resolved=include_resolved, page_size=100, page_token=token)
            for report in page.reports:
                yield report
            token = page.next_page_token
            if not token:
                return

    async def get_report(self, report_id: str) -> admin_pb2.GetReportResponse:
        """The report, the reported game's record (when finished) and the reported account now."""
        request = admin_pb2.GetReportRequest(report_id=report_id)
        return await self.client._call(self.moderation.GetReport, request)  # type: ignore[no-any-return]

    async def resolve_report(self, report_id: str, resolution: str) -> admin_pb2.Report:
        """Close a report with a note of what was done (kept in the audit log)."""
        request = admin_pb2.ResolveReportRequest(report_id=report_id, resolution=resolution)
        return (await self.client._call(self.moderation.ResolveReport, request)).report  # type: ignore[no-any-return]

    # -- accounts -----------------------------------------------------------------------------------

    async def look_up(self, username: str) -> admin_pb2.Account:
        """Role, when it joined, sanctions (in force and past), warnings, report counts, last games."""
        request = admin_pb2.LookUpAccountRequest(username=username)
        return (await self.client._call(self.moderation.LookUpAccount, request)).account  # type: ignore[no-any-return]

    async def warn(self, username: str, message: str, *, report_id: str = "") -> safety_pb2.Warning:
        """A warning the player reads (their standing, and at their next sign-in)."""
        request = admin_pb2.WarnPlayerRequest(username=username, message=message, report_id=report_id)
        return (await self.client._call(self.moderation.WarnPlayer, request)).warning  # type: ignore[no-any-return]

    async def sanction(
        self,
        username: str,
        kind: str | safety_pb2.SanctionKind.ValueType,
        reason: str,
        *,
        duration_s: float = 0.0,
        report_id: str = "",
    ) -> safety_pb2.Sanction:
        """`kind`: "chat_mute" or "suspension" (both for `duration_s`, 1 minute to 365 days) or
        "ban" (until lifted), or a SanctionKind. `reason` is shown to the person."""
        request = admin_pb2.SanctionPlayerRequest(
            username=username, kind=sanction_kind(kind), reason=reason, report_id=report_id
        )
        if duration_s:
            request.duration.CopyFrom(duration(duration_s))
        return (await self.client._call(self.moderation.SanctionPlayer, request)).sanction  # type: ignore[no-any-return]

    async def lift_sanction(self, username: str, sanction_id: str, reason: str) -> None:
        request = admin_pb2.LiftSanctionRequest(username=username, sanction_id=sanction_id, reason=reason)
        await self.client._call(self.moderation.LiftSanction, request)

    async def rename(self, username: str, new_username: str, reason: str) -> play_pb2.Player:
        """A new name for the account (its sessions are revoked; it signs in with the new one)."""
        request = admin_pb2.RenameAccountRequest(username=username, new_username=new_username, reason=reason)
        return (await self.client._call(self.moderation.RenameAccount, request)).player  # type: ignore[no-any-return]

    async def audit_log(
        self, username: str = "", *, page_size: int = 0, page_token: str = ""
    ) -> admin_pb2.ListAuditLogResponse:
        """The audit log, newest first, one page (only the entries about `username` if given)."""
        request = admin_pb2.ListAuditLogRequest(username=username, page_size=page_size, page_token=page_token)
        return await self.client._call(self.moderation.ListAuditLog, request)  # type: ignore[no-any-return]

    # -- admins only --------------------------------------------------------------------------------

    async def set_role(self, username: str, new_role: str | play_pb2.Role.ValueType, reason: str) -> admin_pb2.Account:
        """`new_role`: "player" (takes a staff role away), "organiser", "moderator" or "admin"."""
        request = admin_pb2.SetRoleRequest(username=username, role=role(new_role), reason=reason)
        return (await self.client._call(self.admin.SetRole, request)).account  # type: ignore[no-any-return]

    async def list_staff(self) -> list[admin_pb2.Account]:
        response = await self.client._call(self.admin.ListStaff, admin_pb2.ListStaffRequest())
        return list(response.staff)
