// Colour Square as players see it: a sheet of squares per player, "how to play" with drawn squares,
// bridges, purple and orange squares and jokers, refusals in words.
import { h, s } from "../dom.js";
import type { GameUi } from "./types.js";
import { figure, para, section } from "./howto.js";

const CELL: Record<string, string> = { r: "#f28b82", y: "#fdd663", g: "#81c995", b: "#8ab4f8" };
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
    const value = d.values[i];
    if (value) svg.append(s("text", { x: px + (SQ / 2 - 4) / 2, y: py + (SQ / 2 - 4) / 2 + 6, "text-anchor": "middle", "font-size": 16, "font-weight": 600 }, value));
  });
  const wrong = d.status === "wrong";
  svg.append(s("rect", { x: x + SQ / 2 - 14, y: y + SQ / 2 - 11, width: 28, height: 22, rx: 11, fill: wrong ? "#333" : "#fff", stroke: d.status === "correct" ? "#1e8e3e" : "#555", "stroke-width": d.status === "correct" ? 4 : 1 }));
  svg.append(s("text", { x: x + SQ / 2, y: y + SQ / 2 + 4, "text-anchor": "middle", "font-size": 11, "font-weight": 700, fill: wrong ? "#fff" : "#222" }, d.goal));
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
  return h("div", { class: "dice howto-dice" }, ...values.map(([colour, value]) => h("span", { class: "die", style: `background:${colour};color:${colour === "#fff" || colour === "#f9ab00" ? "#222" : "#fff"}` }, String(value))));
}

function howTo(): HTMLElement {
  return h(
    "div",
    {},
    section(
      "The goal",
      para("Everyone has a sheet of 16 squares. Each square has four cells, one red, yellow, green and blue, and a number in its middle. Fill a square's four cells so they add up to exactly that number. The highest score at the end wins."),
    ),
    section(
      "A round",
      para("Each round one player is the active player and five dice are rolled: red, yellow, green, blue and white. Then everyone places at the same time, on their own sheet."),
      dice([["#d93025", 5], ["#f9ab00", 2], ["#1e8e3e", 6], ["#1967d2", 1], ["#fff", 4]]),
      para("The active player writes two of the coloured dice, each into an empty cell of its own colour. Everyone else writes the white die into any empty cell, whatever its colour."),
      para("In the app: click a die, then one of the outlined cells, then \"Place\"."),
    ),
    section(
      "Closing a square",
      para("When a square's fourth cell is filled, the square is closed. If its cells add up to its number, it is correct: the number is circled and scores that many points. If not, it is wrong: −10."),
      figure(
        squares([
          { values: ["5", "", "6", ""], goal: "12" },
          { values: ["5", "2", "4", "1"], goal: "12", status: "correct" },
          { values: ["6", "3", "5", "2"], goal: "8", status: "wrong" },
        ]),
        "Left: 5 + 6 = 11 with two cells to go: any two more dice make at least 13, so it can no longer be correct; plan your sums. Middle: 5 + 2 + 4 + 1 = 12, correct: 12 points. Right: 16 is not 8: wrong, −10.",
      ),
      para("When another player closes a square correctly, the same square is crossed out on every sheet where it is still open: what you wrote there no longer counts."),
      figure(squares([{ values: ["3", "", "", "4"], goal: "15", status: "crossed" }]), "Crossed out: someone else closed this square first."),
    ),
    section(
      "Bridges, purple and orange squares",
      para("Two neighbouring squares that are both correct build a bridge between them: +5. A purple square that is correct and touches a bridge earns +5 more. Orange squares never get a bridge."),
      figure(
        squares(
          [
            { values: ["5", "2", "4", "1"], goal: "12", status: "correct" },
            { values: ["6", "5", "3", "3"], goal: "17", kind: "purple", status: "correct" },
            { values: ["6", "6", "5", "4"], goal: "21", kind: "orange", status: "correct" },
          ],
          [0],
        ),
        "A bridge between the first two squares: +5, and +5 for the purple square it touches. No bridge to the orange one.",
      ),
    ),
    section(
      "Jokers",
      para("Each sheet has two joker fields. When a die fits nowhere you like, write it into a joker field instead; at the end the values in your joker fields are taken off your score."),
    ),
    section(
      "The end",
      para("When a player has no open square left, they call \"colour square\": everyone else gets one final turn with all five dice. Then every square still open costs −10 and the scores are added up."),
    ),
  );
}

export const coloursquare: GameUi = {
  title: "Colour Square",
  colours: ["#7b1fa2", "#00897b", "#ef6c00", "#3949ab", "#c2185b", "#6d4c41"],
  colourNames: ["Purple", "Teal", "Orange", "Indigo", "Pink", "Brown"],
  // A round asks for a few sums to be weighed: a minute a move runs out on a newcomer in round 1.
  defaultClockS: 300,
  howTo,
  refusal(reason) {
    const words: Record<string, string> = {
      WRONG_COLOUR: "A coloured die goes only into a cell of its own colour.",
      SQUARE_NOT_OPEN: "That square is closed or crossed out: choose an open one.",
      CELL_FILLED: "That cell already holds a value.",
      JOKER_USED: "That joker field is already used.",
      SAME_DIE_TWICE: "Each die can be placed only once.",
      WRONG_DIE_FOR_ROLE: "The active player places coloured dice; everyone else places the white die.",
      TOO_MANY_DICE: "That is more dice than you may place this round.",
      MUST_PLACE: "You must place a die this round: a die still fits somewhere.",
      FIXED_VALUE_MISMATCH: "That cell is printed with a value: only a die of its colour showing that value fits.",
    };
    return words[reason];
  },
  endings: { COLOUR_SQUARE: "a player called colour square", SOLO_FINISHED: "no open square was left", ALL_REMOVED: "every player left", ROUND_LIMIT: "the round limit was reached" },
};
