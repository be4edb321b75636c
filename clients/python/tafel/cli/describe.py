"""One line of text per game event, for the terminal client's log."""

from __future__ import annotations

from tafel.games.v1 import games_pb2

DICE = {1: "R", 2: "Y", 3: "G", 4: "B", 5: "W"}


def describe(event: games_pb2.GameEvent) -> str:
    kind = event.WhichOneof("kind")
    if kind == "created":
        return f"game created: {event.created.game}, {event.created.seats} seats"
    if kind == "resigned":
        return f"seat {event.resigned.seat} resigned"
    if kind == "timed_out":
        removed = " and was removed" if event.timed_out.removed else ""
        return f"seat {event.timed_out.seat} ran out of time{removed}"
    if kind == "ended":
        return f"game over: {outcome_text(event.ended.outcome, None)}"
    if kind == "connect4":
        dropped = event.connect4.disc_dropped
        return f"seat {dropped.seat} dropped a disc in column {dropped.column + 1} (row {dropped.row + 1})"
    if kind in ("plus4", "coloursquare"):
        inner = getattr(event, kind)  # the game's own Event message
        which = inner.WhichOneof("kind")
        detail = getattr(inner, which) if which else None
        return f"{which}: {_short(detail)}"
    return kind or "?"


def _short(message: object) -> str:
    return " ".join(str(message).split()) if message is not None else ""


def outcome_text(outcome: games_pb2.Outcome, seat: int | None) -> str:
    reason = outcome.reason.replace("_", " ").lower()
    if outcome.draw:
        return f"draw ({reason})"
    winners = list(outcome.winners)
    if seat is not None:
        verdict = "you won" if seat in winners else "you lost"
        return f"{verdict} ({reason})"
    return f"seat {', '.join(map(str, winners))} won ({reason})"
