// Replay a finished game move by move (forward, back, jump, a click on a move in the list, or
// playing by itself at a chosen speed) from what the server recorded: the
// game's events (WatchGame from the start) grouped into one step per game version, and its record
// (GetGameRecord: who, when, the outcome). Boards are drawn from what the events report (a disc's
// cell, the values written, squares closed or crossed, the frame a Plus 4 push left), never by
// replaying rules in the page; the last step is the server's own view.
import { create } from "@bufbuild/protobuf";
import { drawColourSquare } from "./boards/coloursquare.js";
import { drawConnect4 } from "./boards/connect4.js";
import { drawPlus4 } from "./boards/plus4.js";
import type { BoardContext } from "./boards/board.js";
import { chatChannel, keptChat, keptLines } from "./chat.js";
import { h, mount } from "./dom.js";
import { formatList, formatNumber, t } from "./i18n.js";
import { nameList, nameOf } from "./names.js";
import { coloursquare, connect4, plus4, social, type TafelClient, type games, type play } from "./sdk.js";
import { coloursOf, titleOf } from "./games/index.js";
import { endingStory, explain } from "./say.js";
import { sentence } from "./sentences.js";

interface Step {
  version: bigint;
  events: games.GameEvent[];
}

// The events that made the position at step `at`: every step's up to it, except what a take-back
// (takenBack) undid: from there on, those that made the position at its toVersion (that of the
// last version up to it that had events).
function playedUpTo(steps: Step[], at: number): games.GameEvent[] {
  const made = new Map<bigint, games.GameEvent[]>([[0n, []]]);
  let done: games.GameEvent[] = [];
  for (const step of steps.slice(0, at + 1)) {
    for (const e of step.events) {
      if (e.kind.case === "takenBack") {
        const to = e.kind.value.toVersion;
        let from = 0n;
        for (const version of made.keys()) if (version <= to && version > from) from = version;
        done = made.get(from) ?? [];
      } else done = [...done, e];
    }
    made.set(step.version, done);
  }
  return done;
}

function connect4At(final: connect4.View, events: games.GameEvent[]): connect4.View {
  const board = Array.from({ length: final.columns }, () => [] as number[]);
  let winning: connect4.Cell[] = [];
  let moves = "";
  for (const e of events) {
    if (e.kind.case !== "connect4" || e.kind.value.kind.case !== "discDropped") continue;
    const d = e.kind.value.kind.value;
    (board[d.column] ??= [])[d.row] = d.seat;
    moves += String(d.column + 1);
    winning = d.winningCells;
  }
  return create(connect4.ViewSchema, { rows: final.rows, columns: final.columns, board: board.map((seats) => ({ seats })), moves, winningCells: winning });
}

function colourSquareAt(final: coloursquare.View, events: games.GameEvent[], last: boolean): coloursquare.View {
  if (last) return final;
  const players = final.players.map((p) =>
    create(coloursquare.PlayerSheetSchema, {
      seat: p.seat,
      squares: p.squares.map(() => ({ status: coloursquare.SquareStatus.OPEN, cells: [0, 0, 0, 0], sum: 0 })),
      jokers: [0, 0],
      breakdown: {},
    }),
  );
  const columns = final.sheet?.columns ?? 4;
  let roll: coloursquare.Roll | undefined;
  let round = 0;
  let active = 0;
  for (const e of events) {
    if (e.kind.case !== "coloursquare") continue;
    const k = e.kind.value.kind;
    if (k.case === "diceRolled") {
      roll = k.value.roll;
      round = k.value.round;
      active = k.value.seat;
    } else if (k.case === "placementsMade") {
      const sheet = players.find((p) => p.seat === k.value.seat);
      for (const p of k.value.placements) {
        const value = roll ? ([0, roll.red, roll.yellow, roll.green, roll.blue, roll.white][p.die] ?? 0) : 0;
        if (p.target.case === "joker") {
          if (sheet) sheet.jokers[p.target.value] = value;
        } else if (p.target.case === "cell") {
          const square = sheet?.squares[p.target.value.row * columns + p.target.value.column];
          if (square) {
            square.cells[p.target.value.colour - 1] = value;
            square.sum += value;
          }
        }
      }
    } else if (k.case === "squareClosed" || k.case === "squareCrossed") {
      const square = players.find((p) => p.seat === k.value.seat)?.squares[k.value.row * columns + k.value.column];
      if (square) square.status = k.case === "squareCrossed" ? coloursquare.SquareStatus.CROSSED : k.value.correct ? coloursquare.SquareStatus.CORRECT : coloursquare.SquareStatus.WRONG;
    }
  }
  return create(coloursquare.ViewSchema, { sheet: final.sheet, phase: coloursquare.Phase.ROUND, round, maxRounds: final.maxRounds, activeSeat: active, roll, players, target: final.target });
}

