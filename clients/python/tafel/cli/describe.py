"""One sentence per game event, with player names ("you" for the viewer), for the terminal client's
log, in the language in use. Rows and columns count from 1, as the boards draw them.

A sentence about the viewer is its own message ("You dropped a disc ..." / "alice dropped a disc
..."): Dutch and German conjugate the verb for "you" (je hebt / du hast), so "you" is never put into
a sentence made for a name."""

from __future__ import annotations

from collections.abc import Sequence

from tafel.by_game import REGISTRY
from tafel.by_game.base import Namer, seat_label, you
from tafel.games.v1 import games_pb2
from tafel.i18n import N_, _, ngettext
from tafel.names import player_name
from tafel.play.v1 import play_pb2


def game_title(game: str) -> str:
    """ "Connect Four" / "Vier op een rij" / "Vier gewinnt"; a game this client does not know by its
    machine name."""
    module = REGISTRY.get(game)
    return _(module.title) if module else game


def seat_names(players: Sequence[play_pb2.SeatedPlayer], seat: int | None) -> list[str]:
    """Names by seat; the viewer's own seat reads "you"."""
    count = max((p.seat for p in players), default=-1) + 1
    names = [seat_label(n) for n in range(count)]
    for p in players:
        names[p.seat] = player_name(p.player, seat_label(p.seat))
    if seat is not None and seat < len(names):
        names[seat] = you()
    return names


def describe(event: games_pb2.GameEvent, names: Sequence[str] = ()) -> str:
    return _describe(event, Namer(names))


def _describe(event: games_pb2.GameEvent, name: Namer) -> str:
    names = name.names
    kind = event.WhichOneof("kind")
    if kind == "created":
        title = game_title(event.created.game)
        seats = event.created.seats
        return ngettext(
            "The game of {title} began with {n} seat.", "The game of {title} began with {n} seats.", seats
        ).format(title=title, n=seats)
    if kind == "resigned":
        return name.say(event.resigned.seat, _("You resigned."), _("{name} resigned."))
    if kind == "timed_out":
        seat = event.timed_out.seat
        if event.timed_out.removed:
            return name.say(
                seat, _("You ran out of time and left the game."), _("{name} ran out of time and left the game.")
            )
        return name.say(seat, _("You ran out of time."), _("{name} ran out of time."))
    if kind == "ended":
        return _("Game over: {outcome}.").format(outcome=outcome_text(event.ended.outcome, names))
    if kind == "taken_back":
        return _("Moves were taken back to the position after move {version}.").format(
            version=event.taken_back.to_version
        )
    module = REGISTRY.get(kind or "")
    if module is not None:
        return module.describe(getattr(event, kind or ""), name)
    return "({kind})".format(kind=kind or _("unknown event"))


# How a game ended, as a player says it (Outcome.reason; tafel/games/v1/reasons.proto): the
# endings every game shares, then each game's own (its module's `endings`). A reason a newer server
# sends and this list lacks still reads as words.
ENDINGS = {
    "RESIGNED": N_("by resignation"),
    "TIMEOUT": N_("on time"),
    "DRAW_AGREED": N_("a draw was agreed"),
    "ABORTED": N_("aborted, no result"),
}
for _module in REGISTRY.values():
    ENDINGS.update(_module.endings)


def outcome_text(outcome: games_pb2.Outcome, names: Sequence[str] = ()) -> str:
    """ "you won (four in a row)", "alice won (...)", "draw (...)"; with no names, seats from 1."""
    if outcome.reason == "ABORTED":  # ended before everyone moved: no winner, no draw
        return _(ENDINGS["ABORTED"])
    reason = _(ENDINGS[outcome.reason]) if outcome.reason in ENDINGS else outcome.reason.replace("_", " ").lower()
    if len(outcome.scores):
        reason = _("{reason}, scores {scores}").format(reason=reason, scores=" - ".join(str(s) for s in outcome.scores))
    if outcome.draw:
        return _("draw ({reason})").format(reason=reason)
    name = Namer(names)
    winners = list(outcome.winners)
    me = you()
    if me in names:
        if name.names.index(me) in winners:
            return _("you won ({reason})").format(reason=reason)
        return _("you lost, {winners} won ({reason})").format(winners=_and(name, winners), reason=reason)
    return _("{winners} won ({reason})").format(winners=_and(name, winners), reason=reason)


def _and(name: Namer, seats: Sequence[int]) -> str:
    return name.join(seats)


__all__ = ["ENDINGS", "Namer", "describe", "game_title", "outcome_text", "seat_label", "seat_names", "you"]
