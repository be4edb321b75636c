// Replay a finished game move by move (forward, back, jump, a click on a move in the list, or
// playing by itself at a chosen speed) from what the server recorded: the game's events (WatchGame
// from the start) grouped into one step per game version for the move list, its record
// (GetGameRecord: who, when, the outcome) and the position at every version (the record's views,
// rebuilt by the game's rules service), drawn by the game's module as a live board is. Where the
// server no longer keeps the positions, the final one stands beside the steps.
import type { BoardContext } from "./boards/board.js";
import { chatChannel, keptChat, keptLines } from "./chat.js";
import { h, mount } from "./dom.js";
import { formatList, formatNumber, t } from "./i18n.js";
import { nameList, nameOf } from "./names.js";
import { social, type TafelClient, type games, type play } from "./sdk.js";
import { coloursOf, gameUi, titleOf } from "./games/index.js";
import { endingStory, explain } from "./say.js";
import { sentence } from "./sentences.js";

interface Step {
  version: bigint;
  events: games.GameEvent[];
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
  let views: games.GameView[] = []; // the position after each version
  let names: string[] = [];

  const show = (index: number): void => {
    at = Math.max(0, Math.min(steps.length - 1, index));
    position.value = String(at);
    counter.textContent = t("game:replay.step", { at: formatNumber(at), total: formatNumber(steps.length - 1) });
    counter.dataset.step = String(at);
    list.querySelectorAll("li").forEach((li) => li.classList.toggle("current", Number(li.dataset.step) === at));
    list.querySelectorAll("li").forEach((li) => li.classList.toggle("future", Number(li.dataset.step) > at));
    list.querySelector("li.current")?.scrollIntoView({ block: "nearest" });
    const step = steps[at];
    const kept = step === undefined ? undefined : views[Number(step.version)];
    const view = (kept ?? game?.view)?.game;
    const ui = gameUi(view?.case ?? "");
    const ctx: BoardContext = { seat: undefined, names, colours: coloursOf(view?.case ?? ""), myTurn: false, lastEvent: step?.events.find((e) => e.kind.case === view?.case), submit: () => undefined };
    const board = ui !== undefined && view?.case !== undefined ? ui.board(view.value, ctx, ui.newPick(), () => undefined).element : undefined;
    mount(boardArea, ...(kept === undefined && board !== undefined ? [h("p", { class: "hint final-only" }, t("game:replay.finalOnly")), board] : [board]));
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
      const [replay, current] = await Promise.all([client.getReplay(gameId), client.getGame(gameId)]);
      const record = replay.record;
      views = replay.views;
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
