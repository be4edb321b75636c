// Colour Square: every player's sheet from the view (yours to act on, the others to read), the
// dice of the round, what you must or may place (view.must_place / view.max_dice), the targets each
// die may take (view.legal_placements), jokers, bridges, purple and orange squares, the score
// breakdown, the final-turn phase and the solo target. Pick a die, then a highlighted cell or
// joker field; "Place" sends the list, the server judges it.
// Access: every cell and die carries its colour's shape (red ▲, yellow ●, green ■,
// blue ◆, white ○; access.ts) and a name in words; the dice are one Tab stop and the cells you may
// write in another (the arrow keys move within each); picking a die moves the focus to the cells,
// picking a cell back to the dice. On a phone each cell's hit area is its whole quarter of the
// square, so the sheet at the phone's width gives every cell 44 px.
import { h, s } from "../dom.js";
import { t } from "../i18n.js";
import { coloursquare, moves } from "../sdk.js";
import { mark, markIcon, roving, shapeOf, takeFocus, type ColourName } from "./access.js";
import type { Board, BoardContext } from "./board.js";

const { Colour, Die, Phase, SquareKind, SquareStatus } = coloursquare;
const SQ = 80;
const GAP = 14;
const CELL_FILL: Record<number, string> = { [Colour.RED]: "#f28b82", [Colour.YELLOW]: "#fdd663", [Colour.GREEN]: "#81c995", [Colour.BLUE]: "#8ab4f8" };
const DIE_FILL: Record<number, string> = { [Die.RED]: "#d93025", [Die.YELLOW]: "#f9ab00", [Die.GREEN]: "#1e8e3e", [Die.BLUE]: "#1967d2", [Die.WHITE]: "#fff" };
const DIE_NAME: Record<number, ColourName> = { [Die.RED]: "red", [Die.YELLOW]: "yellow", [Die.GREEN]: "green", [Die.BLUE]: "blue", [Die.WHITE]: "white" };
const CELL_NAME: Record<number, ColourName> = { [Colour.RED]: "red", [Colour.YELLOW]: "yellow", [Colour.GREEN]: "green", [Colour.BLUE]: "blue" };
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

/** A cell you may write in, for the arrow keys: its element and where it sits on the sheet. */
interface TargetSpot {
  element: SVGElement;
  x: number;
  y: number;
}

