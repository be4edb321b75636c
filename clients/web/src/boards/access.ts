// What lets every player use the boards (README.md, "Access"): a shape beside every colour (so a
// colour-blind player tells red from green without the colour), roving focus for the arrow keys
// (one Tab stop per board, not one per column or cell), and the page's one polite live region.
import { s } from "../dom.js";
import { t } from "../i18n.js";

export type Shape = "triangle" | "circle" | "square" | "diamond" | "ring" | "star" | "cross";

/** The colours the boards draw, by name: the same colour has the same shape in every game (red is
 * a triangle on a Connect Four disc, a Plus 4 disc, a Colour Square cell and its die). Purple and
 * orange are Colour Square's square kinds: a star and a plus, neither like the five others at a
 * cell's size (a hexagon or an X would pass for a circle or a crossed-out square). */
export type ColourName = "red" | "yellow" | "green" | "blue" | "white" | "purple" | "orange";
const SHAPE: Record<ColourName, Shape> = { red: "triangle", yellow: "circle", green: "square", blue: "diamond", white: "ring", purple: "star", orange: "cross" };
// Seat colours of the disc games (games/connect4.ts, games/plus4.ts) by their CSS value.
const SEAT_COLOUR: Record<string, ColourName> = { "#d93025": "red", "#f4b400": "yellow", "#1a73e8": "blue" };
const SEAT_SHAPES: Shape[] = ["triangle", "circle", "square", "diamond", "cross", "ring"];
const GLYPH: Record<Shape, string> = { triangle: "▲", circle: "●", square: "■", diamond: "◆", ring: "○", star: "★", cross: "✚" };

export function shapeOf(colour: ColourName): Shape {
  return SHAPE[colour];
}

/** A seat's colour by name, where it is one of ours; undefined for another colour. */
export function seatColourName(colours: string[], seat: number): ColourName | undefined {
  return SEAT_COLOUR[(colours[seat] ?? "").toLowerCase()];
}

/** A seat's shape: its colour's, else one by seat number (still one shape per seat). */
export function seatShape(colours: string[], seat: number): Shape {
  const name = seatColourName(colours, seat);
  return name ? SHAPE[name] : (SEAT_SHAPES[seat % SEAT_SHAPES.length] ?? "cross");
}

/** A seat in words for an accessible name: "red", else the player's name. */
export function seatWord(colours: string[], names: string[], seat: number): string {
  const name = seatColourName(colours, seat);
  return name ? t(`board:colour_${name}`) : (names[seat] ?? t("board:seatN", { n: seat + 1 }));
}

export function glyph(shape: Shape): string {
  return GLYPH[shape];
}

/** The shape drawn at (cx, cy) with radius r: white with a dark edge, seen on every fill. */
export function mark(shape: Shape, cx: number, cy: number, r: number): SVGElement {
  const attrs = { class: "mark", "data-mark": shape, "aria-hidden": "true" };
  const k = 0.866 * r;
  switch (shape) {
    case "triangle":
      return s("path", { ...attrs, d: `M${cx} ${cy - r}L${cx + k} ${cy + r / 2}L${cx - k} ${cy + r / 2}Z` });
    case "circle":
      return s("circle", { ...attrs, cx, cy, r: r * 0.62 });
    case "square":
      return s("rect", { ...attrs, x: cx - r * 0.6, y: cy - r * 0.6, width: r * 1.2, height: r * 1.2 });
    case "diamond":
      return s("path", { ...attrs, d: `M${cx} ${cy - r}L${cx + r * 0.8} ${cy}L${cx} ${cy + r}L${cx - r * 0.8} ${cy}Z` });
    case "ring":
      return s("circle", { ...attrs, class: "mark ring", cx, cy, r: r * 0.55 });
    case "star": {
      // Five points, the inner radius 0.45 of the outer: fat enough to stay a star at 13 px.
      const points = Array.from({ length: 10 }, (_, i) => {
        const a = (Math.PI / 5) * i - Math.PI / 2;
        const d = i % 2 === 0 ? r * 1.05 : r * 0.47;
        return `${(cx + d * Math.cos(a)).toFixed(2)} ${(cy + d * Math.sin(a)).toFixed(2)}`;
      });
      return s("path", { ...attrs, d: `M${points.join("L")}Z` });
    }
    case "cross": {
      const a = r * 0.3;
      return s("path", { ...attrs, d: `M${cx - a} ${cy - r}h${2 * a}v${r - a}h${r - a}v${2 * a}h${a - r}v${r - a}h${-2 * a}v${a - r}h${a - r}v${-2 * a}h${r - a}Z` });
    }
  }
}

