"""Colour Square: the pure rules module (rules page: shared/rules/colour-square.md; see README.md).

Shape of a game:

- ``new_game`` rolls round 1 for active seat 0. In the **round** phase every seat that is not removed
  places at the same time (``to_act`` = every seat still to place). A move is the seat's whole
  placement list (empty = pass). Submitted lists are kept in ``State.pending`` and written onto the
  sheets when the last seat places or times out; then squares close, correct closes cross the square
  out on the other open sheets, and either the next round is rolled or "colour square" is called.
- In the **final** phase one seat at a time (caller + 1, ...) gets its own roll of five dice and may
  place any of them; each final turn resolves at once and crosses nothing out.
- **over**: ``outcome`` gives ranks (decision D13), scores, and a reason: COLOUR_SQUARE,
  SOLO_FINISHED, ALL_REMOVED or ROUND_LIMIT.

Dice: a splitmix64 generator whose state (``State.rng``) lives in the game state and never leaves the
server (no view shows it). Tests and replays inject dice with :func:`with_roll`, which replaces the
roll the current round (or final turn) uses, leaving the generator as it is.

Timeouts: ``timeout(state, seat)`` places nothing for the seat this round (or final turn);
``timeouts_to_remove`` timeouts in a row remove it (any accepted move, a pass included, resets the
count). Resigning removes the seat at once (its unrevealed placements of this round are dropped).
A removed seat keeps its sheet as it was, is never asked to place again, is skipped as active seat,
takes no final turn, calls nothing and ranks below every seat that was not removed. The game goes
on while some seat is not removed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import TypeVar

from tafel_rules.coloursquare.dice import roll_five, seed_state
from tafel_rules.coloursquare.model import (
    ALL_REMOVED,
    COLOUR_SQUARE,
    ROUND_LIMIT,
    SOLO_FINISHED,
    Cell,
    ColourSquareCalled,
    DiceRolled,
    Event,
    FinalTurnResolved,
    Move,
    Options,
    Phase,
    Placement,
    PlacementsMade,
    PlacementSubmitted,
    Player,
    PlayerRemoved,
    PlayerView,
    Removal,
    ResultView,
    Roll,
    RoundResolved,
    SquareClosed,
    SquareCrossed,
    State,
    Status,
    View,
)
from tafel_rules.coloursquare.moves import (
    MAX_DICE,
    FinalMoves,
    Role,
    check_placements,
    check_shape,
    legal_round_moves,
    most_placeable,
    write,
)
from tafel_rules.coloursquare.scoring import breakdown, coloured_bridges, competition_ranks, is_correct, ranking
from tafel_rules.coloursquare.sheets import SHEETS, Sheet
from tafel_rules.game import (
    PLATFORM_ENDINGS,
    GameEnded,
    IllegalMove,
    InvalidOptions,
    OptionSpec,
    Outcome,
    PersonalBests,
    RatingPool,
    Resigned,
    Rules,
    TimedOut,
)

GAME_OVER = "GAME_OVER"
BAD_SEAT = "BAD_SEAT"
NOT_YOUR_TURN = "NOT_YOUR_TURN"
NO_ROLL = "NO_ROLL"

MAX_TARGET = 1000
MAX_TIMEOUTS = 10
MAX_ROUNDS = 1000

AnyEvent = Event | Resigned | TimedOut | GameEnded
T = TypeVar("T")


def sheet_of(state: State) -> Sheet:
    return SHEETS[state.options.side]


def with_roll(state: State, roll: Sequence[int]) -> State:
    """The state with `roll` (R, Y, G, B, W; each 1..6) as the dice of the current round or final
    turn. The dice source for tests and replays: the generator state is left as it is."""
    if state.phase is Phase.OVER:
        raise ValueError("the game is over: there is no roll to replace")
    values = tuple(roll)
    if len(values) != 5 or not all(isinstance(v, int) and 1 <= v <= 6 for v in values):
        raise ValueError(f"a roll is five dice values 1..6, got {roll!r}")
    return replace(state, roll=(values[0], values[1], values[2], values[3], values[4]))


def role_of(state: State, seat: int) -> Role:
    if state.phase is Phase.FINAL:
        return Role.FINAL
    return Role.ACTIVE if seat == state.active else Role.PASSIVE


def _new_player(sheet: Sheet) -> Player:
    return Player(cells=(None,) * (sheet.size * 4), status=(Status.OPEN,) * sheet.size)


def _has_open(player: Player) -> bool:
    return Status.OPEN in player.status


def _close(
    sheet: Sheet, seat: int, player: Player, placements: tuple[Placement, ...], events: list[AnyEvent]
) -> tuple[Player, list[int]]:
    """Close every square the placements wrote into that is now full. Returns those closed correctly."""
    touched = sorted({sheet.index(p.target.row, p.target.col) for p in placements if isinstance(p.target, Cell)})
    if not touched:
        return player, []
    status = list(player.status)
    correct: list[int] = []
    cells = player.cells
    for i in touched:
        square = sheet.squares[i]
        if status[i] is not Status.OPEN:
            continue
        four = cells[i * 4 : i * 4 + 4]
        if any(v is None for v in four):
            continue
        total = sum(v for v in four if v is not None)
        ok = is_correct(square, total)
        status[i] = Status.CORRECT if ok else Status.WRONG
        if ok:
            correct.append(i)
        events.append(SquareClosed(seat, square.row, square.col, ok, total))
    return replace(player, status=tuple(status)), correct


class ColourSquareRules(Rules[State, Move, Options, AnyEvent, View]):
    name = "coloursquare"
    title = "Colour Square"
    min_seats = 1
    max_seats = 6
    # Tables and duels apart: a table result counts as n - 1 pairwise results at once
    # (gateway/ratings/glicko2.py), so mixing them would move table players' ratings several
    # times faster than duellists'. Solo games are not rated; they keep personal bests per sheet.
    rating_pools: Sequence[RatingPool] = (
        RatingPool("coloursquare", "Colour Square tables", 3, 6),
        RatingPool("coloursquare-duel", "Colour Square duels", 2, 2),
    )
    personal_bests: PersonalBests | None = PersonalBests("coloursquare-solo", "side")

    # -- options -----------------------------------------------------------------------------------

    def option_specs(self) -> Sequence[OptionSpec]:
        return (
            OptionSpec(
                "side",
                "Sheet: A (targets, purple and orange squares) or B (pre-printed cells, ranges)",
                "A",
                choices=tuple(sorted(SHEETS)),
            ),
            OptionSpec("target", "Solo only: a target score to reach (0 = none)", 0, 0, MAX_TARGET, max_seats=1),
            OptionSpec("timeouts_to_remove", "Timeouts in a row that remove a player", 3, 1, MAX_TIMEOUTS),
            OptionSpec("max_rounds", "Safety limit on the number of rounds", 200, 1, MAX_ROUNDS),
        )

    def default_options(self) -> Options:
        return Options()

    def check_options(self, options: Options, seats: int) -> None:
        if not isinstance(seats, int) or not self.min_seats <= seats <= self.max_seats:
            raise InvalidOptions("seats", f"Colour Square seats {self.min_seats} to {self.max_seats}")
        if options.side not in SHEETS:
            sheets = ", ".join(sorted(SHEETS))
            raise InvalidOptions("side", f"there is no sheet {options.side}; the sheets are {sheets}")
        if not 0 <= options.target <= MAX_TARGET:
            raise InvalidOptions("target", f"target must be 0..{MAX_TARGET}")
        if options.target and seats != 1:
            raise InvalidOptions("target", "a target score is for solo games only")
        if not 1 <= options.timeouts_to_remove <= MAX_TIMEOUTS:
            raise InvalidOptions("timeouts_to_remove", f"must be 1..{MAX_TIMEOUTS}")
        if not 1 <= options.max_rounds <= MAX_ROUNDS:
            raise InvalidOptions("max_rounds", f"must be 1..{MAX_ROUNDS}")

    # -- the game ----------------------------------------------------------------------------------

    def new_game(self, options: Options, seats: int, seed: int) -> State:
        self.check_options(options, seats)
        sheet = SHEETS[options.side]
        rng, roll = roll_five(seed_state(seed))
        return State(
            options=options,
            seats=seats,
            rng=rng,
            phase=Phase.ROUND,
            round=1,
            active=0,
            roll=roll,
            players=tuple(_new_player(sheet) for _ in range(seats)),
            pending=(None,) * seats,
            waiting=tuple(range(seats)),
        )

    def opening_events(self, state: State) -> Sequence[AnyEvent]:
        """Round 1's roll, so a client follows every round from the stream alone."""
        assert state.roll is not None
        return (DiceRolled(state.round, state.active, state.roll),)

    def commute_window(self, state: State) -> int | None:
        """Placements of different seats in one round commute (each seat places on its own sheet;
        the round resolves only when the last one is in), so the service accepts a placement made
        against an older version of the same round when it is still legal now. The window is the
        round number while seats place; None in the final turns and at the end."""
        return state.round if state.phase is Phase.ROUND else None

    def to_act(self, state: State) -> frozenset[int]:
        return frozenset() if state.phase is Phase.OVER else frozenset(state.waiting)

    def legal_moves(self, state: State, seat: int) -> Sequence[Move]:
        if state.phase is Phase.OVER or state.roll is None or seat not in state.waiting:
            return ()
        sheet, player, roll = sheet_of(state), state.players[seat], state.roll
        role = role_of(state, seat)
        if role is Role.FINAL:
            return FinalMoves(sheet, player, roll, lambda move: self._is_legal(state, seat, move))
        return legal_round_moves(sheet, player, roll, role)

    def _is_legal(self, state: State, seat: int, move: Move) -> bool:
        try:
            self._check(state, seat, move)
        except IllegalMove:
            return False
        return True

    def _check_turn(self, state: State, seat: int) -> None:
        if state.phase is Phase.OVER:
            raise IllegalMove(GAME_OVER, "the game is over")
        if not isinstance(seat, int) or isinstance(seat, bool) or not 0 <= seat < state.seats:
            raise IllegalMove(BAD_SEAT, f"there is no seat {seat} at this table")
        if seat not in state.waiting:
            raise IllegalMove(NOT_YOUR_TURN, "you are not asked to place now: wait for the next roll")

    def _check(self, state: State, seat: int, move: object) -> tuple[Placement, ...]:
        self._check_turn(state, seat)
        if state.roll is None:
            raise IllegalMove(NO_ROLL, "the dice have not been rolled")
        sheet = sheet_of(state)
        placements = check_shape(sheet, move)
        check_placements(sheet, state.players[seat], state.roll, role_of(state, seat), placements)
        return placements

    def apply_move(self, state: State, seat: int, move: Move) -> tuple[State, Sequence[AnyEvent]]:
        placements = self._check(state, seat, move)
        player = state.players[seat]
        players = state.players
        if player.timeouts:
            players = _set(players, seat, replace(player, timeouts=0))
        events: list[AnyEvent] = []
        if state.phase is Phase.FINAL:
            state = replace(state, players=players)
            return self._resolve_final(state, seat, placements, events), events
        events.append(PlacementSubmitted(state.round, seat))
        state = replace(
            state,
            players=players,
            pending=_set(state.pending, seat, placements),
            waiting=tuple(s for s in state.waiting if s != seat),
        )
        if not state.waiting:
            state = self._resolve_round(state, events)
        return state, events

    def timeout(self, state: State, seat: int) -> tuple[State, Sequence[AnyEvent]]:
        self._check_turn(state, seat)
        player = state.players[seat]
        count = player.timeouts + 1
        removed = count >= state.options.timeouts_to_remove
        player = replace(player, timeouts=count, removed=removed, removal=Removal.TIMEOUTS if removed else None)
        events: list[AnyEvent] = [TimedOut(seat, removed)]
        if removed:
            events.append(PlayerRemoved(seat, Removal.TIMEOUTS))
        state = replace(
            state,
            players=_set(state.players, seat, player),
            waiting=tuple(s for s in state.waiting if s != seat),
        )
        return self._after_leaving(state, seat, events), events

    def resign(self, state: State, seat: int) -> tuple[State, Sequence[AnyEvent]]:
        if state.phase is Phase.OVER:
            raise IllegalMove(GAME_OVER, "the game is over")
        if not isinstance(seat, int) or isinstance(seat, bool) or not 0 <= seat < state.seats:
            raise IllegalMove(BAD_SEAT, f"there is no seat {seat} at this table")
        player = state.players[seat]
        if player.removed:
            raise IllegalMove(NOT_YOUR_TURN, "you are already out of the game")
        events: list[AnyEvent] = [Resigned(seat), PlayerRemoved(seat, Removal.RESIGNED)]
        state = replace(
            state,
            players=_set(state.players, seat, replace(player, removed=True, removal=Removal.RESIGNED)),
            pending=_set(state.pending, seat, None),
            waiting=tuple(s for s in state.waiting if s != seat),
        )
        return self._after_leaving(state, seat, events), events

    def _after_leaving(self, state: State, seat: int, events: list[AnyEvent]) -> State:
        """After `seat` timed out or resigned: end, resolve, pass the final turn on, or wait on.
        Every phase change has its event: a round ended by the last seat leaving still resolves
        (RoundResolved), a final turn that timed out or was resigned still ends (FinalTurnResolved)."""
        final_turn_over = state.phase is Phase.FINAL and not state.waiting
        if final_turn_over:
            events.append(FinalTurnResolved(seat))
        if all(p.removed for p in state.players):
            if state.phase is Phase.ROUND:
                events.append(RoundResolved(state.round))
            return self._end(replace(state, caller=None), ALL_REMOVED, events)
        if state.phase is Phase.ROUND:
            return self._resolve_round(state, events) if not state.waiting else state
        if final_turn_over:  # the final turn's seat timed out or resigned
            return self._next_final(state, events)
        return state

    # -- resolution --------------------------------------------------------------------------------

    def _resolve_round(self, state: State, events: list[AnyEvent]) -> State:
        sheet = sheet_of(state)
        assert state.roll is not None
        players = list(state.players)
        for seat, placements in enumerate(state.pending):
            if placements is not None:
                events.append(PlacementsMade(state.round, seat, placements))
                players[seat] = write(sheet, players[seat], state.roll, placements)
        correct: set[int] = set()
        for seat, placements in enumerate(state.pending):
            if placements:
                players[seat], closed = _close(sheet, seat, players[seat], placements, events)
                correct.update(closed)
        for square in sorted(correct):
            row, col = sheet.squares[square].row, sheet.squares[square].col
            for seat, player in enumerate(players):
                if not player.removed and player.status[square] is Status.OPEN:
                    status = list(player.status)
                    status[square] = Status.CROSSED
                    players[seat] = replace(player, status=tuple(status))
                    events.append(SquareCrossed(seat, row, col))
        events.append(RoundResolved(state.round))
        state = replace(state, players=tuple(players), pending=(None,) * state.seats, waiting=())
        callers = [s for s, p in enumerate(players) if not p.removed and not _has_open(p)]
        if callers:
            caller = callers[0]
            events.append(ColourSquareCalled(caller, state.round))
            queue = tuple((caller + i) % state.seats for i in range(1, state.seats))
            return self._next_final(replace(state, caller=caller, final_queue=queue), events)
        if state.round >= state.options.max_rounds:
            return self._end(state, ROUND_LIMIT, events)
        active = state.active
        for step in range(1, state.seats + 1):
            candidate = (state.active + step) % state.seats
            if not players[candidate].removed:
                active = candidate
                break
        rng, roll = roll_five(state.rng)
        state = replace(
            state,
            rng=rng,
            round=state.round + 1,
            active=active,
            roll=roll,
            waiting=tuple(s for s, p in enumerate(players) if not p.removed),
        )
        events.append(DiceRolled(state.round, active, roll))
        return state

    def _next_final(self, state: State, events: list[AnyEvent]) -> State:
        """Start the next due final turn (eligibility checked now: not removed, an open square)."""
        queue = list(state.final_queue)
        while queue:
            seat = queue.pop(0)
            player = state.players[seat]
            if player.removed or not _has_open(player):
                continue
            rng, roll = roll_five(state.rng)
            events.append(DiceRolled(state.round, seat, roll, final=True))
            return replace(state, phase=Phase.FINAL, rng=rng, roll=roll, waiting=(seat,), final_queue=tuple(queue))
        reason = SOLO_FINISHED if state.seats == 1 else COLOUR_SQUARE
        return self._end(replace(state, final_queue=()), reason, events)

    def _resolve_final(
        self, state: State, seat: int, placements: tuple[Placement, ...], events: list[AnyEvent]
    ) -> State:
        sheet = sheet_of(state)
        assert state.roll is not None
        events.append(PlacementsMade(state.round, seat, placements, final=True))
        player = write(sheet, state.players[seat], state.roll, placements)
        player, _ = _close(sheet, seat, player, placements, events)  # final-turn closes cross nothing out
        events.append(FinalTurnResolved(seat))
        state = replace(state, players=_set(state.players, seat, player), waiting=())
        return self._next_final(state, events)

    def _end(self, state: State, reason: str, events: list[AnyEvent]) -> State:
        state = replace(
            state,
            phase=Phase.OVER,
            roll=None,
            pending=(None,) * state.seats,
            waiting=(),
            final_queue=(),
            end_reason=reason,
        )
        outcome = self.outcome(state)
        assert outcome is not None
        events.append(GameEnded(outcome))
        return state

    def end(self, state: State, reason: str) -> State:
        return self._end(state, reason, [])  # (its GameEnded is the service's to emit)

    # -- results and views -------------------------------------------------------------------------

    def scores(self, state: State) -> tuple[int, ...]:
        sheet, over = sheet_of(state), state.phase is Phase.OVER
        return tuple(breakdown(sheet, p, over).total for p in state.players)

    def outcome(self, state: State) -> Outcome | None:
        if state.phase is not Phase.OVER:
            return None
        scores = self.scores(state)
        if state.end_reason in PLATFORM_ENDINGS:  # a draw agreed, an abort: every seat first
            return Outcome(ranks=(1,) * state.seats, reason=state.end_reason, scores=scores)
        ranks = competition_ranks(scores, [p.removed for p in state.players])
        return Outcome(ranks=ranks, reason=state.end_reason or COLOUR_SQUARE, scores=scores)

    def result(self, state: State) -> ResultView | None:
        outcome = self.outcome(state)
        if outcome is None:
            return None
        target = state.options.target
        reached = outcome.scores[0] >= target if state.seats == 1 and target else None
        return ResultView(
            reason=outcome.reason,
            scores=outcome.scores,
            ranks=outcome.ranks,
            winners=outcome.winners,
            ranking=ranking(outcome.ranks),
            removed=tuple(s for s, p in enumerate(state.players) if p.removed),
            caller=state.caller,
            rounds=state.round,
            target=target,
            reached=reached,
        )

    def view(self, state: State, seat: int | None) -> View:
        """Everything public: every sheet, the roll in play, who still has to place, the scores.
        Never the generator state, and never another seat's placements before its round resolves."""
        sheet, over = sheet_of(state), state.phase is Phase.OVER
        players = tuple(
            PlayerView(
                seat=s,
                status=p.status,
                cells=p.cells,
                jokers=p.jokers,
                removed=p.removed,
                removal=p.removal,
                timeouts=p.timeouts,
                placed=state.phase is Phase.ROUND and state.pending[s] is not None,
                bridges=coloured_bridges(sheet, p),
                breakdown=breakdown(sheet, p, over),
            )
            for s, p in enumerate(state.players)
        )
        own = state.pending[seat] if seat is not None and 0 <= seat < state.seats else None
        max_dice = must = 0
        if seat is not None and seat in state.waiting and state.roll is not None:
            role = role_of(state, seat)
            max_dice = MAX_DICE[role]
            if role is not Role.FINAL:
                must = most_placeable(sheet, state.players[seat], state.roll, role)
        return View(
            seat=seat,
            side=state.options.side,
            phase=state.phase,
            round=state.round,
            max_rounds=state.options.max_rounds,
            active=state.active,
            roll=state.roll,
            to_place=state.waiting,
            final_turn=state.waiting[0] if state.phase is Phase.FINAL and state.waiting else None,
            caller=state.caller,
            players=players,
            own_pending=own,
            max_dice=max_dice,
            must_place=must,
            target=state.options.target,
            result=self.result(state),
        )


def _set(values: tuple[T, ...], index: int, value: T) -> tuple[T, ...]:
    return (*values[:index], value, *values[index + 1 :])


RULES = ColourSquareRules()

__all__ = ["RULES", "ColourSquareRules", "Roll", "with_roll"]
