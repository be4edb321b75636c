// Plus 4 as players see it: red and blue discs pushed in from the top, "how to play", refusals in
// words.
import { h } from "../dom.js";
import { t } from "../i18n.js";
import { endingsOf, type GameUi } from "./types.js";
import { discGrid, figure, pair, para, section } from "./howto.js";

const RED = "#d93025";
const BLUE = "#1a73e8";

function howTo(): HTMLElement {
  const R = RED;
  const B = BLUE;
  const _ = "";
  const frame = "#555";
  return h(
    "div",
    {},
    section(
      t("game:games.plus4.howto.goalTitle"),
      para(t("game:games.plus4.howto.goal")),
      para(t("game:games.plus4.howto.variants")),
    ),
    section(
      t("game:games.plus4.howto.turnTitle"),
      para(t("game:games.plus4.howto.turn")),
      para(t("game:games.plus4.howto.fallOut")),
      figure(
        pair(
          discGrid([[B, _, _, _], [R, _, _, _], [R, _, _, _], [B, _, _, _]], { frame }),
          discGrid([[R, _, _, _], [B, _, _, _], [R, _, _, _], [R, _, _, _]], { frame, ring: new Set(["0,0"]) }),
        ),
        t("game:games.plus4.howto.turnCaption"),
      ),
    ),
    section(
      t("game:games.plus4.howto.scoringTitle"),
      para(t("game:games.plus4.howto.scoring")),
      para(t("game:games.plus4.howto.again")),
      figure(
        discGrid([[B, B, B, B], [R, R, R, R], [_, _, _, _], [_, _, _, _]], { frame, ring: new Set(["0,0", "0,1", "0,2", "0,3"]) }),
        t("game:games.plus4.howto.scoringCaption"),
      ),
    ),
    section(
      t("game:games.plus4.howto.bonusTitle"),
      para(t("game:games.plus4.howto.bonus")),
      figure(discGrid([[R, R, R, R], [_, _, _, _], [_, _, _, _], [_, _, _, _]], { frame, star: new Set(["0,2"]) }), t("game:games.plus4.howto.bonusCaption")),
      para(t("game:games.plus4.howto.empty")),
    ),
  );
}

export const plus4: GameUi = {
  get title() {
    return t("game:games.plus4.title");
  },
  colours: [RED, BLUE],
  get colourNames() {
    return [t("game:games.plus4.colours.red"), t("game:games.plus4.colours.blue")];
  },
  defaultClockS: 60,
  howTo,
  refusal(reason) {
    if (reason === "NO_BONUS_DISC" || reason === "NO_ORDINARY_DISC" || reason === "COLUMN_OUT_OF_RANGE") return t(`game:games.plus4.refusals.${reason}`);
    return undefined;
  },
  get endings() {
    return endingsOf("plus4", ["TARGET_REACHED", "LINE_COMPLETED", "ROUNDS_TARGET_REACHED", "MOVE_LIMIT"]);
  },
};
