// Every game event as a sentence for the move list (never raw protobuf), in the player's language
// (game:moves.*, with each game's own words: Dutch "schijf", "kolom", German "Spielstein", "Spalte"),
// a game's own events from its module (games/).
import { formatList, formatNumber, t } from "./i18n.js";
import { gameUi } from "./games/index.js";
import { ending } from "./say.js";
import type { games } from "./sdk.js";

const n = (value: number): string => formatNumber(value);

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
    case undefined:
      return "";
    default: {
      // The game's own events: its module says them (games/<game>.ts).
      const ui = gameUi(kind.case);
      return ui === undefined ? "" : ui.sentence(kind.value, who);
    }
  }
}
