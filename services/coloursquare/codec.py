"""Colour Square values <-> `tafel.coloursquare.v1` messages.

Malformed moves (a die or colour left unspecified, a placement without a target, too many placements)
are refused here as INVALID_ARGUMENT with the rules' reason names (BAD_DIE, BAD_TARGET,
BAD_PLACEMENT); anything that could be a placement goes on to the rules, which judge it.
"""

from __future__ import annotations

from tafel.coloursquare.v1 import coloursquare_pb2 as pb
from tafel_rules.coloursquare.legal import legal_placements
from tafel_rules.coloursquare.model import (
    COLOURS,
    Cell,
    ColourSquareCalled,
    DiceRolled,
    Die,
    Event,
    FinalTurnResolved,
    Joker,
    Move,
    Options,
    Phase,
    Placement,
    PlacementsMade,
    PlacementSubmitted,
    Player,
    PlayerRemoved,
    Removal,
    Roll,
    RoundResolved,
    SquareClosed,
    SquareCrossed,
    State,
    Status,
    View,
)
from tafel_rules.coloursquare.sheets import SHEETS, Kind, Sheet

from services.host.codec import MalformedMessage

_DIE_TO_PB: dict[str, pb.Die.ValueType] = {
    Die.R: pb.DIE_RED,
    Die.Y: pb.DIE_YELLOW,
    Die.G: pb.DIE_GREEN,
    Die.B: pb.DIE_BLUE,
    Die.W: pb.DIE_WHITE,
}
_PB_TO_DIE: dict[int, Die] = {v: Die(k) for k, v in _DIE_TO_PB.items()}
_COLOUR_TO_PB: dict[str, pb.Colour.ValueType] = {
    Die.R: pb.COLOUR_RED,
    Die.Y: pb.COLOUR_YELLOW,
    Die.G: pb.COLOUR_GREEN,
    Die.B: pb.COLOUR_BLUE,
}
_PB_TO_COLOUR: dict[int, Die] = {v: Die(k) for k, v in _COLOUR_TO_PB.items()}
_STATUS_TO_PB = {
    Status.OPEN: pb.SQUARE_STATUS_OPEN,
    Status.CORRECT: pb.SQUARE_STATUS_CORRECT,
    Status.WRONG: pb.SQUARE_STATUS_WRONG,
    Status.CROSSED: pb.SQUARE_STATUS_CROSSED,
}
_PB_TO_STATUS: dict[int, Status] = {v: k for k, v in _STATUS_TO_PB.items()}
_PHASE_TO_PB = {Phase.ROUND: pb.PHASE_ROUND, Phase.FINAL: pb.PHASE_FINAL, Phase.OVER: pb.PHASE_OVER}
_PB_TO_PHASE: dict[int, Phase] = {v: k for k, v in _PHASE_TO_PB.items()}
_REMOVAL_TO_PB = {Removal.TIMEOUTS: pb.REMOVAL_TIMEOUTS, Removal.RESIGNED: pb.REMOVAL_RESIGNED}
_PB_TO_REMOVAL: dict[int, Removal] = {v: k for k, v in _REMOVAL_TO_PB.items()}
_KIND_TO_PB = {Kind.PLAIN: pb.SQUARE_KIND_PLAIN, Kind.PURPLE: pb.SQUARE_KIND_PURPLE, Kind.ORANGE: pb.SQUARE_KIND_ORANGE}

# Cell and joker numbers all go to the rules (BAD_TARGET there when the sheet lacks them).
_MAX_PLACEMENTS_INPUT = 16


def _sheet_to_proto(sheet: Sheet) -> pb.Sheet:
    return pb.Sheet(
        name=sheet.name,
        label=sheet.label,
        rows=sheet.rows,
        columns=sheet.cols,
        squares=[
            pb.SquareLayout(
                row=sq.row,
                column=sq.col,
                goal_low=sq.low,
                goal_high=sq.high,
                kind=_KIND_TO_PB[sq.kind],
                corner_order=[_COLOUR_TO_PB[c] for c in sq.corner_order()],
                printed=[
                    pb.PrintedValue(colour=_COLOUR_TO_PB[COLOURS[k]], value=v)
                    for k, v in enumerate(sq.fixed)
                    if v is not None
                ],
            )
            for sq in sheet.squares
        ],
    )


_SHEET_PROTOS = {name: _sheet_to_proto(sheet) for name, sheet in SHEETS.items()}


def _roll_to_proto(roll: Roll) -> pb.Roll:
    return pb.Roll(red=roll[0], yellow=roll[1], green=roll[2], blue=roll[3], white=roll[4])


def _roll_from_proto(message: pb.Roll) -> Roll:
    return (message.red, message.yellow, message.green, message.blue, message.white)


