// Colour Square as players see it: a sheet of squares per player, "how to play" with drawn squares,
// bridges, purple and orange squares and jokers, refusals in words.
import { mark, markIcon, shapeOf, type ColourName } from "../boards/access.js";
import { drawColourSquare, type Picks } from "../boards/coloursquare.js";
import { h, s } from "../dom.js";
import { formatList, formatNumber, has, t } from "../i18n.js";
import type { coloursquare as cs } from "../sdk.js";
import { endingsOf, type GameUi } from "./types.js";
import { figure, para, section } from "./howto.js";

const CELL: Record<string, string> = { r: "#f28b82", y: "#fdd663", g: "#81c995", b: "#8ab4f8" };
// The drawings carry the boards' shapes too (boards/access.ts): a colour-blind reader of "how to
// play" tells the cells and dice apart the way the live board does.
const CELL_NAME: Record<string, ColourName> = { r: "red", y: "yellow", g: "green", b: "blue" };
const DIE_NAME: Record<string, ColourName> = { "#d93025": "red", "#f9ab00": "yellow", "#1e8e3e": "green", "#1967d2": "blue", "#fff": "white" };
const SQ = 76;

interface Drawn {
  /** Values by corner, clockwise from the top left: red, yellow, green, blue ("" = empty). */
  values: [string, string, string, string];
  goal: string;
  kind?: "purple" | "orange";
  status?: "correct" | "wrong" | "crossed";
}

function square(svg: SVGElement, x: number, y: number, d: Drawn): void {
  const fill = d.kind === "purple" ? "#e9d5f5" : d.kind === "orange" ? "#ffe3c2" : "#fff";
  const stroke = d.kind === "purple" ? "#8e24aa" : d.kind === "orange" ? "#ef6c00" : "#999";
  svg.append(s("rect", { x, y, width: SQ, height: SQ, rx: 6, fill, stroke, "stroke-width": d.kind ? 2 : 1 }));
  const corners: [number, number, string][] = [[0, 0, "r"], [1, 0, "y"], [1, 1, "g"], [0, 1, "b"]];
  corners.forEach(([cx, cy, colour], i) => {
    const px = x + 4 + cx * (SQ / 2 - 4);
    const py = y + 4 + cy * (SQ / 2 - 4);
    svg.append(s("rect", { x: px, y: py, width: SQ / 2 - 4, height: SQ / 2 - 4, rx: 4, fill: CELL[colour] ?? "#eee" }));
    const name = CELL_NAME[colour];
    // In the cell's outer corner, clear of its value in the middle.
    if (name) svg.append(mark(shapeOf(name), cx === 0 ? px + 7 : px + SQ / 2 - 11, cy === 0 ? py + 7 : py + SQ / 2 - 11, 4.5));
    const value = d.values[i];
    if (value) svg.append(s("text", { x: px + (SQ / 2 - 4) / 2, y: py + (SQ / 2 - 4) / 2 + 6, "text-anchor": "middle", "font-size": 16, "font-weight": 600 }, value));
  });
  const wrong = d.status === "wrong";
  svg.append(s("rect", { x: x + SQ / 2 - 14, y: y + SQ / 2 - 11, width: 28, height: 22, rx: 11, fill: wrong ? "#333" : "#fff", stroke: d.status === "correct" ? "#1e8e3e" : "#555", "stroke-width": d.status === "correct" ? 4 : 1 }));
  svg.append(s("text", { x: x + SQ / 2, y: y + SQ / 2 + 4, "text-anchor": "middle", "font-size": 11, "font-weight": 700, fill: wrong ? "#fff" : "#222" }, d.goal));
  if (d.kind) svg.append(mark(shapeOf(d.kind), x + SQ / 2, y + 1, 6));
  if (d.status === "crossed") svg.append(s("path", { d: `M${x + 6} ${y + 6} L${x + SQ - 6} ${y + SQ - 6} M${x + SQ - 6} ${y + 6} L${x + 6} ${y + SQ - 6}`, stroke: "#b00020", "stroke-width": 4 }));
}

