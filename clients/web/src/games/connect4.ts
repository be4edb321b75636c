// Connect Four as players see it: red and yellow discs, the board, its moves in words, "how to
// play", refusals in words.
import { drawConnect4 } from "../boards/connect4.js";
import { h } from "../dom.js";
import { formatNumber, t } from "../i18n.js";
import type { connect4 as c4 } from "../sdk.js";
import { endingsOf, type GameUi } from "./types.js";
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
    section(t("game:games.connect4.howto.goalTitle"), para(t("game:games.connect4.howto.goal"))),
    section(
      t("game:games.connect4.howto.turnTitle"),
      para(t("game:games.connect4.howto.turn")),
      para(t("game:games.connect4.howto.keys")),
      figure(
        discGrid([
          [_, _, _, _, _, _, _],
          [_, _, _, _, _, _, _],
          [_, _, _, Y, _, _, _],
          [_, _, R, R, _, _, _],
          [_, Y, Y, R, R, _, _],
          [Y, R, Y, R, Y, _, _],
        ]),
        t("game:games.connect4.howto.turnCaption"),
      ),
    ),
    section(
      t("game:games.connect4.howto.winTitle"),
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
        t("game:games.connect4.howto.winCaption"),
      ),
      para(t("game:games.connect4.howto.draw")),
    ),
  );
}

export const connect4: GameUi<c4.View, { column: number }, c4.Event> = {
  get title() {
    return t("game:games.connect4.title");
  },
  colours: [RED, YELLOW],
  get colourNames() {
    return [t("game:games.connect4.colours.red"), t("game:games.connect4.colours.yellow")];
  },
  defaultClockS: 60,
  howTo,
  refusal(reason, move) {
    const column = move?.game.case === "connect4" ? move.game.value.column + 1 : undefined;
    if (reason === "COLUMN_FULL") return column === undefined ? t("game:games.connect4.refusals.COLUMN_FULL_THAT") : t("game:games.connect4.refusals.COLUMN_FULL", { column });
    if (reason === "COLUMN_OUT_OF_RANGE") return t("game:games.connect4.refusals.COLUMN_OUT_OF_RANGE");
    return undefined;
  },
  get endings() {
    return endingsOf("connect4", ["FOUR_IN_A_ROW", "BOARD_FULL"]);
  },
  newPick: () => ({ column: 0 }),
  board: (view, ctx, pick) => drawConnect4(view, ctx, pick),
  sentence(event, who) {
    const e = event.kind;
    if (e.case !== "discDropped") return "";
    const d = e.value;
    const where = { who: who(d.seat), column: formatNumber(d.column + 1), row: formatNumber(d.row + 1) };
    return t(d.winningCells.length > 0 ? "game:moves.connect4.droppedFour" : "game:moves.connect4.dropped", where);
  },
};
