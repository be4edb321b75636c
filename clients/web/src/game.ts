// The game page: play (the viewer holds a seat) or watch (a spectator). It draws GetGame's view,
// follows WatchGame from the first event (the move list) and fetches the view again after every
// move; a reload resumes the same way. Moves go through SubmitMove; a refusal is said in words
// (say.ts). A game that cannot be shown (no such id, someone else's private game) says so and
// offers the way back; the result offers "Play again" with the same settings and the lobby.
import type { Board, BoardContext } from "./boards/board.js";
import { announce } from "./boards/access.js";
import { accountEvents } from "./account-events.js";
import { chatChannel, chatPane } from "./chat.js";
import { clockText, clockWords, controlSeconds } from "./clock.js";
import { rulesLinkAfter } from "./rules-link.js";
import { h, mount } from "./dom.js";
import { formatList, formatNumber, t } from "./i18n.js";
import type { Metrics } from "./metrics.js";
import { offerPanel } from "./offers.js";
import { reconnectingIn, untilLanded } from "./retry.js";
import { playerName } from "./safety.js";
import { gameUi, titleOf } from "./games/index.js";
import { ending, explain, refusal } from "./say.js";
import { nameOf } from "./names.js";
import { NotFound, PermissionDenied, TafelError, VersionConflict, social, type TafelClient, type games, type play } from "./sdk.js";
import { scoreList, sentence } from "./sentences.js";
import { planOf, startGame } from "./start.js";
import { timestampMs } from "./time.js";


export interface GamePageContext {
  go: (hash: string) => void;
  metrics: Metrics;
  /** The tournament the page was opened from (#/game/ID/tournament/TID), for the way back. */
  tournamentId?: string;
}

/** Why a game does not count for ratings, in words a newcomer follows. */
function unratedWhy(summary: play.GameSummary, guest: boolean): string {
  if (guest) return t("game:page.unratedGuest");
  if (summary.players.some((p) => p.player?.bot)) return t("game:page.unratedBot");
  return "";
}

