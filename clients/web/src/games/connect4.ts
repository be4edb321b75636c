// Connect Four as players see it: red and yellow discs, "how to play", refusals in words.
import { h } from "../dom.js";
import { t } from "../i18n.js";
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

export const connect4: GameUi = {
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
};
