import { h } from "../dom.js";
import type { coloursquare } from "../sdk.js";
import type { Board, BoardContext } from "./board.js";

export function drawColourSquare(view: coloursquare.View, ctx: BoardContext, picks: { picks: { die: number; key: string }[] }, redraw: () => void): Board {
  void view; void ctx; void picks; void redraw;
  return { element: h("p", {}, "Colour Square") };
}
