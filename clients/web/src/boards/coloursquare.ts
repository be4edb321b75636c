// Colour Square: every player's sheet from the view (yours to act on, the others to read), the
// dice of the round, what you must or may place (view.must_place / view.max_dice), the targets each
// die may take (view.legal_placements), jokers, bridges, purple and orange squares, the score
// breakdown, the final-turn phase and the solo target. Pick a die, then a highlighted cell or
// joker field; "Place" sends the list, the server judges it.
import { h, s } from "../dom.js";
import { coloursquare, moves } from "../sdk.js";
import type { Board, BoardContext } from "./board.js";

const { Colour, Die, Phase, SquareKind, SquareStatus } = coloursquare;
const SQ = 80;
const GAP = 14;
const CELL_FILL: Record<number, string> = { [Colour.RED]: "#f28b82", [Colour.YELLOW]: "#fdd663", [Colour.GREEN]: "#81c995", [Colour.BLUE]: "#8ab4f8" };
const DIE_FILL: Record<number, string> = { [Die.RED]: "#d93025", [Die.YELLOW]: "#f9ab00", [Die.GREEN]: "#1e8e3e", [Die.BLUE]: "#1967d2", [Die.WHITE]: "#fff" };
const DIE_NAME: Record<number, string> = { [Die.RED]: "red", [Die.YELLOW]: "yellow", [Die.GREEN]: "green", [Die.BLUE]: "blue", [Die.WHITE]: "white" };
// Where each cell sits in its square, by position in corner_order (clockwise from the top left).
const CORNERS: [number, number][] = [[0, 0], [1, 0], [1, 1], [0, 1]];

export interface Picks {
  picks: coloursquare.Placement[];
  die?: coloursquare.Die;
  /** The round (or final turn) the picks were made in: a new one starts them afresh. */
  turn?: string;
}

function targetKey(p: coloursquare.Placement): string {
  return p.target.case === "joker" ? `j${p.target.value}` : p.target.case === "cell" ? `c${p.target.value.row},${p.target.value.column},${p.target.value.colour}` : "";
}

function dieValue(roll: coloursquare.Roll | undefined, die: coloursquare.Die): number {
  if (roll === undefined) return 0;
  return [0, roll.red, roll.yellow, roll.green, roll.blue, roll.white][die] ?? 0;
}

function sheetSvg(view: coloursquare.View, player: coloursquare.PlayerSheet, mine: boolean, picks: Picks, targets: Map<string, coloursquare.Placement>, pick: (p: coloursquare.Placement) => void): SVGElement {
  const sheet = view.sheet;
  const rows = sheet?.rows ?? 4;
  const columns = sheet?.columns ?? 4;
  const width = columns * (SQ + GAP) + GAP;
  const svg = s("svg", { viewBox: `0 0 ${width} ${rows * (SQ + GAP) + GAP}`, class: `sheet${mine ? " mine" : ""}`, "data-seat": player.seat });
  const origin = (row: number, column: number): [number, number] => [GAP + column * (SQ + GAP), GAP + row * (SQ + GAP)];
  for (const bridge of player.bridges) {
    const [x1, y1] = origin(bridge.first?.row ?? 0, bridge.first?.column ?? 0);
    const [x2, y2] = origin(bridge.second?.row ?? 0, bridge.second?.column ?? 0);
    svg.append(s("line", { x1: x1 + SQ / 2, y1: y1 + SQ / 2, x2: x2 + SQ / 2, y2: y2 + SQ / 2, class: "bridge" }));
  }
  const pending = new Map<string, coloursquare.Placement>();
  const shown = mine ? [...(view.ownPending?.placements ?? []), ...picks.picks] : [];
  for (const p of shown) pending.set(targetKey(p), p);
  (sheet?.squares ?? []).forEach((layout, index) => {
    const square = player.squares[index];
    const [x, y] = origin(layout.row, layout.column);
    const kind = layout.kind === SquareKind.PURPLE ? " purple" : layout.kind === SquareKind.ORANGE ? " orange" : "";
    const g = s("g", { class: `square${kind}`, "data-row": layout.row, "data-column": layout.column });
    g.append(s("rect", { x, y, width: SQ, height: SQ, rx: 6, class: "square-bg" }));
    layout.cornerOrder.forEach((colour, corner) => {
      const [cx, cy] = CORNERS[corner] ?? [0, 0];
      const key = `c${layout.row},${layout.column},${colour}`;
      const px = x + 4 + cx * (SQ / 2 - 4);
      const py = y + 4 + cy * (SQ / 2 - 4);
      const value = square?.cells[colour - 1] ?? 0;
      const printed = layout.printed.find((p) => p.colour === colour);
      const planned = pending.get(key);
      const target = targets.get(key);
      const cell = s("g", { class: `cell${target ? " target" : ""}${planned ? " planned" : ""}`, "data-colour": colour, "data-row": layout.row, "data-column": layout.column });
      cell.append(s("rect", { x: px, y: py, width: SQ / 2 - 4, height: SQ / 2 - 4, rx: 4, fill: CELL_FILL[colour] ?? "#eee" }));
      const text = value > 0 ? String(value) : planned ? String(dieValue(view.roll, planned.die)) : printed ? `=${printed.value}` : "";
      if (text) cell.append(s("text", { x: px + (SQ / 2 - 4) / 2, y: py + (SQ / 2 - 4) / 2 + 6, "text-anchor": "middle", class: `value${planned && value === 0 ? " planned" : ""}${printed && value === 0 && !planned ? " printed" : ""}` }, text));
      if (target) {
        cell.setAttribute("tabindex", "0");
        cell.setAttribute("role", "button");
        cell.setAttribute("aria-label", `${["", "red", "yellow", "green", "blue"][colour]} cell of row ${layout.row + 1}, column ${layout.column + 1}`);
        cell.addEventListener("click", () => pick(target));
        cell.addEventListener("keydown", (e) => {
          if ((e as KeyboardEvent).key === "Enter" || (e as KeyboardEvent).key === " ") pick(target);
        });
      }
      g.append(cell);
    });
    const goal = layout.goalLow === layout.goalHigh ? String(layout.goalLow) : `${layout.goalLow}–${layout.goalHigh}`;
    const status = square?.status ?? SquareStatus.OPEN;
    const cls = status === SquareStatus.CORRECT ? "correct" : status === SquareStatus.WRONG ? "wrong" : status === SquareStatus.CROSSED ? "crossed" : "open";
    const pill = Math.max(24, goal.length * 7 + 8); // ranges ("15–18") need a wider mark than a number
    g.append(s("rect", { x: x + (SQ - pill) / 2, y: y + SQ / 2 - 12, width: pill, height: 24, rx: 12, class: `goal ${cls}` }));
    g.append(s("text", { x: x + SQ / 2, y: y + SQ / 2 + 4, "text-anchor": "middle", class: `goal-text ${cls}` }, goal));
    if (status === SquareStatus.CROSSED) g.append(s("path", { d: `M${x + 6} ${y + 6} L${x + SQ - 6} ${y + SQ - 6} M${x + SQ - 6} ${y + 6} L${x + 6} ${y + SQ - 6}`, class: "cross" }));
    g.dataset.status = cls;
    svg.append(g);
  });
  return svg;
}

