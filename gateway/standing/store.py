"""Standing in Redis (keys: the "Standing" section of kit/redis/keys.py): roles, sanctions, blocks
and mutes, warnings, reports and the audit log. Every staff action writes its audit entry here, in
the same method that makes the change, so no path can change standing without one.

Accounts are found by username (the account hash, owned by gateway/auth.py, read here). Names kept
beside ids (a block list, a report) are the names at the time; a rename rewrites them
(`rename_refs`). Roles and sanctions in force go to every gateway through StandingTables: a change
is published with the player's id.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import grpc
from tafel.admin.v1 import admin_pb2
from tafel.play.v1 import play_pb2, safety_pb2, social_pb2

from gateway.auth import USERNAME, Identity
from gateway.standing.model import (
    BAN,
    CHAT_MUTE,
    KIND_WORDS,
    MAX_DURATION_S,
    MAX_TEXT,
    MIN_DURATION_S,
    SanctionRecord,
    WarningRecord,
    decode_sanctions,
    iso,
    new_id,
    now_ms,
    stamp,
)
from gateway.standing.roles import ADMIN, PLAYER, ROLE_NAMES, STAFF_ROLES
from gateway.standing.tables import StandingTables, parse_role
from kit.errors import Refused, invalid
from kit.redis.keys import (
    AUDIT_LOG,
    AUDIT_NAMES,
    REPORTS_ALL,
    REPORTS_OPEN,
    SANCTIONS,
    STANDING_CHANNEL,
    account_key,
    avoid_channel,
    player_key,
    report_key,
    report_request_key,
)
from kit.redis.keys import (
    STAFF_ROLES as STAFF_ROLES_KEY,
)
from kit.redis.layer import RedisLayer
from kit.redis.replies import pairs, text
from kit.redis.scripts import script

# A reported chat line's channel and the lines around it (gateway/chat reads them).
ChatLookup = Callable[[], Awaitable[tuple[social_pb2.ChatChannel, list[social_pb2.ChatMessage]]]]
MAX_BLOCKS = 1000
REQUEST_TTL_S = 86_400
DELETED_NAME = "deleted player"


@dataclass(frozen=True)
class AccountRow:
    player_id: str
    username: str
    joined_ms: int
    alias: str  # the account's name in the audit log (AUDIT_NAMES)

    def player(self) -> play_pb2.Player:
        return play_pb2.Player(player_id=self.player_id, username=self.username, guest=False)


def not_found(username: str) -> Refused:
    return Refused(grpc.StatusCode.NOT_FOUND, "PLAYER_NOT_FOUND", f"there is no player called {username}")


def required_text(value: str, what: str, limit: int = MAX_TEXT) -> str:
    value = value.strip()
    if not value or len(value) > limit:
        raise invalid("BAD_DETAILS", f"{what} is required, at most {limit} characters")
    return value


class StandingStore:
    def __init__(self, redis: RedisLayer, tables: StandingTables | None = None) -> None:
        self.redis = redis
        self.tables = tables  # refreshed at once after a change made here (others learn by pub/sub)

    # -- accounts -----------------------------------------------------------------------------------

    async def account(self, username: str) -> AccountRow | None:
        if not USERNAME.match(username):
            return None
        key = account_key(username)
        row: Any = await self.redis.call("HMGET", key, "id", "name", "created", "alias")
        if row[0] is None:
            return None
        alias = text(row[3]) if row[3] is not None else ""
        if not alias:
            # Made on first use; HSETNX: two gateways racing keep one.
            await self.redis.call("HSETNX", key, "alias", secrets.token_hex(8))
            alias = text(await self.redis.call("HGET", key, "alias"))
        return AccountRow(text(row[0]), text(row[1]), int(row[2] or 0), alias)

    async def require(self, username: str) -> AccountRow:
        found = await self.account(username.strip())
        if found is None:
            raise not_found(username)
        return found

    async def require_other(self, me: Identity, username: str) -> AccountRow:
        found = await self.require(username)
        if found.player_id == me.player_id:
            raise invalid("SELF_NOT_ALLOWED", "you cannot do this to yourself", field="username")
        return found

    async def changed(self, player_id: str) -> None:
        await self.redis.call("PUBLISH", STANDING_CHANNEL, player_id)
        if self.tables is not None:
            await self.tables.refresh(player_id)

    # -- the audit log ------------------------------------------------------------------------------

    async def audit(
        self,
        actor: AccountRow | None,
        action: str,
        subject: AccountRow | None,
        reason: str,
        details: dict[str, str] | None = None,
        *,
        erased: bool = False,
    ) -> None:
        """Append one entry. `actor` None: the server itself (tafel-admin on the server). `erased`:
        the subject's account is gone, so its alias is not named again (it resolves to no one)."""
        rows = (actor,) if erased else (actor, subject)
        names = {row.alias: json.dumps({"id": row.player_id, "name": row.username}) for row in rows if row}
        commands: list[Any] = []
        if names:
            commands.append(("HSET", AUDIT_NAMES, *[part for pair in names.items() for part in pair]))
        fields = {
            "at": str(now_ms()),
            "actor": actor.alias if actor else "",
            "action": action,
            "subject": subject.alias if subject else "",
            "reason": reason,
            "details": json.dumps(details or {}, separators=(",", ":")),
        }
        commands.append(("XADD", AUDIT_LOG, "*", *[part for pair in fields.items() for part in pair]))
        await self.redis.many(commands)

    async def audit_log(self, username: str, page_size: int, page_token: str) -> tuple[list[admin_pb2.AuditEntry], str]:
        size = 50 if page_size <= 0 else min(page_size, 100)
        if page_size < 0:
            raise invalid("BAD_PAGE_SIZE", "page_size is negative", field="page_size")
        subject = ""
        if username:
            subject = (await self.require(username)).alias
        end = "+"
        if page_token:
            if not _stream_id(page_token):
                raise invalid("BAD_PAGE_TOKEN", "this page token is not one this listing issued", field="page_token")
            end = f"({page_token}"
        entries: list[tuple[str, dict[bytes, bytes]]] = []
        scanned = 0
        last = ""
        while len(entries) < size and scanned < 10_000:
            batch: Any = await self.redis.call("XREVRANGE", AUDIT_LOG, end, "-", "COUNT", 200)
            if not batch:
                last = ""
                break
            for entry_id, flat in batch:
                scanned += 1
                last = text(entry_id)
                fields = pairs(flat)
                if subject and text(fields.get(b"subject", b"")) != subject:
                    continue
                entries.append((last, fields))
                if len(entries) == size:
                    break
            end = f"({last}"
            if len(batch) < 200 and len(entries) < size:
                last = ""
                break
        aliases = {text(f.get(k, b"")) for _, f in entries for k in (b"actor", b"subject")} - {""}
        names = await self._alias_names(aliases)
        out = [self._entry(entry_id, fields, names) for entry_id, fields in entries]
        return out, last

    async def _alias_names(self, aliases: set[str]) -> dict[str, play_pb2.Player]:
        ordered = sorted(aliases)
        if not ordered:
            return {}
        raw: Any = await self.redis.call("HMGET", AUDIT_NAMES, *ordered)
        out: dict[str, play_pb2.Player] = {}
        for alias, value in zip(ordered, raw, strict=True):
            if value is None:
                out[alias] = play_pb2.Player(username=DELETED_NAME)
            else:
                known = json.loads(value)
                out[alias] = play_pb2.Player(player_id=known["id"], username=known["name"])
        return out

    @staticmethod
    def _entry(entry_id: str, fields: dict[bytes, bytes], names: dict[str, play_pb2.Player]) -> admin_pb2.AuditEntry:
        out = admin_pb2.AuditEntry(
            entry_id=entry_id,
            at=stamp(int(fields.get(b"at", b"0"))),
            action=text(fields.get(b"action", b"")),
            reason=text(fields.get(b"reason", b"")),
        )
        actor = text(fields.get(b"actor", b""))
        out.actor.CopyFrom(names[actor] if actor else play_pb2.Player(username="server"))
        subject = text(fields.get(b"subject", b""))
        if subject:
            out.subject.CopyFrom(names[subject])
        out.details.update(json.loads(fields.get(b"details", b"{}")))
        return out

    # -- roles --------------------------------------------------------------------------------------

    async def role_of(self, player_id: str) -> int:
        return parse_role(await self.redis.call("HGET", STAFF_ROLES_KEY, player_id))[0]

    async def set_role(self, actor: AccountRow | None, username: str, role: int, reason: str) -> AccountRow:
        if role not in ROLE_NAMES:
            raise invalid("BAD_ROLE", "choose a role: player, organiser, moderator or admin", field="role")
        reason = required_text(reason, "a reason")
        subject = await self.require(username)
        before = await self.role_of(subject.player_id)
        if before == ADMIN and role != ADMIN:
            admins = [r for r in (await self.staff()) if r[1] == ADMIN]
            if len(admins) <= 1:
                raise Refused(
                    grpc.StatusCode.FAILED_PRECONDITION,
                    "LAST_ADMIN",
                    "the platform's last admin cannot give up the role",
                )
        if role == PLAYER:
            await self.redis.call("HDEL", STAFF_ROLES_KEY, subject.player_id)
        else:
            await self.redis.call("HSET", STAFF_ROLES_KEY, subject.player_id, f"{ROLE_NAMES[role]}|{subject.username}")
        await self.audit(actor, "role", subject, reason, {"from": ROLE_NAMES[before], "to": ROLE_NAMES[role]})
        await self.changed(subject.player_id)
        return subject

    async def staff(self) -> list[tuple[str, int, str]]:
        """(player id, role, username) of every staff account."""
        raw = pairs(await self.redis.call("HGETALL", STAFF_ROLES_KEY))
        out = []
        for pid, value in raw.items():
            role, name = parse_role(value)
            if role in STAFF_ROLES:
                out.append((text(pid), role, name))
        return sorted(out, key=lambda row: row[2].lower())

    # -- blocks and mutes ---------------------------------------------------------------------------

    async def block(self, me: Identity, username: str) -> AccountRow:
        other = await self.require_other(me, username)
        mine = player_key(me.player_id, "blocks")
        if await self.redis.call("HLEN", mine) >= MAX_BLOCKS and not await self.redis.call(
            "HEXISTS", mine, other.player_id
        ):
            raise Refused(
                grpc.StatusCode.RESOURCE_EXHAUSTED,
                "TOO_MANY_BLOCKS",
                f"you block {MAX_BLOCKS} players already; unblock one first",
            )
        await self.redis.many(
            [
                ("HSET", mine, other.player_id, other.username),
                ("SADD", player_key(other.player_id, "blocked-by"), me.player_id),
            ]
        )
        await self.avoid_changed(me.player_id)
        return other

    async def unblock(self, me: Identity, username: str) -> None:
        other = await self.require(username)
        await self.redis.many(
            [
                ("HDEL", player_key(me.player_id, "blocks"), other.player_id),
                ("SREM", player_key(other.player_id, "blocked-by"), me.player_id),
            ]
        )
        await self.avoid_changed(me.player_id)

    async def mute(self, me: Identity, username: str) -> AccountRow:
        other = await self.require_other(me, username)
        await self.redis.many(
            [
                ("HSET", player_key(me.player_id, "mutes"), other.player_id, other.username),
                ("SADD", player_key(other.player_id, "muted-by"), me.player_id),
            ]
        )
        await self.avoid_changed(me.player_id)
        return other

    async def unmute(self, me: Identity, username: str) -> None:
        other = await self.require(username)
        await self.redis.many(
            [
                ("HDEL", player_key(me.player_id, "mutes"), other.player_id),
                ("SREM", player_key(other.player_id, "muted-by"), me.player_id),
            ]
        )
        await self.avoid_changed(me.player_id)

    async def avoid_changed(self, player_id: str) -> None:
        """Tell the player's chat watches (any gateway) to re-read the lists: a block hides the
        blocked player's later lines at once."""
        await self.redis.call(await self.redis.publish_verb(), avoid_channel(player_id), b"1")

    async def blocked_and_muted(self, player_id: str) -> tuple[list[play_pb2.Player], list[play_pb2.Player]]:
        blocks, mutes = await self.redis.many(
            [("HGETALL", player_key(player_id, "blocks")), ("HGETALL", player_key(player_id, "mutes"))]
        )

        def players(flat: Any) -> list[play_pb2.Player]:
            found = [play_pb2.Player(player_id=text(k), username=text(v)) for k, v in pairs(flat).items()]
            return sorted(found, key=lambda p: p.username.lower())

        return players(blocks), players(mutes)

    async def avoided(self, player_id: str) -> set[str]:
        """Everyone the player must never be paired with: whom they block and who blocks them."""
        blocks, by = await self.redis.many(
            [("HKEYS", player_key(player_id, "blocks")), ("SMEMBERS", player_key(player_id, "blocked-by"))]
        )
        return {text(p) for p in (*blocks, *by)}

    # -- reports ------------------------------------------------------------------------------------

    async def report(self, me: Identity, request: safety_pb2.ReportRequest, chat: ChatLookup | None = None) -> str:
        """File a report once per request id. `chat`: the reported chat line's channel and the
        lines around it (it refuses a line the reporter cannot read or that is not there)."""
        if request.reason not in safety_pb2.ReportReason.values() or request.reason == 0:
            raise invalid("BAD_REPORT_REASON", "choose a reason from the list", field="reason")
        if len(request.details) > MAX_TEXT:
            raise invalid("BAD_DETAILS", f"details are at most {MAX_TEXT} characters", field="details")
        done_key = report_request_key(me.player_id, request.request_id)
        done = await self.redis.call("GET", done_key)
        if done is not None:
            return text(done)
        reported = await self.require_other(me, request.username)
        channel, context = await chat() if chat is not None else (None, [])
        report_id = new_id()
        at = now_ms()
        report = admin_pb2.Report(
            report_id=report_id,
            reporter=me.player(),
            reported=reported.player(),
            game_id=request.game_id,
            message_id=request.message_id,
            reason=request.reason,
            details=request.details.strip(),
            created_at=stamp(at),
            status=admin_pb2.REPORT_STATUS_OPEN,
            chat_context=context,
        )
        if channel is not None:
            report.chat_channel.CopyFrom(channel)
        claimed = await self.redis.call("SET", done_key, report_id, "NX", "EX", REQUEST_TTL_S)
        if not claimed:  # the same request, concurrently: its first report stands
            return text(await self.redis.call("GET", done_key))
        await self.redis.many(
            [
                ("SET", report_key(report_id), report.SerializeToString()),
                ("ZADD", REPORTS_OPEN, at, report_id),
                ("ZADD", REPORTS_ALL, at, report_id),
                ("ZADD", player_key(me.player_id, "reports-made"), at, report_id),
                ("ZADD", player_key(reported.player_id, "reports-about"), at, report_id),
            ]
        )
        return report_id

    async def get_report(self, report_id: str) -> admin_pb2.Report:
        raw = await self.redis.call("GET", report_key(report_id)) if _report_id(report_id) else None
        if raw is None:
            raise Refused(grpc.StatusCode.NOT_FOUND, "REPORT_NOT_FOUND", "there is no report with this id")
        return admin_pb2.Report.FromString(raw)

    async def reports(
        self, include_resolved: bool, page_size: int, page_token: str
    ) -> tuple[list[admin_pb2.Report], str, int]:
        if page_size < 0:
            raise invalid("BAD_PAGE_SIZE", "page_size is negative", field="page_size")
        size = 25 if page_size == 0 else min(page_size, 100)
        try:
            offset = int(page_token) if page_token else 0
        except ValueError:
            raise invalid(
                "BAD_PAGE_TOKEN", "this page token is not one this listing issued", field="page_token"
            ) from None
        listing = REPORTS_ALL if include_resolved else REPORTS_OPEN
        # Open ones oldest first (a queue); the whole history newest first.
        order = "ZRANGE" if not include_resolved else "ZREVRANGE"
        ids, open_count = await self.redis.many([(order, listing, offset, offset + size), ("ZCARD", REPORTS_OPEN)])
        more = len(ids) > size
        raw = await self.redis.many([("GET", report_key(text(i))) for i in ids[:size]])
        reports = [admin_pb2.Report.FromString(r) for r in raw if r is not None]
        return reports, str(offset + size) if more else "", int(open_count)

    async def resolve(self, actor: AccountRow, report_id: str, resolution: str) -> admin_pb2.Report:
        resolution = required_text(resolution, "a resolution")
        report = await self.get_report(report_id)
        if report.status == admin_pb2.REPORT_STATUS_RESOLVED:
            raise Refused(grpc.StatusCode.FAILED_PRECONDITION, "REPORT_RESOLVED", "this report was resolved already")
        report.status = admin_pb2.REPORT_STATUS_RESOLVED
        report.resolved_by.CopyFrom(actor.player())
        report.resolution = resolution
        report.resolved_at.CopyFrom(stamp(now_ms()))
        await self.redis.many(
            [("SET", report_key(report_id), report.SerializeToString()), ("ZREM", REPORTS_OPEN, report_id)]
        )
        subject = await self.account(report.reported.username)
        await self.audit(actor, "resolve_report", subject, resolution, {"report": report_id})
        return report

    async def report_counts(self, player_id: str) -> tuple[int, int]:
        about, made = await self.redis.many(
            [("ZCARD", player_key(player_id, "reports-about")), ("ZCARD", player_key(player_id, "reports-made"))]
        )
        return int(about), int(made)

    # -- warnings and sanctions ---------------------------------------------------------------------

    async def warn(self, actor: AccountRow, username: str, message: str, report_id: str) -> WarningRecord:
        message = required_text(message, "a message")
        subject = await self.require(username)
        warning = WarningRecord(new_id(), message, now_ms())
        await self.redis.call("LPUSH", player_key(subject.player_id, "warnings"), warning.encode())
        await self.audit(actor, "warn", subject, message, {"report": report_id} if report_id else {})
        return warning

    async def warnings(self, player_id: str) -> list[WarningRecord]:
        raw: Any = await self.redis.call("LRANGE", player_key(player_id, "warnings"), 0, 99)
        return [WarningRecord.decode(item) for item in raw]

    async def sanction(
        self, actor: AccountRow, username: str, kind: int, duration_s: float, reason: str, report_id: str
    ) -> tuple[AccountRow, SanctionRecord]:
        if kind not in KIND_WORDS:
            raise invalid("BAD_SANCTION", "choose a chat mute, a suspension or a ban", field="kind")
        if kind != BAN and not MIN_DURATION_S <= duration_s <= MAX_DURATION_S:
            raise invalid("BAD_SANCTION", "a mute or suspension lasts 1 minute to 365 days", field="duration")
        reason = required_text(reason, "a reason")
        subject = await self.require(username)
        if await self.role_of(subject.player_id) in STAFF_ROLES:
            raise Refused(
                grpc.StatusCode.FAILED_PRECONDITION,
                "STAFF_NOT_SANCTIONABLE",
                "take this account's staff role away first",
            )
        at = now_ms()
        record = SanctionRecord(new_id(), kind, reason, at, 0 if kind == BAN else at + int(duration_s * 1000))
        await self.redis.run(script("standing/sanction"), [SANCTIONS], [subject.player_id, at, "add", record.encode()])
        await self.redis.call("HSET", player_key(subject.player_id, "sanctions"), record.sanction_id, record.encode())
        details = {"kind": KIND_WORDS[kind], "sanction": record.sanction_id}
        if record.ends_ms:
            details["until"] = iso(record.ends_ms)
        if report_id:
            details["report"] = report_id
        await self.audit(actor, "sanction", subject, reason, details)
        await self.changed(subject.player_id)
        return subject, record

    async def lift(self, actor: AccountRow, username: str, sanction_id: str, reason: str) -> None:
        reason = required_text(reason, "a reason")
        subject = await self.require(username)
        at = now_ms()
        lifted = await self.redis.run(
            script("standing/sanction"), [SANCTIONS], [subject.player_id, at, "lift", sanction_id]
        )
        if not int(lifted):
            raise Refused(
                grpc.StatusCode.NOT_FOUND, "SANCTION_NOT_FOUND", "this account has no sanction in force with this id"
            )
        history = player_key(subject.player_id, "sanctions")
        raw = await self.redis.call("HGET", history, sanction_id)
        if raw is not None:
            old = SanctionRecord.decode(raw)
            updated = SanctionRecord(old.sanction_id, old.kind, old.reason, old.starts_ms, old.ends_ms, at)
            await self.redis.call("HSET", history, sanction_id, updated.encode())
        await self.audit(actor, "lift", subject, reason, {"sanction": sanction_id})
        await self.changed(subject.player_id)

    async def sanction_history(self, player_id: str) -> list[SanctionRecord]:
        raw = pairs(await self.redis.call("HGETALL", player_key(player_id, "sanctions")))
        return sorted((SanctionRecord.decode(v) for v in raw.values()), key=lambda s: -s.starts_ms)

    async def in_force(self, player_id: str) -> list[SanctionRecord]:
        at = now_ms()
        found = decode_sanctions(await self.redis.call("HGET", SANCTIONS, player_id))
        return [s for s in found if s.in_force(at)]

    async def chat_muted(self, player_id: str) -> SanctionRecord | None:
        muted = [s for s in await self.in_force(player_id) if s.kind == CHAT_MUTE]
        return max(muted, key=lambda s: s.ends_ms) if muted else None


def _stream_id(value: str) -> bool:
    first, _, second = value.partition("-")
    return first.isdigit() and second.isdigit() and len(value) <= 41


def _report_id(value: str) -> bool:
    return 1 <= len(value) <= 32 and all(c in "0123456789abcdef" for c in value)
