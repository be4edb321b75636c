"""What the SDK puts in its requests: request ids, the find-match request, durations, enum values
by name (report reasons, sanction kinds, roles, decline reasons, offer kinds, seat preferences, chat
channel kinds, challenge policies), and the
order of event ids (to resume a watch after the last event seen). Below the client and the play
stream, which both use them (the SDK's layers: errors/retry -> requests -> play_stream -> client
-> botplay)."""

from __future__ import annotations

import itertools
import os
import secrets
from typing import Any, cast

from google.protobuf.duration_pb2 import Duration
from google.protobuf.message import Message

from tafel.messages import game_options
from tafel.play.v1 import challenges_pb2, notices_pb2, play_pb2, safety_pb2, social_pb2

# Request ids: a random prefix per process and a counter. Unique without a system call per id
# (uuid4 reads the OS's random source each time: a visible share of a fast bot's CPU).
_REQUEST_PREFIX = secrets.token_hex(8)
_REQUEST_COUNTER = itertools.count(1)


def _new_request_prefix() -> None:
    global _REQUEST_PREFIX
    _REQUEST_PREFIX = secrets.token_hex(8)


os.register_at_fork(after_in_child=_new_request_prefix)  # a forked child must not repeat ids


def new_request_id() -> str:
    return f"{_REQUEST_PREFIX}-{next(_REQUEST_COUNTER):x}"


def duration(seconds: float) -> Duration:
    value = Duration()
    value.FromNanoseconds(int(seconds * 1e9))
    return value


# Correspondence controls the platform offers (TimeControl.days_per_move).
DAYS_PER_MOVE = (1, 2, 3, 5, 7, 10, 14)


def set_time_control(
    control: play_pb2.TimeControl, per_move_s: float | None = None, days_per_move: int | None = None
) -> None:
    """Fill a request's time control: seconds a move, or days a move (correspondence). Both given
    is the server's BAD_TIME_CONTROL to say, not the SDK's."""
    if per_move_s is not None:
        control.per_move.CopyFrom(duration(per_move_s))
    if days_per_move is not None:
        control.days_per_move = days_per_move


def find_match_request(
    game: str,
    options: Message | None = None,
    *,
    per_move_s: float | None = None,
    days_per_move: int | None = None,
    min_seats: int = 0,
    max_seats: int = 0,
) -> play_pb2.FindMatchRequest:
    # The request id lets a resend (after a lost connection, through any gateway) take over the
    # ticket this search queued instead of being refused ALREADY_QUEUED.
    request = play_pb2.FindMatchRequest(
        game=game,
        options=game_options(options),
        min_seats=min_seats,
        max_seats=max_seats,
        request_id=new_request_id(),
    )
    set_time_control(request.time_control, per_move_s, days_per_move)
    return request


def event_position(event_id: str) -> tuple[int, int]:
    """Event ids are "<version>-<index>"; order them numerically."""
    version, _, index = event_id.partition("-")
    return int(version), int(index or 0)


def is_after(event_id: str, last: str) -> bool:
    return event_position(event_id) > event_position(last)


def _enum_by_name(enum: Any, prefix: str, value: str | int, what: str) -> int:
    """An enum value from its number or its short name, any case, "-" or " " for "_"
    ("offensive-name" -> REPORT_REASON_OFFENSIVE_NAME); ValueError names the choices."""
    if isinstance(value, int):
        return value
    name = prefix + value.strip().upper().replace("-", "_").replace(" ", "_")
    if name in enum.keys() and not name.endswith("_UNSPECIFIED"):
        return int(enum.Value(name))
    raise ValueError(f"unknown {what} {value!r}: choose from {', '.join(enum_names(enum, prefix))}")


def enum_names(enum: Any, prefix: str) -> list[str]:
    """The short names of an enum's values, "_UNSPECIFIED" left out (["abuse", "spam", ...])."""
    return [name[len(prefix) :].lower() for name in enum.keys() if not name.endswith("_UNSPECIFIED")]


def report_reason(value: str | int) -> safety_pb2.ReportReason.ValueType:
    return cast(
        safety_pb2.ReportReason.ValueType,
        _enum_by_name(safety_pb2.ReportReason, "REPORT_REASON_", value, "report reason"),
    )


