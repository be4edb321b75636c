// Legal moves from a seat's view, for the conformance client and the tests' players (no search:
// they check the SDK and the platform, not play strength). Colour Square fills squares in order so
// a game ends soon.

import {
  coloursquare,
  moves,
  placeOnCell,
  placeOnJoker,
  type games,
} from "../src/index.js";

export type Strategy = (view: games.GameView, version: bigint) => games.GameMove;

export function connect4Strategy(view: games.GameView, version: bigint): games.GameMove {
  if (view.game.case !== "connect4") throw new Error(`not a Connect Four view: ${view.game.case}`);
  const legal = view.game.value.legalColumns;
  const column = legal[Number(version) % legal.length];
  if (column === undefined) throw new Error("no legal column");
  return moves.connect4(column);
}

export function plus4Strategy(view: games.GameView, version: bigint): games.GameMove {
  if (view.game.case !== "plus4") throw new Error(`not a Plus 4 view: ${view.game.case}`);
  const legal = view.game.value.legalMoves;
  const move = legal[(Number(version) * 7) % legal.length];
  if (move === undefined) throw new Error("no legal Plus 4 move");
  return moves.plus4(move.column, { bonus: move.bonus });
}

const COLOURED = [0, 1, 2, 3] as const; // R Y G B: die k goes into cell colour k
const DIE = [coloursquare.Die.RED, coloursquare.Die.YELLOW, coloursquare.Die.GREEN, coloursquare.Die.BLUE, coloursquare.Die.WHITE];
const COLOUR = [coloursquare.Colour.RED, coloursquare.Colour.YELLOW, coloursquare.Colour.GREEN, coloursquare.Colour.BLUE];

interface Target {
  square: number; // row-major index, -1 = a joker field
  colour: number; // the cell's colour, or the joker field's index
}

/** Where die `k` (0-3 coloured, 4 white) with `value` may go on this seat's sheet: cells first. */
function targets(view: coloursquare.View, sheet: coloursquare.PlayerSheet, k: number, value: number): Target[] {
  const out: Target[] = [];
  const columns = view.sheet?.columns ?? 0;
  const fixed = new Map<string, number>();
  for (const layout of view.sheet?.squares ?? []) {
    for (const printed of layout.printed) fixed.set(`${layout.row * columns + layout.column}:${printed.colour - 1}`, printed.value);
  }
  sheet.squares.forEach((square, i) => {
    if (square.status !== coloursquare.SquareStatus.OPEN) return;
    for (const colour of k === 4 ? COLOURED : [k]) {
      if (square.cells[colour]) continue;
      const printed = fixed.get(`${i}:${colour}`);
      if (printed === undefined || (k !== 4 && printed === value)) out.push({ square: i, colour });
    }
  });
  [0, 1].forEach((j) => {
    if (!sheet.jokers[j]) out.push({ square: -1, colour: j });
  });
  return out;
}

function toPlacement(view: coloursquare.View, k: number, target: Target): coloursquare.Placement {
  const die = DIE[k] ?? coloursquare.Die.UNSPECIFIED;
  if (target.square < 0) return placeOnJoker(die, target.colour);
  const columns = view.sheet?.columns ?? 1;
  const colour = COLOUR[target.colour] ?? coloursquare.Colour.UNSPECIFIED;
  return placeOnCell(die, Math.floor(target.square / columns), target.square % columns, colour);
}

export function colourSquareStrategy(gameView: games.GameView): games.GameMove {
  if (gameView.game.case !== "coloursquare") throw new Error(`not a Colour Square view: ${gameView.game.case}`);
  const view = gameView.game.value;
  const seat = view.seat;
  const sheet = view.players.find((p) => p.seat === seat);
  if (seat === undefined || sheet === undefined || !view.maxDice || !view.toPlace.includes(seat)) {
    return moves.coloursquare([]);
  }
  if (view.phase === coloursquare.Phase.FINAL || view.mustPlace === 0) {
    return moves.coloursquare([]); // placing is optional in a final turn
  }
  const roll = view.roll;
  const values = [roll?.red ?? 0, roll?.yellow ?? 0, roll?.green ?? 0, roll?.blue ?? 0, roll?.white ?? 0];
  if (seat !== view.activeSeat) {
    const target = targets(view, sheet, 4, values[4] ?? 0)[0];
    if (target === undefined) throw new Error("the server asks for a white die with nowhere to put it");
    return moves.coloursquare([toPlacement(view, 4, target)]);
  }
  // The active seat: `mustPlace` (1 or 2) different coloured dice; two dice never share a joker.
  const options = COLOURED.map((k) => targets(view, sheet, k, values[k] ?? 0));
  if (view.mustPlace === 1) {
    for (const k of COLOURED) {
      const target = options[k]?.[0];
      if (target !== undefined) return moves.coloursquare([toPlacement(view, k, target)]);
    }
  } else {
    for (const a of COLOURED) {
      for (const b of COLOURED) {
        if (b <= a) continue;
        for (const ta of options[a] ?? []) {
          const tb = (options[b] ?? []).find((t) => !(t.square < 0 && ta.square < 0 && t.colour === ta.colour));
          if (tb !== undefined) return moves.coloursquare([toPlacement(view, a, ta), toPlacement(view, b, tb)]);
        }
      }
    }
  }
  throw new Error(`no legal placement of ${view.mustPlace} dice found`);
}

/** The strategy for a game by its machine name. */
export function strategyFor(game: string): Strategy {
  switch (game) {
    case "connect4":
      return connect4Strategy;
    case "plus4":
      return plus4Strategy;
    case "coloursquare":
      return colourSquareStrategy;
    default:
      throw new Error(`no strategy for game ${game}`);
  }
}