def placement_to_proto(placement: Placement) -> pb.Placement:
    message = pb.Placement(die=_DIE_TO_PB[placement.die])
    target = placement.target
    if isinstance(target, Joker):
        message.joker = target.index
    else:
        message.cell.CopyFrom(pb.Cell(row=target.row, column=target.col, colour=_COLOUR_TO_PB[target.colour]))
    return message


def placement_from_proto(message: pb.Placement, n: int = 0) -> Placement:
    die = _PB_TO_DIE.get(message.die)
    if die is None:
        raise MalformedMessage("BAD_DIE", f"placement {n}: set the die (red, yellow, green, blue or white)")
    which = message.WhichOneof("target")
    if which == "joker":
        # Any index is well formed: one the sheet lacks is the rules' BAD_TARGET (FAILED_PRECONDITION).
        return Placement(die, Joker(message.joker))
    if which == "cell":
        cell = message.cell
        colour = _PB_TO_COLOUR.get(cell.colour)
        if colour is None:
            raise MalformedMessage("BAD_TARGET", f"placement {n}: set the cell's colour")
        return Placement(die, Cell(cell.row, cell.column, colour))
    raise MalformedMessage("BAD_TARGET", f"placement {n}: set a cell or a joker field")


def _placements(items: tuple[Placement, ...]) -> list[pb.Placement]:
    return [placement_to_proto(p) for p in items]


