// Pieces the "how to play" articles share: a section, a drawn example with its caption, and a small
// grid of discs (the examples are drawings, not live boards).
import { mark, seatColourName, shapeOf } from "../boards/access.js";
import { h, s } from "../dom.js";

export function section(title: string, ...body: (Node | string)[]): HTMLElement {
  return h("section", { class: "howto-section" }, h("h3", {}, title), ...body);
}

export function para(...text: (Node | string)[]): HTMLElement {
  return h("p", {}, ...text);
}

export function figure(drawing: Element, caption: string): HTMLElement {
  // One picture for a screen reader, named by its caption: the drawing (a pair: both drawings
  // together) is the image, the SVGs inside it decoration.
  drawing.setAttribute("role", "img");
  drawing.setAttribute("aria-label", caption);
  drawing.querySelectorAll("svg").forEach((svg) => svg.setAttribute("aria-hidden", "true"));
  return h("figure", { class: "howto-figure" }, drawing, h("figcaption", {}, caption));
}

/** Rows of discs, top row first: a colour per cell, "" for an empty one; `ring` marks cells (a
 * winning line, a new disc) with a thick outline, `star` a bonus disc. */
export function discGrid(rows: string[][], opts: { cell?: number; ring?: Set<string>; star?: Set<string>; frame?: string } = {}): SVGElement {
  const cell = opts.cell ?? 34;
  const width = (rows[0]?.length ?? 0) * cell;
  const svg = s("svg", { viewBox: `0 0 ${width} ${rows.length * cell}`, width, height: rows.length * cell, class: "howto-grid", role: "img" });
  svg.append(s("rect", { x: 0, y: 0, width, height: rows.length * cell, rx: 4, fill: opts.frame ?? "#1f4fa8" }));
  rows.forEach((row, r) =>
    row.forEach((colour, c) => {
      const key = `${r},${c}`;
      const cx = c * cell + cell / 2;
      const cy = r * cell + cell / 2;
      svg.append(s("circle", { cx, cy, r: cell * 0.38, fill: colour || "#fff", stroke: opts.ring?.has(key) ? "#0b8043" : "#0003", "stroke-width": opts.ring?.has(key) ? 4 : 1 }));
      const name = colour ? seatColourName([colour], 0) : undefined;
      // The live boards' shape beside the colour (boards/access.ts); a bonus disc shows its star.
      if (opts.star?.has(key)) svg.append(s("text", { x: cx, y: cy + 6, "text-anchor": "middle", fill: "#fff", "font-size": 18 }, "★"));
      else if (name) svg.append(mark(shapeOf(name), cx, cy, cell * 0.2));
    }),
  );
  return svg;
}

/** An arrow between two drawings ("before → after"). */
export function pair(before: Element, after: Element): HTMLElement {
  return h("div", { class: "howto-pair" }, before, h("span", { class: "howto-arrow", "aria-hidden": "true" }, "→"), after);
}