export function gamePage(root: HTMLElement, client: TafelClient, gameId: string, page: GamePageContext, signal: AbortSignal): void {
  const { go, metrics, tournamentId } = page;
  const turn = h("p", { class: "turn", "aria-live": "polite" });
  const legend = h("ul", { class: "legend" });
  const boardArea = h("div", { class: "board-area" });
  const message = h("p", { class: "message", role: "alert" });
  const moveList = h("ol", { class: "moves" });
  const result = h("div", { class: "result", hidden: true });
  const resign = h("button", { class: "resign", hidden: true }, t("game:page.resign"));
  const offers = offerPanel(client, gameId, go, { tournament: tournamentId !== undefined }, signal);
  const title = h("h2", {}, t("game:page.loading"));
  // The players' chat for a player, the spectators' for anyone else (the players never see that
  // one): chosen once the seat is known. Under the board on a phone, with the rest of the aside.
  const chatSlot = h("div", { class: "chat-slot" });
  const links = h("p", { class: "game-links" }, tournamentId ? h("a", { href: `#/tournament/${tournamentId}`, class: "tournament-link" }, t("game:page.backToTournament")) : undefined);
  // The result sits beside the board (below it on a phone), so the board does not move when it shows.
  mount(
    root,
    h("section", { class: "game" }, title, links, turn, h("div", { class: "game-main" }, boardArea, h("aside", {}, result, legend, offers.element, resign, chatSlot, h("h3", {}, t("game:page.moves")), moveList)), message),
  );

  let game: play.GetGameResponse | undefined;
  const ratings = new Map<string, string>();
  // What the viewer has picked for their next move, kept between draws (the game's module makes it).
  let pick: unknown;
  let lastEvent: games.GameEvent | undefined;
  let drawnVersion = -1n;
  let refreshing: Promise<void> | undefined;
  let again = false;

  const names = (): string[] => {
    const players = game?.summary?.players ?? [];
    const list: string[] = [];
    const colourNames = gameUi(game?.summary?.game ?? "")?.colourNames ?? [];
    for (const p of players) list[p.seat] = nameOf(p.player, colourNames[p.seat] ?? t("game:player", { n: p.seat + 1 }));
    return list;
  };
  const status = (): games.GameStatus | undefined => game?.summary?.status;

  const submit = async (move: games.GameMove): Promise<void> => {
    message.textContent = "";
    try {
      metrics.submitted(status()?.version ?? 0n);
      await client.submitMove(gameId, move, { expectedVersion: status()?.version ?? 0n });
      gameUi(game?.summary?.game ?? "")?.moved?.(pick);
      scheduleRefresh();
    } catch (error) {
      if (!(error instanceof TafelError)) throw error;
      const who = names();
      const waiting = (status()?.toAct ?? []).filter((s) => s !== game?.seat).map((s) => who[s] ?? t("game:player", { n: s + 1 }));
      message.textContent = t("game:page.moveRefused", { why: refusal(game?.summary?.game ?? "", error, move, waiting) });
      message.dataset.reason = error.reason;
      if (error instanceof VersionConflict) scheduleRefresh(); // made on an old view: show the new one
    }
  };

  // When each summary was read: a clock on vacation stands at what was left then.
  const seen = new WeakMap<object, number>();
  const seenAt = (summary: object | undefined): number => {
    if (summary === undefined) return Date.now();
    if (!seen.has(summary)) seen.set(summary, Date.now());
    return seen.get(summary)!;
  };
  const drawClocks = (): void => {
    const st = status();
    const perMoveMs = controlSeconds(game?.summary?.timeControl) * 1000;
    const deadline = timestampMs(game?.summary?.turnDeadline);
    const away = game?.summary?.vacationSeats ?? [];
    legend.querySelectorAll<HTMLElement>(".clock").forEach((clock) => {
      const seat = Number(clock.dataset.seat);
      const toAct = st !== undefined && !st.over && st.toAct.includes(seat) && deadline !== undefined;
      // A player on vacation: the clock stands still (the deadline already counts the time away).
      const onVacation = away.includes(seat);
      const running = toAct && !onVacation;
      const left = toAct ? deadline - (onVacation ? seenAt(game?.summary) : Date.now()) : perMoveMs;
      const text = clockText(left);
      if (clock.textContent !== text) {
        clock.textContent = text;
        // Days and hours for a screen reader in words ("2 days, 5 hours"), not "2 d 5 h".
        clock.setAttribute("aria-label", t("game:page.clockLeft", { time: clockWords(left) }));
      }
      clock.classList.toggle("running", running);
      clock.classList.toggle("on-vacation", onVacation);
    });
  };

  const draw = (): void => {
    if (game?.summary === undefined || game.view === undefined) return;
    const summary = game.summary;
    const st = summary.status;
    const seat = game.seat;
    const who = names();
    const colours = gameUi(summary.game)?.colours ?? [];
    const myTurn = seat !== undefined && st !== undefined && !st.over && st.toAct.includes(seat);
    const gameTitle = seat === undefined ? t("game:page.watching", { game: titleOf(summary.game) }) : titleOf(summary.game);
    title.textContent = summary.rated ? t("game:page.rated", { title: gameTitle }) : gameTitle;
    const why = summary.rated ? "" : unratedWhy(summary, seat !== undefined && client.player.guest);
    if (why && links.querySelector(".unrated") === null) links.append(h("span", { class: "unrated hint" }, why));
    if (links.querySelector(".howto-link") === null) {
      links.append(h("a", { href: `#/howto/${summary.game}`, class: "howto-link", target: "_blank" }, t("game:page.howToPlay")), rulesLinkAfter(client, summary.game, " · ", { newTab: true }));
    }
    const ctx: BoardContext = { seat, names: who, colours, myTurn, lastEvent, submit: (move) => void submit(move) };
    let board: Board | undefined;
    const view = game.view.game;
    const ui = gameUi(summary.game);
    if (ui !== undefined && view.case === summary.game) {
      pick ??= ui.newPick();
      board = ui.board(view.value, ctx, pick, () => draw());
    }
    mount(boardArea, board?.element);
    if (myTurn) board?.focus?.();
    mount(
      legend,
      ...who.map((name, i) =>
        h(
          "li",
          { class: `seat${st?.toAct.includes(i) ? " to-act" : ""}`, "data-seat": i },
          h("span", { class: "swatch", style: `background:${colours[i] ?? "#888"}` }),
          playerName(client, summary.players.find((p) => p.seat === i)?.player, i === seat ? t("game:page.nameYou", { name }) : name, gameId),
          h("span", { class: "rating" }, ratings.get(summary.players.find((p) => p.seat === i)?.player?.playerId ?? "") ?? ""),
          summary.vacationSeats.includes(i) ? h("span", { class: "vacation-badge", "data-seat": i }, t("game:page.onVacation")) : undefined,
          h("span", { class: "clock", "data-seat": i }),
        ),
      ),
    );
    drawClocks();
    offers.update(game);
    if (st === undefined) return;
    if (st.over) {
      turn.textContent = t("game:page.over");
      turn.dataset.state = "over";
      resign.hidden = true;
      showResult(st.outcome, who, seat);
    } else {
      // Whose turn also as data-state ("mine" / "waiting" / "over"), for tests in any language.
      const others = st.toAct.filter((s) => s !== seat).map((s) => who[s] ?? t("game:player", { n: s + 1 }));
      turn.textContent = myTurn ? (others.length > 0 ? t("game:page.yourTurnAlso", { names: formatList(others) }) : t("game:page.yourTurn")) : t("game:page.waitingFor", { names: formatList(others) });
      turn.dataset.state = myTurn ? "mine" : "waiting";
      resign.hidden = seat === undefined;
    }
    turn.dataset.version = String(st.version);
    metrics.drawn(st.version);
  };

  // The viewer's rating in this game's pool before the game, to show the change after a rated one.
  let ratingBefore: { rating: number; games: number } | undefined;
  let ratingShown = false;
  const ratingLine = h("p", { class: "rating-change" });
  const myRating = async (): Promise<{ rating: number; games: number; provisional: boolean } | undefined> => {
    const game_ = game?.summary?.game ?? "";
    const response = await client.ratings.getRatings({ playerId: client.player.playerId }, { headers: client.headers() });
    return response.ratings.find((r) => r.leaderboard.startsWith(game_));
  };
  const showRatingChange = async (): Promise<void> => {
    if (ratingShown || !game?.summary?.rated || game.seat === undefined) return;
    ratingShown = true;
    const line = ratingLine;
    line.textContent = t("game:page.ratingUpdating");
    // Ratings are written just after the game ends: ask a few times until this game is counted.
    for (let attempt = 0; attempt < 10 && !signal.aborted; attempt++) {
      const after = await myRating();
      if (after !== undefined && after.games > (ratingBefore?.games ?? 0)) {
        const before = ratingBefore?.rating;
        const delta = before === undefined ? undefined : Math.round(after.rating - before);
        const rating = (value: number): string => formatNumber(Math.round(value), { useGrouping: false });
        const words = { before: before === undefined ? "" : rating(before), after: rating(after.rating), delta: delta === undefined ? "" : formatNumber(delta, { signDisplay: "always", useGrouping: false }) };
        const key = `game:page.rating${before === undefined ? "New" : "Changed"}${after.provisional ? "Provisional" : ""}`;
        line.textContent = t(key, words);
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    line.textContent = t("game:page.ratingLate");
  };

  const showResult = (outcome: games.Outcome | undefined, who: string[], seat: number | undefined): void => {
    if (outcome === undefined) return;
    const headline =
      outcome.reason === "ABORTED"
        ? t("game:page.aborted")
        : outcome.draw
          ? t("game:page.draw")
          : seat !== undefined && outcome.winners.includes(seat)
            ? t("game:page.youWon")
            : seat !== undefined
              ? t("game:page.youLost")
              : t("game:page.won", { names: formatList(outcome.winners.map((w) => who[w] ?? t("game:player", { n: w + 1 }))), count: outcome.winners.length });
    mount(
      result,
      h("h3", {}, headline),
      h("p", {}, t("game:page.howItEnded", { how: ending(game?.summary?.game ?? "", outcome.reason) })),
      outcome.scores.length > 0 ? h("p", {}, t("game:page.scores", { scores: scoreList(outcome.scores, (i) => who[i] ?? t("game:player", { n: i + 1 })) })) : undefined,
      playAgain(),
      h("p", {}, h("a", { href: `#/replay/${gameId}`, class: "replay-link" }, t("game:page.replayThis")), " · ", tournamentId ? h("a", { href: `#/tournament/${tournamentId}` }, t("game:page.tournamentLink")) : h("a", { href: "#/", class: "lobby-link" }, t("game:page.lobbyLink"))),
      ratingLine,
    );
    if (result.hidden) announce(headline); // said once, when the result first shows
    result.hidden = false;
    void showRatingChange().catch((error: unknown) => {
      ratingLine.textContent = t("game:page.noRating", { why: explain(error) });
    });
  };

  // "Play again": the same game, options, table and clock as the lobby started this one with.
  const playAgain = (): HTMLElement | undefined => {
    const plan = planOf(gameId);
    if (plan === undefined || seatOf() === undefined) return undefined;
    const button = h("button", { type: "button", class: "play-again" }, plan.how === "match" ? t("game:page.playAgainMatch") : t("game:page.playAgain"));
    const note = h("span", { class: "wait" });
    button.addEventListener("click", () => {
      button.disabled = true;
      note.textContent = ` ${plan.how === "match" ? t("game:page.lookingForOpponent") : t("game:page.starting")}`;
      startGame(client, plan, signal).then(
        (next) => go(`#/game/${next}`),
        (error: unknown) => {
          button.disabled = false;
          note.textContent = signal.aborted ? "" : ` ${explain(error)}`;
        },
      );
    });
    return h("p", {}, button, note);
  };
  const seatOf = (): number | undefined => game?.seat;

  const reconnecting = reconnectingIn(message);
  const refresh = async (): Promise<void> => {
    game = await untilLanded(() => client.getGame(gameId), signal, reconnecting);
    drawnVersion = game.summary?.status?.version ?? 0n;
    draw();
  };
  // One GetGame at a time (asked again until it lands); a move that lands meanwhile asks for one more.
  const scheduleRefresh = (): void => {
    if (refreshing !== undefined) {
      again = true;
      return;
    }
    refreshing = refresh()
      .catch((error: unknown) => {
        if (!signal.aborted) message.textContent = explain(error);
      })
      .finally(() => {
        refreshing = undefined;
        if (again) {
          again = false;
          scheduleRefresh();
        }
      });
  };

  // A notice about this game (an opponent gone on vacation: no game event says so) reads it again.
  accountEvents.on((event) => {
    if (event.kind.case === "notification" && event.kind.value.gameId === gameId) scheduleRefresh();
  }, signal);

  const loadRatings = async (): Promise<void> => {
    const summary = game?.summary;
    if (summary === undefined) return;
    for (const p of summary.players) {
      const id = p.player?.playerId;
      if (id === undefined || p.player?.guest) continue;
      try {
        const response = await client.ratings.getRatings({ playerId: id }, { headers: client.headers() });
        const rating = response.ratings.find((r) => r.leaderboard.startsWith(summary.game));
        if (rating !== undefined) ratings.set(id, `${Math.round(rating.rating)}${rating.provisional ? "?" : ""}`);
        if (id === client.player.playerId && !summary.status?.over) ratingBefore = rating;
      } catch (error) {
        if (!(error instanceof Error)) throw error; // a rating is decoration: the game goes on without it
      }
    }
    draw();
  };
  resign.addEventListener("click", () => {
    if (!confirm(t("game:page.resignConfirm"))) return;
    client.resign(gameId).then(scheduleRefresh, (error: unknown) => {
      message.textContent = explain(error);
    });
  });
  const clockTimer = setInterval(drawClocks, 250);
  signal.addEventListener("abort", () => clearInterval(clockTimer));

  void (async () => {
    try {
      // A room or a round announces its game a moment before the game exists: wait a few
      // seconds, not for ever.
      try {
        game = await client.waitForGame(gameId, 8000);
      } catch (error) {
        if (!(error instanceof NotFound || error instanceof PermissionDenied)) throw error;
        title.textContent = t("game:page.cannotShow");
        message.textContent = t("game:page.cannotShowWhy");
        message.dataset.reason = error.reason;
        mount(links, h("a", { href: "#/", class: "lobby-link" }, t("game:page.backToLobby")));
        return;
      }
      drawnVersion = game.summary?.status?.version ?? 0n;
      const liveFrom = drawnVersion; // moves after this one are said in the live region (access)
      draw();
      metrics.firstBoard();
      mount(chatSlot, gameChat(client, gameId, game.seat !== undefined, signal));
      void loadRatings();
      for await (const response of client.watchGame(gameId, { signal })) {
        const event = response.event;
        if (event === undefined) continue;
        const text = sentence(event, names(), game?.summary?.game);
        if (text) moveList.append(h("li", { "data-version": String(event.version) }, text));
        if (text && event.version > liveFrom) announce(text);
        moveList.scrollTop = moveList.scrollHeight;
        // The last move is the first game event of the newest version (whatever the game).
        const gameEvent = gameUi(event.kind.case ?? "") !== undefined;
        const newMove = gameEvent && (lastEvent === undefined || event.version > lastEvent.version);
        if (newMove) lastEvent = event;
        if (event.version > drawnVersion) scheduleRefresh();
        else if (newMove && refreshing === undefined) draw();
      }
    } catch (error) {
      if (signal.aborted) return;
      if (game === undefined) title.textContent = t("game:page.notLoaded");
      message.textContent = t("game:page.notFollowed", { why: explain(error) });
      if (game === undefined) mount(links, h("a", { href: "#/", class: "lobby-link" }, t("game:page.backToLobby")));
    }
  })();


}

/** The game's chat pane for the viewer: a player's is the players' channel, a spectator's the
 * spectators' (players are neither distracted nor helped by it). */
function gameChat(client: TafelClient, gameId: string, player: boolean, signal: AbortSignal): HTMLElement {
  const kind = player ? social.ChatChannelKind.GAME_PLAYERS : social.ChatChannelKind.GAME_SPECTATORS;
  return chatPane(
    client,
    chatChannel(kind, gameId),
    player
      ? { title: t("game:page.chatPlayers"), about: t("game:page.chatPlayersAbout"), gameId }
      : { title: t("game:page.chatSpectators"), about: t("game:page.chatSpectatorsAbout"), readOnly: t("game:page.chatSpectatorsOnly"), gameId },
    signal,
  );
}