/** A row of drawn squares, with bridges (green bars) between the ones listed. */
function squares(row: Drawn[], bridges: number[] = []): SVGElement {
  const gap = 16;
  const width = row.length * (SQ + gap) + gap;
  const svg = s("svg", { viewBox: `0 0 ${width} ${SQ + 2 * gap}`, width, height: SQ + 2 * gap, class: "howto-grid", role: "img" });
  for (const b of bridges) {
    const x = gap + b * (SQ + gap) + SQ / 2;
    svg.append(s("line", { x1: x, y1: gap + SQ / 2, x2: x + SQ + gap, y2: gap + SQ / 2, stroke: "#1e8e3e", "stroke-width": 10, "stroke-linecap": "round" }));
  }
  row.forEach((d, i) => square(svg, gap + i * (SQ + gap), gap, d));
  return svg;
}

function dice(values: [string, number][]): HTMLElement {
  return h("div", { class: "dice howto-dice" }, ...values.map(([colour, value]) => {
    const name = DIE_NAME[colour];
    return h("span", { class: "die", style: `background:${colour};color:${colour === "#fff" || colour === "#f9ab00" ? "#222" : "#fff"}` }, ...(name ? [markIcon(shapeOf(name)), " "] : []), String(value));
  }));
}

function howTo(): HTMLElement {
  return h(
    "div",
    {},
    section(
      t("game:games.coloursquare.howto.goalTitle"),
      para(t("game:games.coloursquare.howto.goal")),
    ),
    section(
      t("game:games.coloursquare.howto.roundTitle"),
      para(t("game:games.coloursquare.howto.round")),
      dice([["#d93025", 5], ["#f9ab00", 2], ["#1e8e3e", 6], ["#1967d2", 1], ["#fff", 4]]),
      para(t("game:games.coloursquare.howto.roles")),
      para(t("game:games.coloursquare.howto.inApp")),
    ),
    section(
      t("game:games.coloursquare.howto.closingTitle"),
      para(t("game:games.coloursquare.howto.closing")),
      figure(
        squares([
          { values: ["5", "", "6", ""], goal: "12" },
          { values: ["5", "2", "4", "1"], goal: "12", status: "correct" },
          { values: ["6", "3", "5", "2"], goal: "8", status: "wrong" },
        ]),
        t("game:games.coloursquare.howto.closingCaption"),
      ),
      para(t("game:games.coloursquare.howto.crossing")),
      figure(squares([{ values: ["3", "", "", "4"], goal: "15", status: "crossed" }]), t("game:games.coloursquare.howto.crossedCaption")),
    ),
    section(
      t("game:games.coloursquare.howto.bridgesTitle"),
      para(t("game:games.coloursquare.howto.bridges")),
      figure(
        squares(
          [
            { values: ["5", "2", "4", "1"], goal: "12", status: "correct" },
            { values: ["6", "5", "3", "3"], goal: "17", kind: "purple", status: "correct" },
            { values: ["6", "6", "5", "4"], goal: "21", kind: "orange", status: "correct" },
          ],
          [0],
        ),
        t("game:games.coloursquare.howto.bridgesCaption"),
      ),
    ),
    section(
      t("game:games.coloursquare.howto.jokersTitle"),
      para(t("game:games.coloursquare.howto.jokers")),
    ),
    section(
      t("game:games.coloursquare.howto.endTitle"),
      para(t("game:games.coloursquare.howto.end")),
    ),
  );
}

const COLOUR_KEYS = ["purple", "teal", "orange", "indigo", "pink", "brown"];

const DIE = ["", "red", "yellow", "green", "blue", "white"];
const COLOUR = ["", "red", "yellow", "green", "blue"];
const n = (value: number): string => formatNumber(value);

