"""Sanctions and warnings as stored (JSON in Redis) and as sent (protobuf)."""

from __future__ import annotations

import json
import secrets
import time
from dataclasses import asdict, dataclass

from google.protobuf import timestamp_pb2
from tafel.play.v1 import play_pb2, safety_pb2

CHAT_MUTE: int = safety_pb2.SANCTION_KIND_CHAT_MUTE
SUSPENSION: int = safety_pb2.SANCTION_KIND_SUSPENSION
BAN: int = safety_pb2.SANCTION_KIND_BAN
KIND_WORDS: dict[int, str] = {CHAT_MUTE: "chat mute", SUSPENSION: "suspension", BAN: "ban"}
BARRING = frozenset({SUSPENSION, BAN})  # kinds that refuse sign-in and every call
MIN_DURATION_S, MAX_DURATION_S = 60, 365 * 24 * 3600
MAX_TEXT = 1000


def now_ms() -> int:
    return int(time.time() * 1000)


def new_id() -> str:
    return secrets.token_hex(8)


def stamp(ms: int) -> timestamp_pb2.Timestamp:
    out = timestamp_pb2.Timestamp()
    out.FromMilliseconds(ms)
    return out


def iso(ms: int) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(ms / 1000))


@dataclass(frozen=True)
class SanctionRecord:
    sanction_id: str
    kind: int
    reason: str
    starts_ms: int
    ends_ms: int  # 0: until lifted (a ban)
    lifted_ms: int = 0

    def in_force(self, at_ms: int) -> bool:
        return not self.lifted_ms and (self.ends_ms == 0 or at_ms < self.ends_ms)

    @property
    def bars(self) -> bool:
        return self.kind in BARRING

    def to_proto(self) -> safety_pb2.Sanction:
        out = safety_pb2.Sanction(sanction_id=self.sanction_id, kind=self.kind, reason=self.reason)  # type: ignore[arg-type]
        out.starts_at.FromMilliseconds(self.starts_ms)
        end = self.lifted_ms or self.ends_ms
        if end:
            out.ends_at.FromMilliseconds(end)
        return out

    def encode(self) -> str:
        return json.dumps(asdict(self), separators=(",", ":"))

    @classmethod
    def decode(cls, raw: bytes | str) -> SanctionRecord:
        return cls(**json.loads(raw))


def decode_sanctions(raw: bytes | str | None) -> tuple[SanctionRecord, ...]:
    if not raw:
        return ()
    return tuple(SanctionRecord(**item) for item in json.loads(raw))


def encode_sanctions(sanctions: tuple[SanctionRecord, ...] | list[SanctionRecord]) -> str:
    return json.dumps([asdict(item) for item in sanctions], separators=(",", ":"))


@dataclass(frozen=True)
class WarningRecord:
    warning_id: str
    message: str
    at_ms: int

    def to_proto(self) -> safety_pb2.Warning:
        return safety_pb2.Warning(warning_id=self.warning_id, message=self.message, at=stamp(self.at_ms))

    def encode(self) -> str:
        return json.dumps(asdict(self), separators=(",", ":"))

    @classmethod
    def decode(cls, raw: bytes | str) -> WarningRecord:
        return cls(**json.loads(raw))


def player(player_id: str, username: str) -> play_pb2.Player:
    return play_pb2.Player(player_id=player_id, username=username, guest=False)