/** The shape as a small inline SVG for HTML (a die, a swatch), hidden from screen readers (the
 * element's name says the colour). */
export function markIcon(shape: Shape): SVGElement {
  return s("svg", { class: "mark-icon", viewBox: "-10 -10 20 20", "aria-hidden": "true", focusable: "false" }, mark(shape, 0, 0, 8));
}

export interface Spot {
  element: HTMLElement | SVGElement;
  /** Where it sits, for the arrow keys: across, then down. */
  x: number;
  y: number;
}

/**
 * Roving focus over a board's spots: only the current spot is in the Tab order (tabindex 0, the
 * rest -1), the arrow keys move to the nearest spot that way, Home and End to the first and last.
 * `moved` hears the new index (to mark it as the selection).
 */
export function roving(spots: Spot[], current: number, moved?: (index: number) => void): void {
  const at = Math.min(Math.max(current, 0), spots.length - 1);
  spots.forEach((spot, i) => {
    spot.element.setAttribute("tabindex", i === at ? "0" : "-1");
    spot.element.addEventListener("keydown", (event) => {
      const next = step(spots, i, (event as KeyboardEvent).key);
      if (next === undefined) return;
      event.preventDefault();
      event.stopPropagation();
      if (next === i) return;
      spot.element.setAttribute("tabindex", "-1");
      const target = spots[next]!.element;
      target.setAttribute("tabindex", "0");
      target.focus();
      moved?.(next);
    });
  });
}

function step(spots: Spot[], from: number, key: string): number | undefined {
  if (key === "Home") return 0;
  if (key === "End") return spots.length - 1;
  const direction: Record<string, [number, number]> = { ArrowLeft: [-1, 0], ArrowRight: [1, 0], ArrowUp: [0, -1], ArrowDown: [0, 1] };
  const d = direction[key];
  if (d === undefined) return undefined;
  const here = spots[from]!;
  let best = from;
  let bestScore = Infinity;
  spots.forEach((spot, i) => {
    const dx = spot.x - here.x;
    const dy = spot.y - here.y;
    const along = dx * d[0] + dy * d[1];
    if (along <= 0) return;
    // The nearest one that way, keeping to the same row (or column) where it can.
    const score = along + 3 * Math.abs(d[0] !== 0 ? dy : dx);
    if (score < bestScore) {
      bestScore = score;
      best = i;
    }
  });
  return best;
}

/** Focus `element` when the page's focus was in the board just redrawn (now gone) or nowhere:
 * a redraw never takes the focus from the chat box or a link the player is on. */
export function takeFocus(element: Element | null | undefined): void {
  const active = document.activeElement;
  const free = active === null || active === document.body || !active.isConnected || active.closest(".board-area") !== null;
  // Without scrolling: the redrawn board stands where the old one stood, and the page stays put.
  if (element && free) (element as HTMLElement).focus({ preventScroll: true });
}

/** Says `text` once in the page's polite live region (index.html's #announce): a move, a result. */
export function announce(text: string): void {
  const region = document.getElementById("announce");
  if (region === null || !text) return;
  // Emptied first, so the same words twice ("Your turn.") are said twice.
  region.textContent = "";
  setTimeout(() => {
    region.textContent = text;
  }, 50);
}
