// Plus 4 as players see it: red and blue discs pushed in from the top, "how to play", refusals in
// words.
import { h } from "../dom.js";
import type { GameUi } from "./types.js";
import { discGrid, figure, pair, para, section } from "./howto.js";

const RED = "#d93025";
const BLUE = "#1a73e8";

function howTo(): HTMLElement {
  const R = RED;
  const B = BLUE;
  const _ = "";
  const frame = "#555";
  return h(
    "div",
    {},
    section(
      "The goal",
      para("Make lines of four discs of your colour in a 4 × 4 frame. Each new line scores; the first player to reach the target (11 points unless the table chose otherwise) wins."),
      para("Other tables play \"first line wins\" (the first complete line ends the game) or rounds (each line wins a round, the frame is emptied)."),
    ),
    section(
      "A turn: push a disc",
      para("Red starts. On your turn, push one disc from your supply into the top of any column, full or not. Every disc already in that column moves down one place."),
      para("If the column was full, its bottom disc falls out and goes back to its owner's supply: it may be yours or your opponent's."),
      figure(
        pair(
          discGrid([[B, _, _, _], [R, _, _, _], [R, _, _, _], [B, _, _, _]], { frame }),
          discGrid([[R, _, _, _], [B, _, _, _], [R, _, _, _], [R, _, _, _]], { frame, ring: new Set(["0,0"]) }),
        ),
        "Red pushes into the full column 1: the discs move down, the blue disc at the bottom falls out and goes back to blue.",
      ),
    ),
    section(
      "Scoring",
      para("A row, a column or a diagonal of four discs of one colour is a line: it scores 1 point for that colour, whoever pushed. A push can complete lines for both players."),
      para("A line that was already complete does not score again; a line that was broken and is completed again does."),
      figure(
        discGrid([[B, B, B, B], [R, R, R, R], [_, _, _, _], [_, _, _, _]], { frame, ring: new Set(["0,0", "0,1", "0,2", "0,3"]) }),
        "Blue's push into column 3 moved a red disc down: the top row is now all blue and the row below all red. Both score 1.",
      ),
    ),
    section(
      "The bonus disc ★",
      para("Each player also has one bonus disc. Tick \"push my bonus disc\" (or press B) before you push it. A line that holds its owner's bonus disc scores 2 points instead of 1."),
      figure(discGrid([[R, R, R, R], [_, _, _, _], [_, _, _, _], [_, _, _, _]], { frame, star: new Set(["0,2"]) }), "A red line with red's bonus disc: 2 points for red."),
      para("If you have no disc left in your supply, your turn is skipped until one of your discs falls out."),
    ),
  );
}

export const plus4: GameUi = {
  title: "Plus 4",
  colours: [RED, BLUE],
  colourNames: ["Red", "Blue"],
  defaultClockS: 60,
  howTo,
  refusal(reason) {
    if (reason === "NO_BONUS_DISC") return "Your bonus disc is not in your supply: push an ordinary disc.";
    if (reason === "NO_ORDINARY_DISC") return "You have no ordinary disc left: push your bonus disc.";
    if (reason === "COLUMN_OUT_OF_RANGE") return "There is no such column in the frame.";
    return undefined;
  },
  endings: { TARGET_REACHED: "the target score was reached", LINE_COMPLETED: "a line was completed", ROUNDS_TARGET_REACHED: "the target number of rounds was reached", MOVE_LIMIT: "the push limit was reached" },
};