def sanction_kind(value: str | int) -> safety_pb2.SanctionKind.ValueType:
    """ "chat_mute", "suspension" or "ban" (or a SanctionKind)."""
    return cast(
        safety_pb2.SanctionKind.ValueType,
        _enum_by_name(safety_pb2.SanctionKind, "SANCTION_KIND_", value, "sanction kind"),
    )


def role(value: str | int) -> play_pb2.Role.ValueType:
    """ "player", "organiser", "moderator" or "admin" (or a Role); "organizer" too."""
    if isinstance(value, str) and value.strip().lower() == "organizer":
        value = "organiser"
    return cast(play_pb2.Role.ValueType, _enum_by_name(play_pb2.Role, "ROLE_", value, "role"))


def decline_reason(value: str | int) -> challenges_pb2.DeclineReason.ValueType:
    """ "generic", "later", "too_fast", "too_slow", "casual_only", "rated_only", "not_this_game",
    "no_bots" ("too-fast", "too fast" too), or a DeclineReason."""
    return cast(
        challenges_pb2.DeclineReason.ValueType,
        _enum_by_name(challenges_pb2.DeclineReason, "DECLINE_REASON_", value, "decline reason"),
    )


def offer_kind(value: str | int) -> play_pb2.OfferKind.ValueType:
    """ "draw", "takeback" ("take back", "take-back") or "rematch", or an OfferKind."""
    if isinstance(value, str):
        value = value.replace(" ", "").replace("-", "")
    return cast(play_pb2.OfferKind.ValueType, _enum_by_name(play_pb2.OfferKind, "OFFER_KIND_", value, "offer kind"))


def seat_preference(value: str | int | None) -> challenges_pb2.SeatPreference.ValueType:
    """ "first" (to move first), "second", or None / "any" (drawn when the game starts)."""
    if value is None or (isinstance(value, str) and value.strip().lower() in ("", "any", "random")):
        return challenges_pb2.SEAT_PREFERENCE_UNSPECIFIED
    return cast(
        challenges_pb2.SeatPreference.ValueType,
        _enum_by_name(challenges_pb2.SeatPreference, "SEAT_PREFERENCE_", value, "seat preference"),
    )


# What people call a game's two channels ("players", "spectators") beside the enum's own names.
_CHAT_KINDS = {"players": "game_players", "spectators": "game_spectators", "game": "game_players"}


def chat_kind(value: str | int) -> social_pb2.ChatChannelKind.ValueType:
    """ "players" (a game's players), "spectators", "room" or "tournament" ("game_players",
    "game-spectators" too), or a ChatChannelKind."""
    if isinstance(value, str):
        value = _CHAT_KINDS.get(value.strip().lower(), value)
    return cast(
        social_pb2.ChatChannelKind.ValueType,
        _enum_by_name(social_pb2.ChatChannelKind, "CHAT_CHANNEL_KIND_", value, "chat channel"),
    )


def challenge_policy(value: str | int) -> social_pb2.ChallengePolicy.ValueType:
    """Who may challenge you by name: "everyone", "followed" (the players you follow; "friends"
    too) or "nobody", or a ChallengePolicy."""
    if isinstance(value, str) and value.strip().lower() in ("friends", "following"):
        value = "followed"
    return cast(
        social_pb2.ChallengePolicy.ValueType,
        _enum_by_name(social_pb2.ChallengePolicy, "CHALLENGE_POLICY_", value, "challenge policy"),
    )


def notification_kind(value: str | int) -> notices_pb2.NotificationKind.ValueType:
    """ "your_turn", "time_running_out", "opponent_moved", "game_over", "challenge_received",
    "round_started", "round_starting_soon", "announcement", "opponent_on_vacation",
    "result_corrected" ("your-turn", "your turn" too), or a NotificationKind."""
    return cast(
        notices_pb2.NotificationKind.ValueType,
        _enum_by_name(notices_pb2.NotificationKind, "NOTIFICATION_KIND_", value, "notice kind"),
    )
