// Plus 4: the 4×4 frame (top row first), both supplies, the bonus disc, scored lines, points,
// the target and rounds won, all from the view. Push with the arrow buttons above the columns
// (or ←/→, B for the bonus disc, Enter); the legal moves are view.legal_moves. The four push
// arrows are one Tab stop (the arrow keys move between them), each named with what its column
// holds; every disc carries its colour's shape (access.ts).
import { h, s } from "../dom.js";
import { t } from "../i18n.js";
import { moves, plus4 } from "../sdk.js";
import { mark, markIcon, roving, seatShape, seatWord, takeFocus } from "./access.js";
import type { Board, BoardContext } from "./board.js";

const CELL = 70;
const TOP = 50;

export function drawPlus4(view: plus4.View, ctx: BoardContext, selected: { column: number; bonus: boolean }): Board {
  const legal = view.legalMoves;
  const canPush = (column: number, bonus: boolean): boolean => legal.some((m) => m.column === column && m.bonus === bonus);
  const bonusPossible = legal.some((m) => m.bonus);
  if (!bonusPossible) selected.bonus = false;
  const push = (column: number): void => ctx.submit(moves.plus4(column, { bonus: selected.bonus }));
  const svg = s("svg", {
    viewBox: `0 0 ${4 * CELL} ${TOP + 4 * CELL}`,
    class: "board plus4",
    role: "group",
    tabindex: -1,
    "aria-label": t("board:p4Board"),
  });
  const contents = (c: number): string =>
    view.frame
      .map((row) => row.squares[c]?.disc)
      .map((disc) => (disc === undefined ? t("board:empty") : `${seatWord(ctx.colours, ctx.names, disc.colour)}${disc.bonus ? ` (${t("board:bonusDisc")})` : ""}`))
      .join(", ");
  const arrows: SVGElement[] = [];
  const last = ctx.lastEvent?.kind.case === "plus4" && ctx.lastEvent.kind.value.kind.case === "discPushed" ? ctx.lastEvent.kind.value.kind.value : undefined;
  for (let c = 0; c < 4; c++) {
    const ok = ctx.myTurn && canPush(c, selected.bonus);
    const arrow = s(
      "g",
      {
        class: `push${ok ? " legal" : ""}${ctx.myTurn && c === selected.column ? " selected" : ""}`,
        "data-column": c,
        role: "button",
        "aria-label": `${t("board:p4Push", { column: c + 1 })}${ctx.myTurn && !ok ? `, ${t("board:notPlayable")}` : ""}. ${t("board:p4Contents", { list: contents(c) })}`,
        onclick: () => push(c),
      },
      s("rect", { x: c * CELL, y: 0, width: CELL, height: TOP, class: "hit" }),
      s("path", { d: `M${c * CELL + CELL / 2 - 14} 12 h28 l-14 26 z`, fill: ok ? (ctx.colours[ctx.seat ?? 0] ?? "#888") : "#ccc" }),
    );
    if (last?.column === c) {
      arrow.append(s("rect", { x: c * CELL + 8, y: 4, width: CELL - 16, height: TOP - 8, rx: 6, class: "last-move-box", stroke: ctx.colours[last.seat] ?? "#333" }));
    }
    svg.append(arrow);
    arrows.push(arrow);
  }
  const select = (column: number): void => {
    selected.column = column;
    arrows.forEach((g, i) => g.classList.toggle("selected", ctx.myTurn && i === column));
  };
  roving(
    arrows.map((element, i) => ({ element, x: i, y: 0 })),
    selected.column,
    select,
  );
  view.frame.forEach((row, r) => {
    row.squares.forEach((square, c) => {
      const x = c * CELL;
      const y = TOP + r * CELL;
      svg.append(s("rect", { x, y, width: CELL, height: CELL, class: "frame" }));
      const disc = square.disc;
      svg.append(
        s("circle", { cx: x + CELL / 2, cy: y + CELL / 2, r: CELL * 0.38, class: `disc${disc ? "" : " empty"}`, fill: disc ? (ctx.colours[disc.colour] ?? "#888") : "#fff", "data-row": r, "data-column": c, "data-colour": disc?.colour, "data-bonus": disc?.bonus }),
      );
      if (disc) svg.append(mark(seatShape(ctx.colours, disc.colour), x + CELL / 2, y + CELL / 2, CELL * 0.15));
      // The bonus disc's star in the square's corner: the disc's middle holds its colour's shape.
      if (disc?.bonus) svg.append(s("text", { x: x + CELL - 11, y: y + 19, class: "bonus-mark", "text-anchor": "middle" }, "★"));
    });
  });
  // Scored lines of the current round, while their four discs are still there: a push that moved
  // them down leaves no mark over discs that no longer make the line.
  const holds = (line: plus4.LineScored): boolean => line.cells.every((cell) => view.frame[cell.row]?.squares[cell.column]?.disc?.colour === line.colour);
  for (const line of view.scoredLines.filter((l) => l.round === view.round && holds(l))) {
    const first = line.cells[0];
    const last = line.cells[line.cells.length - 1];
    if (first === undefined || last === undefined) continue;
    const at = (cell: plus4.Cell): [number, number] => [cell.column * CELL + CELL / 2, TOP + cell.row * CELL + CELL / 2];
    const [x1, y1] = at(first);
    const [x2, y2] = at(last);
    svg.append(s("line", { x1, y1, x2, y2, class: "scored-line", "data-colour": line.colour, "data-cells": line.cells.map((c) => `${c.row},${c.column}`).join(" ") }));
  }
  svg.addEventListener("keydown", (event) => {
    const key = (event as KeyboardEvent).key;
    if (key === "ArrowLeft" || key === "ArrowRight") {
      // The frame itself focused (the page gives it the focus): the keys move into the arrows.
      select((selected.column + (key === "ArrowLeft" ? 3 : 1)) % 4);
      arrows.forEach((g, i) => g.setAttribute("tabindex", i === selected.column ? "0" : "-1"));
      (arrows[selected.column] as SVGElement & HTMLOrSVGElement | undefined)?.focus();
      event.preventDefault();
    } else if (key === "Enter" || key === " ") {
      const focused = (event.target as Element).closest(".push")?.getAttribute("data-column");
      push(focused == null ? selected.column : Number(focused));
      event.preventDefault();
    } else if (key === "b" || key === "B") {
      bonus.click();
    }
  });
  const options = view.options;
  const mode = options?.mode ?? plus4.Mode.POINTS;
  const target = options?.target ?? 0;
  const supplies = h(
    "ul",
    { class: "supplies" },
    // Per seat; a replay's earlier steps have no supplies (the events do not report them).
    ...ctx.colours.map((colour, seat) => [colour, seat, view.supplies[seat]] as const).map(([colour, seat, supply]) =>
      h(
        "li",
        { "data-seat": seat },
        h("span", { class: "swatch", style: `background:${colour}` }, markIcon(seatShape(ctx.colours, seat))),
        `${ctx.names[seat] ?? t("board:seatN", { n: seat + 1 })}${supply ? `: ${t("board:p4Discs", { count: supply.ordinary })}${supply.bonus ? ` + ${t("board:bonusDisc")} ★` : ` (${t("board:bonusPlayed")})`}` : ""}`,
        mode === plus4.Mode.ROUNDS
          ? ` · ${t("board:p4RoundsWon", { won: view.roundWins[seat] ?? 0, target })}`
          : mode === plus4.Mode.POINTS
            ? ` · ${t("board:p4Points", { points: view.scores[seat] ?? 0, target })}`
            : "",
      ),
    ),
  );
  const bonus = h("input", { type: "checkbox", class: "bonus", disabled: !(ctx.myTurn && bonusPossible), checked: selected.bonus }) as HTMLInputElement;
  bonus.addEventListener("change", () => {
    selected.bonus = bonus.checked;
    svg.querySelectorAll(".push").forEach((g, i) => g.classList.toggle("legal", ctx.myTurn && canPush(i, selected.bonus)));
  });
  const modeText = mode === plus4.Mode.FIRST_LINE ? t("board:p4FirstLine") : mode === plus4.Mode.ROUNDS ? t("board:p4FirstToRounds", { count: target }) : t("board:p4FirstToPoints", { count: target });
  const info = h(
    "div",
    { class: "plus4-info" },
    h("p", {}, `${t("board:p4Mode", { mode: modeText })} · ${t("board:p4PushOf", { made: view.movesMade, limit: options?.moveLimit ?? 0 })}${mode === plus4.Mode.ROUNDS ? ` · ${t("board:p4Round", { round: view.round })}` : ""}`),
    supplies,
  );
  // The bonus choice sits above the arrows it changes, where the eye is when pushing.
  const choice = ctx.seat === undefined ? undefined : h("label", { class: "bonus-choice" }, bonus, ` ${t("board:p4BonusChoice")}`);
  return { element: h("div", { class: "plus4-board" }, choice, svg, info), focus: () => takeFocus(arrows[selected.column] ?? svg) };
}