/** A column per player and a row per part of the score, the total last: two to four players
 * fit a phone's width and a desktop's board column with every word whole. */
function breakdownTable(view: coloursquare.View, ctx: BoardContext): HTMLElement {
  const parts: [string, keyof coloursquare.Breakdown][] = [["circled", "circled"], ["bridges", "bridges"], ["purple", "purple"], ["wrong", "wrongPenalty"], ["open", "openPenalty"], ["jokers", "jokers"], ["total", "total"]];
  return h(
    "table",
    { class: "breakdown" },
    h("tr", {}, h("th", {}, "score"), ...view.players.map((p) => h("th", { "data-seat": p.seat }, ctx.names[p.seat] ?? `Player ${p.seat + 1}`))),
    ...parts.map(([label, field]) => h("tr", { class: field === "total" ? "total" : "", "data-part": label }, h("td", {}, label), ...view.players.map((p) => h("td", {}, String(p.breakdown?.[field] ?? 0))))),
  );
}

export function drawColourSquare(view: coloursquare.View, ctx: BoardContext, picks: Picks, redraw: () => void): Board {
  const mySeat = view.seat;
  const turn = `${view.phase}-${view.round}-${view.finalTurnSeat ?? ""}`;
  if (picks.turn !== turn) {
    picks.picks = [];
    picks.die = undefined;
    picks.turn = turn;
  }
  const asked = ctx.myTurn && view.maxDice > 0;
  const used = new Set(picks.picks.map((p) => p.die));
  const taken = new Set([...picks.picks.map(targetKey)]);
  const targets = new Map<string, coloursquare.Placement>();
  if (asked && picks.die !== undefined && picks.picks.length < view.maxDice) {
    for (const p of view.legalPlacements) if (p.die === picks.die && !taken.has(targetKey(p))) targets.set(targetKey(p), p);
  }
  const pick = (p: coloursquare.Placement): void => {
    picks.picks.push(p);
    picks.die = undefined;
    redraw();
  };
  const usable = new Set(view.legalPlacements.map((p) => p.die));
  const dice = h(
    "div",
    { class: "dice" },
    ...[Die.RED, Die.YELLOW, Die.GREEN, Die.BLUE, Die.WHITE].map((die) => {
      const can = asked && usable.has(die) && !used.has(die) && picks.picks.length < view.maxDice;
      const b = h(
        "button",
        { type: "button", class: `die${picks.die === die ? " selected" : ""}${used.has(die) ? " used" : ""}`, "data-die": DIE_NAME[die], disabled: !can, style: `background:${DIE_FILL[die]};color:${die === Die.WHITE || die === Die.YELLOW ? "#222" : "#fff"}`, "aria-label": `${DIE_NAME[die]} die showing ${dieValue(view.roll, die)}` },
        String(dieValue(view.roll, die)),
      );
      b.addEventListener("click", () => {
        picks.die = picks.die === die ? undefined : die;
        redraw();
      });
      return b;
    }),
  );
  const me = view.players.find((p) => p.seat === mySeat);
  const jokerBoxes = (player: coloursquare.PlayerSheet, mine: boolean): HTMLElement =>
    h(
      "div",
      { class: "jokers" },
      "Jokers: ",
      ...[0, 1].map((i) => {
        const key = `j${i}`;
        const planned = mine ? [...(view.ownPending?.placements ?? []), ...picks.picks].find((p) => targetKey(p) === key) : undefined;
        const target = mine ? targets.get(key) : undefined;
        const value = player.jokers[i] ?? 0;
        const box = h("button", { type: "button", class: `joker${target ? " target" : ""}`, "data-joker": i, disabled: !target }, value > 0 ? String(value) : planned ? String(dieValue(view.roll, planned.die)) : "—");
        if (target) box.addEventListener("click", () => pick(target));
        return box;
      }),
    );
  const place = h("button", { type: "button", class: "place", disabled: !asked || picks.picks.length < view.mustPlace }, picks.picks.length === 0 ? "Pass" : `Place ${picks.picks.length} ${picks.picks.length === 1 ? "die" : "dice"}`);
  place.addEventListener("click", () => ctx.submit(moves.coloursquare([...picks.picks])));
  const clear = h("button", { type: "button", class: "clear", disabled: picks.picks.length === 0 && picks.die === undefined }, "Start again");
  clear.addEventListener("click", () => {
    picks.picks = [];
    picks.die = undefined;
    redraw();
  });
  const name = (seat: number | undefined): string => (seat === undefined ? "" : seat === mySeat ? "you" : (ctx.names[seat] ?? `seat ${seat + 1}`));
  const phase =
    view.phase === Phase.FINAL
      ? `Final turns: "colour square" was called by ${name(view.caller)}; now ${name(view.finalTurnSeat)}.`
      : view.phase === Phase.OVER
        ? `Finished after ${view.result?.rounds ?? view.round} rounds${view.result && view.result.target > 0 ? `; target ${view.result.target} ${view.result.reached ? "reached" : "not reached"}` : ""}.`
        : `Round ${view.round}; active player: ${name(view.activeSeat)}.`;
  const ask = asked
    ? view.mustPlace === view.maxDice
      ? `You must place ${view.mustPlace} ${view.mustPlace === 1 ? "die" : "dice"}.`
      : `You must place ${view.mustPlace} and may place up to ${view.maxDice} dice.`
    : view.ownPending !== undefined && mySeat !== undefined && view.phase === Phase.ROUND
      ? "You have placed; waiting for the others."
      : "";
  // The next step, from what is picked so far (not the same line once a die is chosen or placed).
  const left = view.maxDice - picks.picks.length;
  const next = !asked
    ? ""
    : picks.die !== undefined
      ? `Now choose where the ${DIE_NAME[picks.die]} die goes.`
      : left <= 0
        ? `Press "Place" to send ${picks.picks.length === 1 ? "it" : "them"}.`
        : picks.picks.length >= view.mustPlace && picks.picks.length > 0
          ? `Choose another die, or press "Place".`
          : view.mustPlace === 0 && picks.picks.length === 0
            ? `Choose a die, or press "Pass".`
            : picks.picks.length > 0
              ? "Choose the next die."
              : "Choose a die.";
  const waiting = view.toPlace.length > 0 ? `Still to place: ${view.toPlace.map(name).join(", ")}.` : "";
  const others = view.players.filter((p) => p.seat !== mySeat);
  const sheetFor = (p: coloursquare.PlayerSheet, mine: boolean): HTMLElement =>
    h(
      "div",
      { class: `player-sheet${mine ? " mine" : ""}`, "data-seat": p.seat },
      h("h4", {}, h("span", { class: "swatch", style: `background:${ctx.colours[p.seat] ?? "#888"}` }), ` ${ctx.names[p.seat] ?? `Seat ${p.seat + 1}`}${mine ? " (you)" : ""} · ${p.breakdown?.total ?? 0} points${p.placed && view.phase === Phase.ROUND ? " · placed" : ""}${p.removal ? " · out of the game" : ""}`),
      sheetSvg(view, p, mine, picks, mine ? targets : new Map(), pick),
      jokerBoxes(p, mine),
    );
  const element = h(
    "div",
    { class: "coloursquare-board" },
    h("p", { class: "phase" }, `${view.sheet?.label ?? ""} · ${phase}${view.target > 0 ? ` Solo target: ${view.target}.` : ""}`),
    view.roll ? h("div", { class: "dice-row" }, "Dice: ", dice) : undefined,
    ask ? h("p", { class: "ask" }, ask, " ", next) : undefined,
    asked ? h("div", { class: "actions" }, place, clear) : undefined,
    waiting ? h("p", { class: "waiting" }, waiting) : undefined,
    me ? sheetFor(me, true) : undefined,
    h("div", { class: "other-sheets" }, ...others.map((p) => sheetFor(p, false))),
    // Eight columns do not fit a phone: the table scrolls inside the page, the page does not.
    h("div", { class: "breakdown-wrap" }, breakdownTable(view, ctx)),
  );
  return { element };
}