function sheetSvg(view: coloursquare.View, player: coloursquare.PlayerSheet, owner: string, mine: boolean, picks: Picks, targets: Map<string, coloursquare.Placement>, pick: (p: coloursquare.Placement) => void, spots: TargetSpot[]): SVGElement {
  const sheet = view.sheet;
  const rows = sheet?.rows ?? 4;
  const columns = sheet?.columns ?? 4;
  const width = columns * (SQ + GAP) + GAP;
  const svg = s("svg", { viewBox: `0 0 ${width} ${rows * (SQ + GAP) + GAP}`, class: `sheet${mine ? " mine" : ""}`, "data-seat": player.seat, role: "group", "aria-label": t("board:csSheet", { name: owner }) });
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
    const goal = layout.goalLow === layout.goalHigh ? String(layout.goalLow) : `${layout.goalLow}–${layout.goalHigh}`;
    const status = square?.status ?? SquareStatus.OPEN;
    const cls = status === SquareStatus.CORRECT ? "correct" : status === SquareStatus.WRONG ? "wrong" : status === SquareStatus.CROSSED ? "crossed" : "open";
    const squareName = [
      t("board:csSquare", { row: layout.row + 1, column: layout.column + 1, goal }),
      kind ? t(`board:csKind_${kind.trim()}`) : "",
      t(`board:csStatus_${cls}`),
    ]
      .filter(Boolean)
      .join(", ");
    const g = s("g", { class: `square${kind}`, "data-row": layout.row, "data-column": layout.column, role: "group", "aria-label": squareName });
    g.append(s("rect", { x, y, width: SQ, height: SQ, rx: 6, class: "square-bg" }));
    layout.cornerOrder.forEach((colour, corner) => {
      const [cx, cy] = CORNERS[corner] ?? [0, 0];
      const key = `c${layout.row},${layout.column},${colour}`;
      const px = x + 4 + cx * (SQ / 2 - 4);
      const py = y + 4 + cy * (SQ / 2 - 4);
      const side = SQ / 2 - 4;
      const value = square?.cells[colour - 1] ?? 0;
      const printed = layout.printed.find((p) => p.colour === colour);
      const planned = pending.get(key);
      const target = targets.get(key);
      const colourName = CELL_NAME[colour] ?? "red";
      const cell = s("g", { class: `cell${target ? " target" : ""}${planned ? " planned" : ""}`, "data-colour": colour, "data-row": layout.row, "data-column": layout.column });
      // A target's hit area is its whole quarter of the square and half the gap around it: on a
      // phone's width that is 44 px a cell.
      if (target) cell.append(s("rect", { x: x - GAP / 2 + cx * (SQ / 2 + GAP / 2), y: y - GAP / 2 + cy * (SQ / 2 + GAP / 2), width: SQ / 2 + GAP / 2, height: SQ / 2 + GAP / 2, class: "cell-hit" }));
      cell.append(s("rect", { x: px, y: py, width: side, height: side, rx: 4, fill: CELL_FILL[colour] ?? "#eee", class: "cell-bg" }));
      // The colour's shape in the cell's outer corner, clear of the number in its middle.
      const mx = cx === 0 ? px + 8 : px + side - 8;
      const my = cy === 0 ? py + 8 : py + side - 8;
      cell.append(mark(shapeOf(colourName), mx, my, 6.5));
      const plannedValue = planned ? dieValue(view.roll, planned.die) : 0;
      const text = value > 0 ? String(value) : planned ? String(plannedValue) : printed ? `=${printed.value}` : "";
      if (text) cell.append(s("text", { x: px + side / 2 + (cx === 0 ? 3 : -3), y: py + side / 2 + 6 + (cy === 0 ? 3 : -3), "text-anchor": "middle", class: `value${planned && value === 0 ? " planned" : ""}${printed && value === 0 && !planned ? " printed" : ""}` }, text));
      const state =
        value > 0 ? String(value) : planned ? t("board:csPlanned", { value: plannedValue }) : printed ? t("board:csPrinted", { value: printed.value }) : t("board:empty");
      const name = `${t(`board:cell_${colourName}`)}, ${t("board:rowColumn", { row: layout.row + 1, column: layout.column + 1 })}: ${state}`;
      cell.setAttribute("aria-label", name);
      if (target) {
        cell.setAttribute("role", "button");
        cell.addEventListener("click", () => pick(target));
        cell.addEventListener("keydown", (e) => {
          const k = (e as KeyboardEvent).key;
          if (k === "Enter" || k === " ") {
            e.preventDefault();
            pick(target);
          }
        });
        spots.push({ element: cell, x: layout.column * 2 + cx, y: layout.row * 2 + cy });
      } else {
        cell.setAttribute("role", "img");
      }
      g.append(cell);
    });
    const pill = Math.max(24, goal.length * 7 + 8); // ranges ("15–18") need a wider mark than a number
    g.append(s("rect", { x: x + (SQ - pill) / 2, y: y + SQ / 2 - 12, width: pill, height: 24, rx: 12, class: `goal ${cls}`, "aria-hidden": "true" }));
    g.append(s("text", { x: x + SQ / 2, y: y + SQ / 2 + 4, "text-anchor": "middle", class: `goal-text ${cls}`, "aria-hidden": "true" }, goal));
    if (status === SquareStatus.CROSSED) g.append(s("path", { d: `M${x + 6} ${y + 6} L${x + SQ - 6} ${y + SQ - 6} M${x + SQ - 6} ${y + 6} L${x + 6} ${y + SQ - 6}`, class: "cross" }));
    // A purple or orange square shows its kind by a badge on its top edge as well as by colour:
    // a star or a plus (access.ts), between the two top cells, clear of their shapes and numbers.
    if (kind) {
      const colour = kind.trim() as ColourName;
      g.append(s("g", { class: `kind-badge ${colour}`, "data-kind": colour, "aria-hidden": "true" }, s("circle", { cx: x + SQ / 2, cy: y + 3, r: 10, class: "kind-disc" }), mark(shapeOf(colour), x + SQ / 2, y + 3, 7)));
    }
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
    h("tr", {}, h("th", { scope: "col" }, t("board:csScore")), ...view.players.map((p) => h("th", { scope: "col", "data-seat": p.seat }, ctx.names[p.seat] ?? t("board:seatN", { n: p.seat + 1 })))),
    ...parts.map(([label, field]) => h("tr", { class: field === "total" ? "total" : "", "data-part": label }, h("td", {}, t(`board:csPart_${label}`)), ...view.players.map((p) => h("td", {}, String(p.breakdown?.[field] ?? 0))))),
  );
}

