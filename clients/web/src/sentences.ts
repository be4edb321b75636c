// Every game event as a sentence for the move list (never raw protobuf), in the player's language
// (game:moves.*, with each game's own words: Dutch "schijf", "kolom", German "Spielstein", "Spalte").
import { formatList, formatNumber, t } from "./i18n.js";
import { ending } from "./say.js";
import type { coloursquare, games } from "./sdk.js";

const DIE = ["", "red", "yellow", "green", "blue", "white"];
const COLOUR = ["", "red", "yellow", "green", "blue"];

const n = (value: number): string => formatNumber(value);

function placement(p: coloursquare.Placement): string {
  const die = t(`game:moves.coloursquare.die.${DIE[p.die] || "other"}`);
  if (p.target.case === "joker") return t("game:moves.coloursquare.onJoker", { die, joker: n(p.target.value + 1) });
  if (p.target.case === "cell") {
    const { row, column, colour } = p.target.value;
    const cell = t(`game:moves.coloursquare.cell.${COLOUR[colour] || "other"}`);
    return t("game:moves.coloursquare.inCell", { die, cell, row: n(row + 1), column: n(column + 1) });
  }
  return die;
}

function roll(r: coloursquare.Roll | undefined): string {
  if (r === undefined) return "";
  return t("game:moves.coloursquare.roll", { red: n(r.red), yellow: n(r.yellow), green: n(r.green), blue: n(r.blue), white: n(r.white) });
}

/** "Anna 12, Ben −3" for a result's scores. */
export function scoreList(scores: number[], who: (seat: number) => string): string {
  return scores.map((v, i) => t("game:page.score", { name: who(i), score: n(v) })).join(", ");
}

/** The sentence for one event (of a game of kind `game`), or "" for events that say nothing to a
 * person. */
export function sentence(event: games.GameEvent, names: string[], game = "", endingText?: string): string {
  const who = (seat: number): string => names[seat] ?? t("game:player", { n: seat + 1 });
  const kind = event.kind;
  switch (kind.case) {
    case "created":
      return t("game:moves.started", { names: formatList(names.filter((name) => name !== undefined)) });
    case "resigned":
      return t("game:moves.resigned", { who: who(kind.value.seat) });
    case "timedOut":
      return t(kind.value.removed ? "game:moves.timedOutRemoved" : "game:moves.timedOut", { who: who(kind.value.seat) });
    case "ended": {
      const outcome = kind.value.outcome;
      if (outcome === undefined) return t("game:moves.ended");
      if (outcome.reason === "ABORTED") return t("game:moves.aborted");
      const how = endingText ?? ending(game, outcome.reason);
      const result = outcome.draw ? t("game:moves.overDraw", { how }) : t("game:moves.overWon", { how, names: formatList(outcome.winners.map(who)), count: outcome.winners.length });
      return outcome.scores.length > 0 ? `${result} ${t("game:moves.scores", { scores: scoreList(outcome.scores, who) })}` : result;
    }
    case "takenBack":
      return t("game:moves.takenBack");
    case "connect4": {
      const e = kind.value.kind;
      if (e.case !== "discDropped") return "";
      const d = e.value;
      return t(d.winningCells.length > 0 ? "game:moves.connect4.droppedFour" : "game:moves.connect4.dropped", { who: who(d.seat), column: n(d.column + 1), row: n(d.row + 1) });
    }
    case "plus4": {
      const e = kind.value.kind;
      switch (e.case) {
        case "discPushed":
          return t(e.value.bonus ? "game:moves.plus4.pushedBonus" : "game:moves.plus4.pushed", { who: who(e.value.seat), column: n(e.value.column + 1) });
        case "discFellOut":
          return t(e.value.disc?.bonus ? "game:moves.plus4.bonusFellOut" : "game:moves.plus4.fellOut", { who: who(e.value.returnedTo) });
        case "lineScored":
          return t("game:moves.plus4.line", { who: who(e.value.colour), count: e.value.points });
        case "turnSkipped":
          return t("game:moves.plus4.skipped", { who: who(e.value.seat) });
        case "roundWon":
          return t(e.value.frameEmptied ? "game:moves.plus4.roundWonEmptied" : "game:moves.plus4.roundWon", { round: n(e.value.round), names: formatList(e.value.winners.map(who)), count: e.value.winners.length });
        default:
          return "";
      }
    }
    case "coloursquare": {
      const e = kind.value.kind;
      switch (e.case) {
        case "diceRolled":
          return e.value.finalTurn
            ? t("game:moves.coloursquare.finalRolled", { who: who(e.value.seat), roll: roll(e.value.roll) })
            : t("game:moves.coloursquare.rolled", { round: n(e.value.round), who: who(e.value.seat), roll: roll(e.value.roll) });
        case "placementSubmitted":
          return t("game:moves.coloursquare.placed", { who: who(e.value.seat) });
        case "placementsMade":
          return e.value.placements.length === 0
            ? t("game:moves.coloursquare.passed", { who: who(e.value.seat) })
            : t("game:moves.coloursquare.wrote", { who: who(e.value.seat), placements: formatList(e.value.placements.map(placement)) });
        case "squareClosed": {
          const where = { who: who(e.value.seat), row: n(e.value.row + 1), column: n(e.value.column + 1), sum: n(e.value.sum) };
          return t(e.value.correct ? "game:moves.coloursquare.closedCorrect" : "game:moves.coloursquare.closedWrong", where);
        }
        case "squareCrossed":
          return t("game:moves.coloursquare.crossed", { row: n(e.value.row + 1), column: n(e.value.column + 1), who: who(e.value.seat) });
        case "roundResolved":
          return "";
        case "colourSquareCalled":
          return t("game:moves.coloursquare.called", { who: who(e.value.seat) });
        case "finalTurnResolved":
          return "";
        case "playerRemoved": {
          const why = ["", "Timeouts", "Resigned"][e.value.removal] ?? "";
          return t(`game:moves.coloursquare.removed${why}`, { who: who(e.value.seat) });
        }
        default:
          return "";
      }
    }
    default:
      return "";
  }
}
