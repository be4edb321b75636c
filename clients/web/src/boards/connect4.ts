// Connect Four: the grid from view.board, legal columns from view.legal_columns, the last move from
// view.moves, the winning four from view.winning_cells. Click a column, or use ←/→ and Enter (or
// the digit keys) on the focused board. Each column is one button with its name in words ("Column
// 3, 4 discs, top red"), the arrow keys move the focus between them (one Tab stop for the board),
// and every disc carries its colour's shape (access.ts).
import { s } from "../dom.js";
import { t } from "../i18n.js";
import { moves, type connect4 } from "../sdk.js";
import { mark, roving, seatShape, seatWord, takeFocus } from "./access.js";
import type { Board, BoardContext } from "./board.js";

const CELL = 60;

export function drawConnect4(view: connect4.View, ctx: BoardContext, selected: { column: number }): Board {
  const { rows, columns } = view;
  const legal = new Set(view.legalColumns);
  const lastColumn = view.moves.length > 0 ? Number(view.moves[view.moves.length - 1]) - 1 : -1;
  const winning = new Set(view.winningCells.map((c) => `${c.column},${c.row}`));
  // Focusable by the page (tabindex -1) but not a Tab stop: the selected column is.
  const svg = s("svg", {
    viewBox: `0 0 ${columns * CELL} ${(rows + 1) * CELL}`,
    class: "board connect4",
    role: "group",
    tabindex: -1,
    "aria-label": t("board:c4Board", { columns }),
  });
  const drop = (column: number): void => ctx.submit(moves.connect4(column));
  const select = (column: number): void => {
    selected.column = column;
    svg.querySelectorAll(".column").forEach((g, i) => {
      if (ctx.myTurn) g.classList.toggle("selected", i === column);
      g.setAttribute("tabindex", i === column ? "0" : "-1");
    });
  };
  const columnsDrawn: SVGElement[] = [];
  for (let c = 0; c < columns; c++) {
    const canDrop = ctx.myTurn && legal.has(c);
    const discs = view.board[c]?.seats ?? [];
    const top = discs[discs.length - 1];
    const name = [
      t("board:c4Column", { column: c + 1 }),
      t("board:discs", { count: discs.length }),
      top === undefined ? "" : t("board:top", { who: seatWord(ctx.colours, ctx.names, top) }),
      discs.length >= rows ? t("board:full") : ctx.myTurn && !canDrop ? t("board:notPlayable") : "",
    ]
      .filter(Boolean)
      .join(", ");
    const column = s("g", {
      class: `column${canDrop ? " legal" : ""}${c === selected.column && ctx.myTurn ? " selected" : ""}`,
      "data-column": c,
      role: "button",
      "aria-label": name,
      onclick: () => drop(c),
      // The mouse moves the one highlight the keys move too: never two columns marked at once.
      onmouseenter: () => select(c),
    });
    column.append(s("rect", { x: c * CELL, y: 0, width: CELL, height: (rows + 1) * CELL, class: "hit" }));
    if (canDrop) {
      column.append(s("circle", { cx: c * CELL + CELL / 2, cy: CELL / 2, r: CELL * 0.3, class: "hint", fill: ctx.colours[ctx.seat ?? 0] ?? "#888" }));
    }
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
      if (seat !== undefined) column.append(mark(seatShape(ctx.colours, seat), cx, cy, CELL * 0.17));
      if (seat !== undefined && c === lastColumn && r === discs.length - 1) {
        column.append(s("circle", { cx, cy, r: CELL * 0.31, class: "last-move" }));
      }
      if (winning.has(`${c},${r}`)) {
        column.append(s("circle", { cx, cy, r: CELL * 0.44, class: "winning" }));
      }
    }
    svg.append(column);
    columnsDrawn.push(column);
  }
  roving(
    columnsDrawn.map((element, i) => ({ element, x: i, y: 0 })),
    selected.column,
    select,
  );
  svg.addEventListener("keydown", (event) => {
    const key = (event as KeyboardEvent).key;
    if (key === "ArrowLeft" || key === "ArrowRight") {
      // The board itself focused (the page gives it the focus): the keys move into the columns.
      const step = key === "ArrowLeft" ? -1 : 1;
      const next = (selected.column + step + columns) % columns;
      select(next);
      (columnsDrawn[next] as SVGElement & HTMLOrSVGElement | undefined)?.focus();
      event.preventDefault();
    } else if (key === "Enter" || key === " ") {
      // The focused column (the mouse may have moved the highlight elsewhere meanwhile).
      const focused = (event.target as Element).closest(".column")?.getAttribute("data-column");
      drop(focused == null ? selected.column : Number(focused));
      event.preventDefault();
    } else if (/^[1-9]$/.test(key) && Number(key) <= columns) {
      drop(Number(key) - 1);
    }
  });
  return { element: svg, focus: () => takeFocus(columnsDrawn[selected.column] ?? svg) };
}
