"""The notices part of an account's data export (AccountService.ExportMyData): every kept notice
and the notice settings, as JSON-ready values."""

from __future__ import annotations

from typing import Any

from google.protobuf import json_format
from tafel.play.v1 import notices_pb2

from gateway.notices.inbox import Inbox
from gateway.notices.settings import NoticeSettingsStore


def _kind(number: int) -> str:
    return notices_pb2.NotificationKind.Name(number).removeprefix("NOTIFICATION_KIND_").lower()  # type: ignore[arg-type]


async def notices_export(inbox: Inbox, settings: NoticeSettingsStore, player_id: str) -> dict[str, Any]:
    """{"inbox": [notice, ...] newest first, "settings": {...}}; kinds as lower-case words."""
    notes = []
    for note in await inbox.all(player_id):
        entry = json_format.MessageToDict(note, preserving_proto_field_name=True)
        entry["kind"] = _kind(note.kind)
        entry["read"] = note.read
        notes.append(entry)
    chosen = await settings.get(player_id)
    quiet = chosen.quiet_hours
    return {
        "inbox": notes,
        "settings": {
            "preferences": [{"kind": _kind(p.kind), "inbox": p.inbox, "email": p.email} for p in chosen.preferences],
            "quiet_hours": {
                "enabled": quiet.enabled,
                "start_minute": quiet.start_minute,
                "end_minute": quiet.end_minute,
            },
            "time_zone": chosen.time_zone or "UTC",
            "email_digest": chosen.email_digest,
            "digest_hour": chosen.digest_hour,
        },
    }