// Plus 4 at a step: the frame the last push reported (DiscPushed.frame), the lines scored, points
// summed from them, rounds won as RoundWon counts them. Supplies are not in the events, so they are
// shown at the last step only (the server's view).
function plus4At(final: plus4.View, events: games.GameEvent[], last: boolean): plus4.View {
  if (last) return final;
  const empty = final.frame.map((row) => create(plus4.RowSchema, { squares: row.squares.map(() => ({})) }));
  let frame: plus4.Row[] = empty;
  const scoredLines: plus4.LineScored[] = [];
  const scores = [0, 0];
  let roundWins: number[] = [0, 0];
  let round = 1;
  let nextRound = false;
  let movesMade = 0;
  for (const e of events) {
    if (e.kind.case !== "plus4") continue;
    const k = e.kind.value.kind;
    if (k.case === "discPushed") {
      frame = k.value.frame.length > 0 ? k.value.frame : empty;
      movesMade += 1;
      if (nextRound) round += 1;
      nextRound = false;
    } else if (k.case === "lineScored") {
      scoredLines.push(k.value);
      scores[k.value.colour] = (scores[k.value.colour] ?? 0) + k.value.points;
    } else if (k.case === "roundWon") {
      roundWins = k.value.roundWins;
      nextRound = k.value.frameEmptied;
    }
  }
  return create(plus4.ViewSchema, { options: final.options, frame, supplies: [], scores, roundWins, scoredLines, movesMade, round });
}

