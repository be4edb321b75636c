"""The placements legal now for the viewing seat, one die at a time, for its view.

Listing whole moves would not fit a view: an active seat has up to ~2,000 placement lists and a
final turn millions (moves.FinalMoves). One die at a time is small (at most five dice times the
free cells and joker fields), and together with the view's `max_dice` and `must_place` it is all a
client needs: a list is legal exactly when its dice are different, each goes to a target listed
for it, no two share a target, and it places from `must_place` to `max_dice` dice (the active
seat: coloured dice only, so at most two; docs/rules/colour-square.md, "Legal moves").

Built from the view alone (the seat's own public sheet and the roll), which shows that a client
could compute it the same way."""

from __future__ import annotations

from tafel_rules.coloursquare.model import COLOURS, DIE_INDEX, Die, Phase, Placement, Player, Target, View
from tafel_rules.coloursquare.moves import Role, colour_cells, free_jokers, white_cells
from tafel_rules.coloursquare.sheets import SHEETS

ROLE_DICE: dict[Role, tuple[Die, ...]] = {
    Role.ACTIVE: COLOURS,
    Role.PASSIVE: (Die.W,),
    Role.FINAL: (*COLOURS, Die.W),
}


def legal_placements(view: View) -> tuple[Placement, ...]:
    """Every (die, target) the viewer may write now, dice in R Y G B W order, cells in sheet
    order, then the free joker fields; empty when the game does not wait on the viewer."""
    seat = view.seat
    if seat is None or view.max_dice == 0 or view.roll is None or seat not in view.to_place:
        return ()
    sheet, mine = SHEETS[view.side], view.players[seat]
    player = Player(cells=mine.cells, status=mine.status, jokers=mine.jokers)
    if view.phase is Phase.FINAL:
        role = Role.FINAL
    else:
        role = Role.ACTIVE if seat == view.active else Role.PASSIVE
    jokers = free_jokers(player)
    out: list[Placement] = []
    for die in ROLE_DICE[role]:
        index = DIE_INDEX[die.value]
        cells = white_cells(sheet, player) if die is Die.W else colour_cells(sheet, player, index, view.roll[index])
        targets: list[Target] = [*cells, *jokers]
        out.extend(Placement(die, target) for target in targets)
    return tuple(out)
