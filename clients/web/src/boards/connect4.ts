// Connect Four: the grid from view.board, legal columns from view.legal_columns, the last move from
// view.moves, the winning four from view.winning_cells. Click a column, or use ←/→ and Enter (or
// the digit keys) on the focused board.
import { s } from "../dom.js";
import { moves, type connect4 } from "../sdk.js";
import type { Board, BoardContext } from "./board.js";

const CELL = 60;

export function drawConnect4(view: connect4.View, ctx: BoardContext, selected: { column: number }): Board {
  const { rows, columns } = view;
  const legal = new Set(view.legalColumns);
  const lastColumn = view.moves.length > 0 ? Number(view.moves[view.moves.length - 1]) - 1 : -1;
  const winning = new Set(view.winningCells.map((c) => `${c.column},${c.row}`));
  const svg = s("svg", {
    viewBox: `0 0 ${columns * CELL} ${(rows + 1) * CELL}`,
    class: "board connect4",
    role: "grid",
    tabindex: 0,
    "aria-label": `Connect Four board, ${columns} columns. Use the arrow keys and Enter, or the digit keys, to drop a disc.`,
  });
  const drop = (column: number): void => ctx.submit(moves.connect4(column));
  const select = (column: number): void => {
    selected.column = column;
    if (ctx.myTurn) svg.querySelectorAll(".column").forEach((g, i) => g.classList.toggle("selected", i === column));
  };
  for (let c = 0; c < columns; c++) {
    const canDrop = ctx.myTurn && legal.has(c);
    const column = s("g", {
      class: `column${canDrop ? " legal" : ""}${c === selected.column && ctx.myTurn ? " selected" : ""}`,
      "data-column": c,
      role: "button",
      "aria-label": `Column ${c + 1}${canDrop ? "" : " (not playable now)"}`,
      onclick: () => drop(c),
      // The mouse moves the one highlight the keys move too: never two columns marked at once.
      onmouseenter: () => select(c),
    });
    column.append(s("rect", { x: c * CELL, y: 0, width: CELL, height: (rows + 1) * CELL, class: "hit" }));
    if (canDrop) {
      column.append(s("circle", { cx: c * CELL + CELL / 2, cy: CELL / 2, r: CELL * 0.3, class: "hint", fill: ctx.colours[ctx.seat ?? 0] ?? "#888" }));
    }
    const discs = view.board[c]?.seats ?? [];
    for (let r = 0; r < rows; r++) {
      const seat = discs[r];
      const cx = c * CELL + CELL / 2;
      const cy = (rows - r) * CELL + CELL / 2;
      column.append(s("rect", { x: c * CELL, y: (rows - r) * CELL, width: CELL, height: CELL, class: "frame" }));
      column.append(
        s("circle", {
          cx,
          cy,
          r: CELL * 0.4,
          class: `disc${seat === undefined ? " empty" : ""}`,
          fill: seat === undefined ? "#fff" : (ctx.colours[seat] ?? "#888"),
          "data-seat": seat,
        }),
      );
      if (seat !== undefined && c === lastColumn && r === discs.length - 1) {
        column.append(s("circle", { cx, cy, r: CELL * 0.12, class: "last-move" }));
      }
      if (winning.has(`${c},${r}`)) {
        column.append(s("circle", { cx, cy, r: CELL * 0.44, class: "winning" }));
      }
    }
    svg.append(column);
  }
  svg.addEventListener("keydown", (event) => {
    const key = (event as KeyboardEvent).key;
    if (key === "ArrowLeft" || key === "ArrowRight") {
      const step = key === "ArrowLeft" ? -1 : 1;
      select((selected.column + step + columns) % columns);
      event.preventDefault();
    } else if (key === "Enter" || key === " ") {
      drop(selected.column);
      event.preventDefault();
    } else if (/^[1-9]$/.test(key) && Number(key) <= columns) {
      drop(Number(key) - 1);
    }
  });
  return { element: svg, focus: () => (svg as SVGElement & HTMLOrSVGElement).focus() };
}