export function replayPage(root: HTMLElement, client: TafelClient, gameId: string, signal: AbortSignal): void {
  const title = h("h2", {}, t("game:replay.title"));
  const info = h("p", { class: "replay-info" });
  const boardArea = h("div", { class: "board-area" });
  const list = h("ol", { class: "moves replay-moves" });
  const position = h("input", { type: "range", class: "jump", min: 0, max: 0, value: 0, "aria-label": t("game:replay.jump") }) as HTMLInputElement;
  const counter = h("span", { class: "step" });
  const message = h("p", { class: "message", role: "alert" });
  // The kept chat beside the moves: the spectators' for anyone who may read the record, the
  // players' too for the game's own players.
  const chat = h("div", { class: "replay-chat" });
  const button = (label: string, cls: string, aria: string): HTMLButtonElement => h("button", { type: "button", class: cls, "aria-label": aria }, label);
  const first = button("«", "first", t("game:replay.first"));
  const back = button("◀", "back", t("game:replay.back"));
  const forward = button("▶", "forward", t("game:replay.forward"));
  const lastButton = button("»", "last", t("game:replay.last"));
  const play = button(t("game:replay.play"), "autoplay", t("game:replay.playAria"));
  // Seconds a step while playing by itself.
  const speed = h("select", { class: "speed", "aria-label": t("game:replay.speed") }, ...[["2", "slow"], ["1", "normal"], ["0.4", "fast"]].map(([value, label]) => h("option", { value, selected: value === "1" }, t(`game:replay.${label}`))));
  mount(
    root,
    h(
      "section",
      { class: "replay" },
      title,
      info,
      h("div", { class: "actions replay-controls" }, first, back, position, forward, lastButton, counter),
      h("div", { class: "actions replay-autoplay" }, play, h("label", {}, `${t("game:replay.speed")} `, speed)),
      h("div", { class: "game-main" }, boardArea, h("aside", {}, h("h3", {}, t("game:replay.moves")), h("p", { class: "hint" }, t("game:replay.clickHint")), list, chat)),
      message,
    ),
  );

  let steps: Step[] = [];
  let at = 0;
  let game: play.GetGameResponse | undefined;
  let names: string[] = [];

  const show = (index: number): void => {
    at = Math.max(0, Math.min(steps.length - 1, index));
    position.value = String(at);
    counter.textContent = t("game:replay.step", { at: formatNumber(at), total: formatNumber(steps.length - 1) });
    counter.dataset.step = String(at);
    list.querySelectorAll("li").forEach((li) => li.classList.toggle("current", Number(li.dataset.step) === at));
    list.querySelectorAll("li").forEach((li) => li.classList.toggle("future", Number(li.dataset.step) > at));
    list.querySelector("li.current")?.scrollIntoView({ block: "nearest" });
    const upTo = playedUpTo(steps, at);
    const view = game?.view?.game;
    const colours = coloursOf(view?.case ?? "");
    const ctx: BoardContext = { seat: undefined, names, colours, myTurn: false, lastEvent: steps[at]?.events.find((e) => e.kind.case === view?.case), submit: () => undefined };
    const isLast = at === steps.length - 1;
    if (view?.case === "connect4") mount(boardArea, drawConnect4(connect4At(view.value, upTo), ctx, { column: 0 }).element);
    else if (view?.case === "coloursquare") mount(boardArea, drawColourSquare(colourSquareAt(view.value, upTo, isLast), ctx, { picks: [] }, () => undefined).element);
    else if (view?.case === "plus4") mount(boardArea, drawPlus4(plus4At(view.value, upTo, isLast), ctx, { column: 0, bonus: false }).element);
  };

  // Playing by itself: a step every `speed` seconds until the last, or until stopped.
  let timer: ReturnType<typeof setInterval> | undefined;
  const stop = (): void => {
    if (timer !== undefined) clearInterval(timer);
    timer = undefined;
    play.textContent = t("game:replay.play");
    play.setAttribute("aria-label", t("game:replay.playAria"));
  };
  const run = (): void => {
    if (timer !== undefined) clearInterval(timer);
    timer = setInterval(() => {
      if (at >= steps.length - 1) return stop();
      show(at + 1);
    }, Number(speed.value) * 1000);
    play.textContent = t("game:replay.pause");
    play.setAttribute("aria-label", t("game:replay.pause"));
  };
  play.addEventListener("click", () => {
    if (timer !== undefined) return stop();
    if (at >= steps.length - 1) show(0);
    run();
  });
  speed.addEventListener("change", () => {
    if (timer !== undefined) run();
  });
  signal.addEventListener("abort", stop);
  const jump = (e: Event): void => {
    const item = (e.target as Element).closest("li[data-step]");
    if (item instanceof HTMLElement) show(Number(item.dataset.step));
  };
  list.addEventListener("click", jump);
  list.addEventListener("keydown", (e) => {
    if (e.key === "Enter") jump(e);
  });
  first.addEventListener("click", () => show(0));
  back.addEventListener("click", () => show(at - 1));
  forward.addEventListener("click", () => show(at + 1));
  lastButton.addEventListener("click", () => show(steps.length - 1));
  position.addEventListener("input", () => show(Number(position.value)));
  // On the app's root, which outlives this page: removed with the page (its signal), or every
  // replay opened would add one more handler stepping every replay since.
  root.addEventListener(
    "keydown",
    (e) => {
      if (e.key === "ArrowLeft") show(at - 1);
      else if (e.key === "ArrowRight") show(at + 1);
    },
    { signal },
  );

  const showChat = async (player: boolean): Promise<void> => {
    const { GAME_PLAYERS, GAME_SPECTATORS } = social.ChatChannelKind;
    const channels: [social.ChatChannelKind, string][] = [...(player ? [[GAME_PLAYERS, t("game:replay.playersChat")] as [social.ChatChannelKind, string]] : []), [GAME_SPECTATORS, t("game:replay.spectatorsChat")]];
    const panes: HTMLElement[] = [];
    for (const [kind, words] of channels) {
      const channel = chatChannel(kind, gameId);
      try {
        panes.push(keptChat(client, channel, words, await keptLines(client, channel, signal)));
      } catch (error) {
        // A record kept without its chat (or chat off for the viewer) still replays.
        if (!signal.aborted) panes.push(h("section", { class: "chat-pane kept" }, h("h3", {}, words), h("p", { class: "hint" }, t("game:replay.chatNotShown", { why: explain(error) }))));
      }
    }
    if (!signal.aborted) mount(chat, ...panes);
  };

  void (async () => {
    try {
      const [record, current] = await Promise.all([client.getRecord(gameId), client.getGame(gameId)]);
      game = current;
      for (const p of record.players) names[p.seat] = nameOf(p.player, t("game:player", { n: p.seat + 1 }));
      const byVersion = new Map<bigint, games.GameEvent[]>();
      for await (const event of client.watch(gameId, { signal })) {
        const bucket = byVersion.get(event.version) ?? [];
        bucket.push(event);
        byVersion.set(event.version, bucket);
      }
      steps = [...byVersion.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([version, events]) => ({ version, events }));
      position.max = String(steps.length - 1);
      const outcome = record.outcome;
      mount(title, t("game:replay.titleOf", { game: titleOf(record.game) }), ...nameList(record.players.slice().sort((a, b) => a.seat - b.seat).map((p) => p.player), t("game:replay.versus"), (i) => t("game:player", { n: i + 1 })));
      void showChat(record.players.some((p) => p.player?.playerId === client.session?.player?.playerId));
      const story = outcome ? endingStory(record.game, outcome.reason, steps.flatMap((s) => s.events), names) : undefined;
      const result = (o: games.Outcome): string =>
        o.reason === "ABORTED" ? t("game:replay.aborted") : o.draw ? t("game:replay.draw") : t("game:replay.won", { names: formatList(o.winners.map((w) => names[w] ?? t("game:player", { n: w + 1 }))), count: o.winners.length });
      info.textContent = outcome ? t("game:replay.info", { result: result(outcome), story, count: steps.length - 1 }) : "";
      steps.forEach((step, index) => {
        for (const event of step.events) {
          const text = sentence(event, names, record.game, story);
          if (text) list.append(h("li", { "data-step": index, tabindex: 0, title: t("game:replay.jumpHere") }, text));
        }
      });
      show(0);
    } catch (error) {
      if (!signal.aborted) message.textContent = explain(error);
    }
  })();
}
