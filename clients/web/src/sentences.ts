// Every game event as a sentence for the move list (never raw protobuf).
import { ending } from "./say.js";
import type { coloursquare, games } from "./sdk.js";

const DIE = ["", "red", "yellow", "green", "blue", "white"];
const COLOUR = ["", "red", "yellow", "green", "blue"];

/** "FOUR_IN_A_ROW" → "four in a row". */
export function words(code: string): string {
  return code.toLowerCase().replaceAll("_", " ");
}

function placement(p: coloursquare.Placement): string {
  const die = DIE[p.die] ?? "a";
  if (p.target.case === "joker") return `the ${die} die on joker ${p.target.value + 1}`;
  if (p.target.case === "cell") {
    const { row, column, colour } = p.target.value;
    return `the ${die} die in the ${COLOUR[colour]} cell of row ${row + 1}, column ${column + 1}`;
  }
  return `the ${die} die`;
}

function roll(r: coloursquare.Roll | undefined): string {
  if (r === undefined) return "";
  return `red ${r.red}, yellow ${r.yellow}, green ${r.green}, blue ${r.blue}, white ${r.white}`;
}

/** The sentence for one event (of a game of kind `game`), or "" for events that say nothing to a
 * person. */
export function sentence(event: games.GameEvent, names: string[], game = "", endingText?: string): string {
  const who = (seat: number): string => names[seat] ?? `Player ${seat + 1}`;
  const kind = event.kind;
  switch (kind.case) {
    case "created":
      return `The game started: ${names.join(", ")}.`;
    case "resigned":
      return `${who(kind.value.seat)} resigned.`;
    case "timedOut":
      return `${who(kind.value.seat)} ran out of time${kind.value.removed ? " and is out of the game" : ""}.`;
    case "ended": {
      const outcome = kind.value.outcome;
      if (outcome === undefined) return "The game ended.";
      if (outcome.reason === "ABORTED") return "The game was aborted: no result.";
      const result = outcome.draw ? "a draw" : `${outcome.winners.map(who).join(" and ")} won`;
      const scores = outcome.scores.length > 0 ? ` Scores: ${outcome.scores.map((v, i) => `${who(i)} ${v}`).join(", ")}.` : "";
      return `Game over (${endingText ?? ending(game, outcome.reason)}): ${result}.${scores}`;
    }
    case "takenBack":
      return "A move was taken back by agreement.";
    case "connect4": {
      const e = kind.value.kind;
      if (e.case !== "discDropped") return "";
      const d = e.value;
      return `${who(d.seat)} dropped a disc into column ${d.column + 1} (row ${d.row + 1})${d.winningCells.length > 0 ? ", making four in a row" : ""}.`;
    }
    case "plus4": {
      const e = kind.value.kind;
      switch (e.case) {
        case "discPushed":
          return `${who(e.value.seat)} pushed ${e.value.bonus ? "the bonus disc" : "a disc"} into column ${e.value.column + 1}.`;
        case "discFellOut":
          return `A ${e.value.disc?.bonus ? "bonus " : ""}disc fell out of the frame back to ${who(e.value.returnedTo)}.`;
        case "lineScored":
          return `${who(e.value.colour)} completed a line for ${e.value.points} point${e.value.points === 1 ? "" : "s"}.`;
        case "turnSkipped":
          return `${who(e.value.seat)} has no disc left: turn skipped.`;
        case "roundWon":
          return `Round ${e.value.round} won by ${e.value.winners.map(who).join(" and ")}${e.value.frameEmptied ? "; the frame is emptied" : ""}.`;
        default:
          return "";
      }
    }
    case "coloursquare": {
      const e = kind.value.kind;
      switch (e.case) {
        case "diceRolled":
          return e.value.finalTurn
            ? `Final turn for ${who(e.value.seat)}: rolled ${roll(e.value.roll)}.`
            : `Round ${e.value.round}: ${who(e.value.seat)} rolled ${roll(e.value.roll)}.`;
        case "placementSubmitted":
          return `${who(e.value.seat)} has placed.`;
        case "placementsMade":
          return e.value.placements.length === 0
            ? `${who(e.value.seat)} passed.`
            : `${who(e.value.seat)} wrote ${e.value.placements.map(placement).join(" and ")}.`;
        case "squareClosed":
          return `${who(e.value.seat)} closed the square in row ${e.value.row + 1}, column ${e.value.column + 1} at ${e.value.sum}, ${e.value.correct ? "on target" : "off target"}.`;
        case "squareCrossed":
          return `The square in row ${e.value.row + 1}, column ${e.value.column + 1} is crossed out on ${who(e.value.seat)}'s sheet.`;
        case "roundResolved":
          return "";
        case "colourSquareCalled":
          return `${who(e.value.seat)} called "colour square": final turns follow.`;
        case "finalTurnResolved":
          return "";
        case "playerRemoved":
          return `${who(e.value.seat)} is out of the game (${words(["", "timeouts", "resigned"][e.value.removal] ?? "")}).`;
        default:
          return "";
      }
    }
    default:
      return "";
  }
}
