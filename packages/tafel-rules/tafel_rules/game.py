"""The contract every pure rules module implements.

A game is a pure state machine (OpenSpiel / boardgame.io style): frozen state values, listable
legal moves, explicit seeded chance kept inside the state, no I/O and no generated-code imports.
The service layer (codec + gRPC adapter + Redis store) wraps any module that satisfies `Rules`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar

StateT = TypeVar("StateT")
MoveT = TypeVar("MoveT")
OptionsT = TypeVar("OptionsT")
EventT = TypeVar("EventT", covariant=True)
ViewT = TypeVar("ViewT", covariant=True)


class IllegalMove(Exception):
    """A refused move. `reason` is a stable machine code (e.g. ``COLUMN_FULL``) that clients
    switch on; `message` is for people. A refused move never changes the state."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(f"{reason}: {message}")
        self.reason = reason
        self.message = message


class InvalidOptions(ValueError):
    """Options outside their documented range. `field` names the offending option."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


@dataclass(frozen=True)
class OptionSpec:
    """One table option as a game describes it (for DescribeGame and for validation)."""

    name: str
    description: str
    default: int | str
    minimum: int | None = None  # integer options
    maximum: int | None = None
    choices: tuple[str, ...] = ()  # enumerated options: exactly the values the field takes
    # Non-zero: the option may leave its default only at tables of at most this many seats (the
    # gateway checks it when a room or a match is asked for, from DescribeGame).
    max_seats: int = 0


@dataclass(frozen=True)
class RatingPool:
    """A leaderboard of the game: its rated games of min_seats..max_seats seats (at least two)
    change the ratings in it (DescribeGame `rating_pools`; the first is the one matchmaking reads)."""

    name: str  # unique across games, [a-z0-9-]
    title: str
    min_seats: int
    max_seats: int


@dataclass(frozen=True)
class PersonalBests:
    """Solo games keep personal bests by score, one board per value of the choice option
    `board_option` (DescribeGame `personal_bests`)."""

    name: str  # unique across games and pools
    board_option: str


# Outcome reasons of the platform's own endings, the same in every game (reasons.proto, "How games
# end"): both rank every seat first; an aborted game has no winner and is no draw either.
DRAW_AGREED = "DRAW_AGREED"
ABORTED = "ABORTED"
PLATFORM_ENDINGS = (DRAW_AGREED, ABORTED)
# Refusals of the platform's actions that every game shares (reasons.proto).
GAME_OVER = "GAME_OVER"
OFFER_NOT_ALLOWED = "OFFER_NOT_ALLOWED"
NOTHING_TO_TAKE_BACK = "NOTHING_TO_TAKE_BACK"


@dataclass(frozen=True)
class Outcome:
    """How a finished game ended.

    ``ranks[seat]`` is a competition rank (1 = best; equal ranks share the place, so a two-player
    draw is ``(1, 1)``). ``reason`` is a stable code such as ``FOUR_IN_A_ROW``, ``BOARD_FULL``,
    ``RESIGNED``, ``TIMEOUT``. ``scores`` is empty for games without points. An ``ABORTED`` game
    ranks every seat first but has neither winners nor a draw: it has no result at all.
    """

    ranks: tuple[int, ...]
    reason: str
    scores: tuple[int, ...] = ()

    @property
    def winners(self) -> tuple[int, ...]:
        """Seats ranked first (none in an aborted game). Every seat ranked first with more than one
        seat = a draw."""
        if self.reason == ABORTED:
            return ()
        return tuple(seat for seat, rank in enumerate(self.ranks) if rank == 1)

    @property
    def is_draw(self) -> bool:
        return self.reason != ABORTED and len(self.ranks) > 1 and all(rank == 1 for rank in self.ranks)


class Rules(Protocol, Generic[StateT, MoveT, OptionsT, EventT, ViewT]):
    """A game's rules. Every method is pure: same inputs, same outputs, inputs never mutated."""

    name: str  # stable machine name, e.g. "connect4"
    title: str  # human name, e.g. "Connect Four"
    min_seats: int
    max_seats: int
    # How the platform rates finished games (DescribeGame): empty = one pool named after the game.
    rating_pools: Sequence[RatingPool]
    personal_bests: PersonalBests | None  # None: solo games, if any, are not kept

    def option_specs(self) -> Sequence[OptionSpec]: ...

    def default_options(self) -> OptionsT: ...

    def check_options(self, options: OptionsT, seats: int) -> None:
        """Raise InvalidOptions when options or the seat count are out of range."""
        ...

    def new_game(self, options: OptionsT, seats: int, seed: int) -> StateT:
        """The initial state. `seed` feeds any chance the game has (kept in the state)."""
        ...

    def to_act(self, state: StateT) -> frozenset[int]:
        """Seats the game waits on now (several at once for simultaneous games); empty when over."""
        ...

    def legal_moves(self, state: StateT, seat: int) -> Sequence[MoveT]:
        """Every legal move for `seat` now; empty exactly when the seat may not act."""
        ...

    def apply_move(self, state: StateT, seat: int, move: MoveT) -> tuple[StateT, Sequence[EventT]]:
        """The next state and what happened, or IllegalMove with a reason."""
        ...

    def resign(self, state: StateT, seat: int) -> tuple[StateT, Sequence[EventT]]:
        """`seat` gives up (platform rule). IllegalMove(GAME_OVER) after the end."""
        ...

    def timeout(self, state: StateT, seat: int) -> tuple[StateT, Sequence[EventT]]:
        """`seat` let its turn clock run out: the game's timeout rule (forfeit in two-player games)."""
        ...

    def outcome(self, state: StateT) -> Outcome | None:
        """None while the game runs."""
        ...

    def view(self, state: StateT, seat: int | None) -> ViewT:
        """What `seat` (None = a spectator) may see. Never hidden information such as seeds."""
        ...

    # -- what the platform may do beyond moves (rules.proto DrawAgreed, Abort, TakeBack) ----------
    # Declared here with their defaults, as OpenSpiel's GameType declares a game's capabilities:
    # the service reads them, it never probes a game with getattr. A game subclasses Rules to
    # take the defaults.

    # A take-back rebuilds a position by replaying the game's recorded actions from new_game with
    # the game's seed (services/host/replay.py). Pure rules make that exact, so it is on by default;
    # a game whose positions cannot be rebuilt from its actions says False (refused OFFER_NOT_ALLOWED).
    takes_back: bool = True

    def end(self, state: StateT, reason: str) -> StateT:
        """The platform ends a running game now (`reason` DRAW_AGREED or ABORTED): every seat
        ranked first, the game's scores as they stand, to_act empty, outcome() with `reason`. The
        caller checked that the game runs (and, for a draw, that it has two seats)."""
        ...

    # -- what a game may declare about its moves (the defaults suit turn-by-turn games) ----------

    def opening_events(self, state: StateT) -> Sequence[EventT]:
        """The events the opening state has beside GameCreated (e.g. Colour Square's round-1 roll),
        so a client follows the game from its stream alone. Default: none."""
        return ()

    def commute_window(self, state: StateT) -> int | None:
        """Moves of different seats made within one window commute (e.g. Colour Square's
        simultaneous placements of a round): the service then accepts a move made against an older
        version of the same window when it is still legal now. The window's identity (any number
        that changes when a new window opens) while one is open; None when moves do not commute.
        Default: never (one move at a time, judged against the version it was made on)."""
        return None


# Events every game shares. A rules module emits them beside its own typed events; the codec of the
# kit maps them to `tafel.games.v1` messages, so clients handle them alike for every game.


@dataclass(frozen=True)
class Resigned:
    seat: int


@dataclass(frozen=True)
class TimedOut:
    """`seat` let its clock run out; `removed` when the game's rule took the seat out of play."""

    seat: int
    removed: bool = False


@dataclass(frozen=True)
class GameEnded:
    """Always the last event of the move that finished the game."""

    outcome: Outcome


@dataclass(frozen=True)
class TakenBack:
    """Moves were taken back: the position is the one at `to_version` again (GameEvent.taken_back)."""

    to_version: int


def platform_outcome(seats: int, reason: str, scores: tuple[int, ...] = ()) -> Outcome:
    """The outcome of a platform ending (DRAW_AGREED, ABORTED): every seat ranked first."""
    return Outcome(ranks=(1,) * seats, reason=reason, scores=scores)


COMMON_EVENTS = (Resigned, TimedOut, GameEnded, TakenBack)