function placement(p: cs.Placement): string {
  const die = t(`game:moves.coloursquare.die.${DIE[p.die] || "other"}`);
  if (p.target.case === "joker") return t("game:moves.coloursquare.onJoker", { die, joker: n(p.target.value + 1) });
  if (p.target.case === "cell") {
    const { row, column, colour } = p.target.value;
    const cell = t(`game:moves.coloursquare.cell.${COLOUR[colour] || "other"}`);
    return t("game:moves.coloursquare.inCell", { die, cell, row: n(row + 1), column: n(column + 1) });
  }
  return die;
}

function roll(r: cs.Roll | undefined): string {
  if (r === undefined) return "";
  return t("game:moves.coloursquare.roll", { red: n(r.red), yellow: n(r.yellow), green: n(r.green), blue: n(r.blue), white: n(r.white) });
}

function sentence(event: cs.Event, who: (seat: number) => string): string {
  const e = event.kind;
  switch (e.case) {
    case "diceRolled":
      return e.value.finalTurn
        ? t("game:moves.coloursquare.finalRolled", { who: who(e.value.seat), roll: roll(e.value.roll) })
        : t("game:moves.coloursquare.rolled", { round: n(e.value.round), who: who(e.value.seat), roll: roll(e.value.roll) });
    case "placementSubmitted":
      return t("game:moves.coloursquare.placed", { who: who(e.value.seat) });
    case "placementsMade":
      return e.value.placements.length === 0
        ? t("game:moves.coloursquare.passed", { who: who(e.value.seat) })
        : t("game:moves.coloursquare.wrote", { who: who(e.value.seat), placements: formatList(e.value.placements.map(placement)) });
    case "squareClosed": {
      const where = { who: who(e.value.seat), row: n(e.value.row + 1), column: n(e.value.column + 1), sum: n(e.value.sum) };
      return t(e.value.correct ? "game:moves.coloursquare.closedCorrect" : "game:moves.coloursquare.closedWrong", where);
    }
    case "squareCrossed":
      return t("game:moves.coloursquare.crossed", { row: n(e.value.row + 1), column: n(e.value.column + 1), who: who(e.value.seat) });
    case "roundResolved":
      return "";
    case "colourSquareCalled":
      return t("game:moves.coloursquare.called", { who: who(e.value.seat) });
    case "finalTurnResolved":
      return "";
    case "playerRemoved": {
      const why = ["", "Timeouts", "Resigned"][e.value.removal] ?? "";
      return t(`game:moves.coloursquare.removed${why}`, { who: who(e.value.seat) });
    }
    default:
      return "";
  }
}

export const coloursquare: GameUi<cs.View, Picks, cs.Event> = {
  get title() {
    return t("game:games.coloursquare.title");
  },
  colours: ["#7b1fa2", "#00897b", "#ef6c00", "#3949ab", "#c2185b", "#6d4c41"],
  get colourNames() {
    return COLOUR_KEYS.map((c) => t(`game:games.coloursquare.colours.${c}`));
  },
  // A round asks for a few sums to be weighed: a minute a move runs out on a newcomer in round 1.
  defaultClockS: 300,
  howTo,
  refusal(reason) {
    const key = `game:games.coloursquare.refusals.${reason}`;
    return has(key) ? t(key) : undefined;
  },
  get endings() {
    return endingsOf("coloursquare", ["COLOUR_SQUARE", "SOLO_FINISHED", "ALL_REMOVED", "ROUND_LIMIT"]);
  },
  newPick: () => ({ picks: [] }),
  board: (view, ctx, pick, redraw) => drawColourSquare(view, ctx, pick, redraw),
  moved(pick) {
    pick.picks = [];
    pick.die = undefined;
  },
  sentence,
  // "Colour square" is said only with the player who called it.
  calledEnding: { reason: "COLOUR_SQUARE", caller: (event) => (event.kind.case === "colourSquareCalled" ? event.kind.value.seat : undefined) },
};
