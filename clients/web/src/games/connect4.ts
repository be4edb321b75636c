// Connect Four as players see it: red and yellow discs, "how to play", refusals in words.
import { h } from "../dom.js";
import type { GameUi } from "./types.js";
import { discGrid, figure, para, section } from "./howto.js";

const RED = "#d93025";
const YELLOW = "#f4b400";

function howTo(): HTMLElement {
  const R = RED;
  const Y = YELLOW;
  const _ = "";
  return h(
    "div",
    {},
    section("The goal", para("Be the first to get four of your discs in a row: across, up and down, or on a slant.")),
    section(
      "A turn",
      para("Red starts, then you take turns. On your turn, drop one disc into a column that is not full: it falls to the lowest free place."),
      para("Click a column (or use ← → and Enter, or the number keys). Columns are numbered from 1 on the left."),
      figure(
        discGrid([
          [_, _, _, _, _, _, _],
          [_, _, _, _, _, _, _],
          [_, _, _, Y, _, _, _],
          [_, _, R, R, _, _, _],
          [_, Y, Y, R, R, _, _],
          [Y, R, Y, R, Y, _, _],
        ]),
        "Red's turn: a disc dropped into column 5 lands on the yellow disc at the bottom of that column.",
      ),
    ),
    section(
      "Winning",
      figure(
        discGrid(
          [
            [_, _, _, _, _, _, _],
            [_, _, _, _, R, _, _],
            [_, _, _, R, Y, _, _],
            [_, _, R, R, Y, _, _],
            [_, R, Y, Y, R, _, _],
            [Y, Y, R, Y, R, Y, _],
          ],
          { ring: new Set(["1,4", "2,3", "3,2", "4,1"]) },
        ),
        "Four red discs on a slant (ringed): red wins.",
      ),
      para("If the board fills up and nobody has four in a row, the game is a draw. Running out of time on your clock loses the game."),
    ),
  );
}

export const connect4: GameUi = {
  title: "Connect Four",
  colours: [RED, YELLOW],
  colourNames: ["Red", "Yellow"],
  defaultClockS: 60,
  howTo,
  refusal(reason, move) {
    const column = move?.game.case === "connect4" ? move.game.value.column + 1 : undefined;
    if (reason === "COLUMN_FULL") return `${column === undefined ? "That column" : `Column ${column}`} is full: choose another column.`;
    if (reason === "COLUMN_OUT_OF_RANGE") return "There is no such column on this board.";
    return undefined;
  },
  endings: { FOUR_IN_A_ROW: "four in a row", BOARD_FULL: "the board is full" },
};