class ColourSquareCodec:
    field = "coloursquare"

    # -- options and moves ---------------------------------------------------------------------------

    def options_from_proto(self, message: pb.Options) -> Options:
        defaults = Options()
        return Options(
            side=message.side or defaults.side,
            target=message.target,
            timeouts_to_remove=message.timeouts_to_remove or defaults.timeouts_to_remove,
            max_rounds=message.max_rounds or defaults.max_rounds,
        )

    def options_to_proto(self, options: Options) -> pb.Options:
        return pb.Options(
            side=options.side,
            target=options.target,
            timeouts_to_remove=options.timeouts_to_remove,
            max_rounds=options.max_rounds,
        )

    def move_from_proto(self, message: pb.Move) -> Move:
        if len(message.placements) > _MAX_PLACEMENTS_INPUT:
            raise MalformedMessage("BAD_PLACEMENT", "a move places at most five dice")
        return Move(tuple(placement_from_proto(p, n) for n, p in enumerate(message.placements)))

    def move_to_proto(self, move: Move) -> pb.Move:
        return pb.Move(placements=_placements(move.placements))

    # -- events --------------------------------------------------------------------------------------

    def event_to_proto(self, event: Event) -> pb.Event:
        if isinstance(event, DiceRolled):
            return pb.Event(
                dice_rolled=pb.DiceRolled(
                    round=event.round, seat=event.seat, roll=_roll_to_proto(event.roll), final_turn=event.final
                )
            )
        if isinstance(event, PlacementSubmitted):
            return pb.Event(placement_submitted=pb.PlacementSubmitted(round=event.round, seat=event.seat))
        if isinstance(event, PlacementsMade):
            return pb.Event(
                placements_made=pb.PlacementsMade(
                    round=event.round,
                    seat=event.seat,
                    placements=_placements(event.placements),
                    final_turn=event.final,
                )
            )
        if isinstance(event, SquareClosed):
            return pb.Event(
                square_closed=pb.SquareClosed(
                    seat=event.seat, row=event.row, column=event.col, correct=event.correct, sum=event.total
                )
            )
        if isinstance(event, SquareCrossed):
            return pb.Event(square_crossed=pb.SquareCrossed(seat=event.seat, row=event.row, column=event.col))
        if isinstance(event, RoundResolved):
            return pb.Event(round_resolved=pb.RoundResolved(round=event.round))
        if isinstance(event, ColourSquareCalled):
            return pb.Event(colour_square_called=pb.ColourSquareCalled(seat=event.seat, round=event.round))
        if isinstance(event, FinalTurnResolved):
            return pb.Event(final_turn_resolved=pb.FinalTurnResolved(seat=event.seat))
        if isinstance(event, PlayerRemoved):
            return pb.Event(player_removed=pb.PlayerRemoved(seat=event.seat, removal=_REMOVAL_TO_PB[event.reason]))
        raise TypeError(f"not a Colour Square event: {event!r}")

    # -- views ---------------------------------------------------------------------------------------

    def view_to_proto(self, view: View) -> pb.View:
        sheet = SHEETS[view.side]
        message = pb.View(
            phase=_PHASE_TO_PB[view.phase],
            round=view.round,
            max_rounds=view.max_rounds,
            active_seat=view.active,
            to_place=view.to_place,
            max_dice=view.max_dice,
            must_place=view.must_place,
            target=view.target,
        )
        message.sheet.CopyFrom(_SHEET_PROTOS[view.side])
        if view.seat is not None:
            message.seat = view.seat
        if view.roll is not None:
            message.roll.CopyFrom(_roll_to_proto(view.roll))
        if view.final_turn is not None:
            message.final_turn_seat = view.final_turn
        if view.caller is not None:
            message.caller = view.caller
        if view.own_pending is not None:
            message.own_pending.CopyFrom(pb.Placements(placements=_placements(view.own_pending)))
        message.legal_placements.extend(_placements(legal_placements(view)))
        cols = sheet.cols
        for p in view.players:
            b = p.breakdown
            out = message.players.add(
                seat=p.seat,
                jokers=[v or 0 for v in p.jokers],
                removal=_REMOVAL_TO_PB[p.removal] if p.removal is not None else pb.REMOVAL_UNSPECIFIED,
                timeouts=p.timeouts,
                placed=p.placed,
                breakdown=pb.Breakdown(
                    circled=b.circled,
                    bridges=b.bridges,
                    purple=b.purple,
                    wrong_penalty=b.wrong_penalty,
                    open_penalty=b.open_penalty,
                    jokers=b.jokers,
                    total=b.total,
                ),
            )
            cells = [v or 0 for v in p.cells]
            for i, status in enumerate(p.status):
                four = cells[i * 4 : i * 4 + 4]
                out.squares.add(status=_STATUS_TO_PB[status], cells=four, sum=sum(four))
            for a, c in p.bridges:
                bridge = out.bridges.add()
                bridge.first.row, bridge.first.column = divmod(a, cols)
                bridge.second.row, bridge.second.column = divmod(c, cols)
        r = view.result
        if r is not None:
            result = pb.Result(
                reason=r.reason,
                scores=r.scores,
                ranks=r.ranks,
                winners=r.winners,
                ranking=r.ranking,
                removed=r.removed,
                rounds=r.rounds,
                target=r.target,
            )
            if r.caller is not None:
                result.caller = r.caller
            if r.reached is not None:
                result.reached = r.reached
            message.result.CopyFrom(result)
        return message

    # -- the stored state ----------------------------------------------------------------------------

    def state_to_bytes(self, state: State) -> bytes:
        message = pb.State(
            options=self.options_to_proto(state.options),
            seats=state.seats,
            rng=state.rng,
            phase=_PHASE_TO_PB[state.phase],
            round=state.round,
            active_seat=state.active,
            waiting=state.waiting,
            final_queue=state.final_queue,
            end_reason=state.end_reason or "",
        )
        if state.roll is not None:
            message.roll.CopyFrom(_roll_to_proto(state.roll))
        if state.caller is not None:
            message.caller = state.caller
        for player, pending in zip(state.players, state.pending, strict=True):
            stored = pb.StoredPlayer(
                cells=bytes(v or 0 for v in player.cells),
                status=bytes(_STATUS_TO_PB[s] for s in player.status),
                jokers=[v or 0 for v in player.jokers],
                removal=_REMOVAL_TO_PB[player.removal] if player.removal is not None else pb.REMOVAL_UNSPECIFIED,
                timeouts=player.timeouts,
            )
            if pending is not None:
                stored.pending.CopyFrom(pb.Placements(placements=_placements(pending)))
            message.players.append(stored)
        return message.SerializeToString()

    def state_from_bytes(self, data: bytes) -> State:
        message = pb.State.FromString(data)
        options = self.options_from_proto(message.options)
        if options.side not in SHEETS or len(message.players) != message.seats:
            raise ValueError("stored Colour Square state is not valid")
        players = []
        pending: list[tuple[Placement, ...] | None] = []
        for stored in message.players:
            jokers = [v or None for v in stored.jokers]
            removal = _PB_TO_REMOVAL.get(stored.removal)
            players.append(
                Player(
                    cells=tuple(v or None for v in stored.cells),
                    status=tuple(_PB_TO_STATUS[s] for s in stored.status),
                    jokers=(jokers[0], jokers[1]),
                    removed=removal is not None,
                    removal=removal,
                    timeouts=stored.timeouts,
                )
            )
            pending.append(
                tuple(placement_from_proto(p) for p in stored.pending.placements)
                if stored.HasField("pending")
                else None
            )
        return State(
            options=options,
            seats=message.seats,
            rng=message.rng,
            phase=_PB_TO_PHASE[message.phase],
            round=message.round,
            active=message.active_seat,
            roll=_roll_from_proto(message.roll) if message.HasField("roll") else None,
            players=tuple(players),
            pending=tuple(pending),
            waiting=tuple(message.waiting),
            caller=message.caller if message.HasField("caller") else None,
            final_queue=tuple(message.final_queue),
            end_reason=message.end_reason or None,
        )


CODEC = ColourSquareCodec()
__all__ = ["CODEC", "ColourSquareCodec"]