/** The sheet's name in the player's language: the server names it in English ("tafel sheet A"). */
function sheetLabel(label: string): string {
  const side = /sheet ([A-Z])$/.exec(label)?.[1];
  return side === undefined ? label : t("board:csSheetSide", { side });
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
  const allDice = [Die.RED, Die.YELLOW, Die.GREEN, Die.BLUE, Die.WHITE];
  const diceButtons = allDice.map((die) => {
    const can = asked && usable.has(die) && !used.has(die) && picks.picks.length < view.maxDice;
    const colour = DIE_NAME[die] ?? "white";
    const value = dieValue(view.roll, die);
    const b = h(
      "button",
      {
        type: "button",
        class: `die${picks.die === die ? " selected" : ""}${used.has(die) ? " used" : ""}`,
        "data-die": colour,
        disabled: !can,
        style: `background:${DIE_FILL[die]};color:${die === Die.WHITE || die === Die.YELLOW ? "#222" : "#fff"}`,
        "aria-label": `${t(`board:die_${colour}`)}: ${value}${used.has(die) ? `, ${t("board:csDieUsed")}` : ""}`,
        "aria-pressed": can ? String(picks.die === die) : undefined,
      },
      markIcon(shapeOf(colour)),
      h("span", { class: "pips" }, String(value)),
    );
    b.addEventListener("click", () => {
      picks.die = picks.die === die ? undefined : die;
      redraw();
    });
    return b;
  });
  const dice = h("div", { class: "dice", role: "group", "aria-label": t("board:csDice") }, ...diceButtons);
  // One Tab stop for the dice that can be picked now (a disabled button takes no focus).
  const pickable = diceButtons.filter((b) => !b.disabled);
  if (pickable.length > 0) {
    const chosen = pickable.findIndex((b) => b.classList.contains("selected"));
    roving(
      pickable.map((element, i) => ({ element, x: i, y: 0 })),
      Math.max(chosen, 0),
    );
  }
  const me = view.players.find((p) => p.seat === mySeat);
  const jokerButtons: HTMLButtonElement[] = [];
  const jokerBoxes = (player: coloursquare.PlayerSheet, mine: boolean): HTMLElement =>
    h(
      "div",
      { class: "jokers" },
      `${t("board:csJokers")} `,
      ...[0, 1].map((i) => {
        const key = `j${i}`;
        const planned = mine ? [...(view.ownPending?.placements ?? []), ...picks.picks].find((p) => targetKey(p) === key) : undefined;
        const target = mine ? targets.get(key) : undefined;
        const value = player.jokers[i] ?? 0;
        const shown = value > 0 ? String(value) : planned ? String(dieValue(view.roll, planned.die)) : "—";
        const box = h("button", { type: "button", class: `joker${target ? " target" : ""}`, "data-joker": i, disabled: !target, "aria-label": t("board:csJoker", { n: i + 1, value: shown === "—" ? t("board:empty") : shown }) }, shown);
        if (target) {
          box.addEventListener("click", () => pick(target));
          jokerButtons.push(box);
        }
        return box;
      }),
    );
  const count = picks.picks.length;
  const place = h("button", { type: "button", class: "place", disabled: !asked || count < view.mustPlace }, count === 0 ? t("board:csPass") : t("board:csPlace", { count }));
  place.addEventListener("click", () => ctx.submit(moves.coloursquare([...picks.picks])));
  const clear = h("button", { type: "button", class: "clear", disabled: count === 0 && picks.die === undefined }, t("board:csStartAgain"));
  clear.addEventListener("click", () => {
    picks.picks = [];
    picks.die = undefined;
    redraw();
  });
  const name = (seat: number | undefined): string => (seat === undefined ? "" : seat === mySeat ? t("board:you") : (ctx.names[seat] ?? t("board:seatN", { n: seat + 1 })));
  const phase =
    view.phase === Phase.FINAL
      ? t("board:csFinal", { caller: name(view.caller), player: name(view.finalTurnSeat) })
      : view.phase === Phase.OVER
        ? `${t("board:csFinished", { count: view.result?.rounds ?? view.round })}${view.result && view.result.target > 0 ? t(view.result.reached ? "board:csTargetReached" : "board:csTargetMissed", { target: view.result.target }) : ""}.`
        : t("board:csRound", { round: view.round, player: name(view.activeSeat) });
  const ask = asked
    ? view.mustPlace === view.maxDice
      ? t("board:csMust", { count: view.mustPlace })
      : t("board:csMustMay", { must: view.mustPlace, count: view.maxDice })
    : view.ownPending !== undefined && mySeat !== undefined && view.phase === Phase.ROUND
      ? t("board:csPlacedWaiting")
      : "";
  // The next step, from what is picked so far (not the same line once a die is chosen or placed).
  const left = view.maxDice - count;
  const next = !asked
    ? ""
    : picks.die !== undefined
      ? t("board:csNowWhere", { die: t(`board:theDie_${DIE_NAME[picks.die] ?? "white"}`) })
      : left <= 0
        ? t("board:csPressPlace", { count })
        : count >= view.mustPlace && count > 0
          ? t("board:csAnotherOrPlace")
          : view.mustPlace === 0 && count === 0
            ? t("board:csDieOrPass")
            : count > 0
              ? t("board:csNextDie")
              : t("board:csChooseDie");
  const waiting = view.toPlace.length > 0 ? t("board:csStillToPlace", { names: view.toPlace.map(name).join(", ") }) : "";
  const others = view.players.filter((p) => p.seat !== mySeat);
  const spots: TargetSpot[] = [];
  const sheetFor = (p: coloursquare.PlayerSheet, mine: boolean): HTMLElement => {
    const owner = ctx.names[p.seat] ?? t("board:seatN", { n: p.seat + 1 });
    const facts = [
      `${owner}${mine ? ` (${t("board:you")})` : ""}`,
      t("board:points", { count: p.breakdown?.total ?? 0 }),
      p.placed && view.phase === Phase.ROUND ? t("board:csPlaced") : "",
      p.removal ? t("board:csOut") : "",
    ].filter(Boolean);
    return h(
      "div",
      { class: `player-sheet${mine ? " mine" : ""}`, "data-seat": p.seat },
      h("h4", {}, h("span", { class: "swatch", style: `background:${ctx.colours[p.seat] ?? "#888"}` }), ` ${facts.join(" · ")}`),
      sheetSvg(view, p, owner, mine, picks, mine ? targets : new Map(), pick, mine ? spots : []),
      jokerBoxes(p, mine),
    );
  };
  const mine = me ? sheetFor(me, true) : undefined;
  spots.sort((a, b) => a.y - b.y || a.x - b.x);
  if (spots.length > 0) roving(spots, 0);
  const legend = h(
    "p",
    { class: "shape-key" },
    `${t("board:shapes")} `,
    ...(["red", "yellow", "green", "blue", "white"] as ColourName[]).map((c) => h("span", { class: "shape-key-item", "data-colour": c }, markIcon(shapeOf(c)), ` ${t(`board:colour_${c}`)}`)),
    // The square kinds this sheet has (side B has no orange ones), by their badge.
    ...(["purple", "orange"] as const)
      .filter((c) => (view.sheet?.squares ?? []).some((q) => q.kind === (c === "purple" ? SquareKind.PURPLE : SquareKind.ORANGE)))
      .map((c) => h("span", { class: `shape-key-item kind ${c}`, "data-colour": c }, markIcon(shapeOf(c)), ` ${t(`board:csKind_${c}`)}`)),
  );
  const element = h(
    "div",
    { class: "coloursquare-board" },
    h("p", { class: "phase" }, `${sheetLabel(view.sheet?.label ?? "")} · ${phase}${view.target > 0 ? ` ${t("board:csSoloTarget", { target: view.target })}` : ""}`),
    view.roll ? h("div", { class: "dice-row" }, `${t("board:csDiceLabel")} `, dice) : undefined,
    ask ? h("p", { class: "ask" }, ask, " ", next) : undefined,
    asked ? h("div", { class: "actions" }, place, clear) : undefined,
    waiting ? h("p", { class: "waiting" }, waiting) : undefined,
    mine,
    h("div", { class: "other-sheets" }, ...others.map((p) => sheetFor(p, false))),
    // Eight columns do not fit a phone: the table scrolls inside the page, the page does not.
    h("div", { class: "breakdown-wrap" }, breakdownTable(view, ctx)),
    legend,
  );
  // The focus follows the step: the cells once a die is picked, the dice after a cell, "Place"
  // once nothing is left to pick.
  const focus = (): void => {
    const selectedDie = pickable.find((b) => b.classList.contains("selected"));
    if (picks.die !== undefined) takeFocus(spots[0]?.element ?? jokerButtons[0] ?? selectedDie);
    else takeFocus(pickable[0] ?? (place.disabled ? undefined : place));
  };
  return { element, focus };
}
