// Plus 4 as players see it: red and blue discs pushed in from the top, "how to play", refusals in
// words.
import { drawPlus4 } from "../boards/plus4.js";
import { h } from "../dom.js";
import { formatList, formatNumber, t } from "../i18n.js";
import type { plus4 as p4 } from "../sdk.js";
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

export const plus4: GameUi<p4.View, { column: number; bonus: boolean }, p4.Event> = {
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
  newPick: () => ({ column: 0, bonus: false }),
  board: (view, ctx, pick) => drawPlus4(view, ctx, pick),
  sentence(event, who) {
    const n = formatNumber;
    const e = event.kind;
    switch (e.case) {
      case "discPushed":
        return t(e.value.bonus ? "game:moves.plus4.pushedBonus" : "game:moves.plus4.pushed", { who: who(e.value.seat), column: n(e.value.column + 1) });
      case "discFellOut":
        return t(e.value.disc?.bonus ? "game:moves.plus4.bonusFellOut" : "game:moves.plus4.fellOut", { who: who(e.value.returnedTo) });
      case "lineScored":
        return t("game:moves.plus4.line", { who: who(e.value.colour), count: e.value.points });
      case "turnSkipped":
        return t("game:moves.plus4.skipped", { who: who(e.value.seat) });
      case "roundWon":
        return t(e.value.frameEmptied ? "game:moves.plus4.roundWonEmptied" : "game:moves.plus4.roundWon", { round: n(e.value.round), names: formatList(e.value.winners.map(who)), count: e.value.winners.length });
      default:
        return "";
    }
  },
};
