// A private room: opening its invite link (#/room/CODE) joins it. Says which game, options and
// clock it is for, who is in, the link to share (with a copy button), and for the host "start now"
// when the game allows fewer seats and "add a bot"; moves on to the game when it starts. A code
// that names no room says so and offers the way back, with no buttons for a room that is not there.
import { toJson } from "@bufbuild/protobuf";
import { chatChannel, chatPane } from "./chat.js";
import { clockLabel } from "./clock.js";
import { h, mount } from "./dom.js";
import { titleOf } from "./games/index.js";
import { optionsSummary } from "./games/options.js";
import { t } from "./i18n.js";
import { explain } from "./say.js";
import { nameLink } from "./names.js";
import { InvalidArgument, NotFound, games, play, social, type TafelClient } from "./sdk.js";

/** "Rows: 6, Columns: 7" from the options the room was created with ("" = the game's usual ones). */
function optionsText(room: play.Room): string {
  if (room.options === undefined) return "";
  const json = toJson(games.GameOptionsSchema, room.options) as Record<string, Record<string, unknown>>;
  return optionsSummary(room.game, json[room.game] ?? {});
}

function copyButton(text: string): HTMLElement {
  const note = h("span", { class: "copied", "aria-live": "polite" });
  const button = h("button", { type: "button", class: "copy" }, t("game:room.copyLink"));
  button.addEventListener("click", () => {
    navigator.clipboard.writeText(text).then(
      () => (note.textContent = ` ${t("game:room.copied")}`),
      () => (note.textContent = ` ${t("game:room.copyRefused")}`),
    );
  });
  return h("span", {}, button, note);
}

export function roomPage(root: HTMLElement, client: TafelClient, code: string, go: (hash: string) => void, signal: AbortSignal): void {
  const message = h("p", { class: "message", role: "alert" });
  const title = h("h2", {}, t("game:room.joining"));
  const about = h("p", { class: "room-about" });
  const share = h("div", { class: "room-share" });
  const who = h("ul", { class: "room-players" });
  const start = h("button", { class: "start", hidden: true }, t("game:room.startNow"));
  const bots = h("div", { class: "actions add-bots", hidden: true }, ...[1, 2, 3].map((level) => h("button", { class: `add-bot bot-${level}`, onclick: () => void client.requestBot(code, level).catch(fail) }, t("game:room.addBot", { level }))));
  // The room's chat, for the players seated before the game starts (opened once the room is joined).
  const chatSlot = h("div", { class: "chat-slot" });
  mount(root, h("section", { class: "room" }, title, about, share, who, start, bots, message, chatSlot));
  const fail = (error: unknown): void => {
    message.textContent = explain(error);
  };
  start.addEventListener("click", () => client.startRoom(code).catch(fail));
  let shown = false;
  const showRoom = (room: play.Room): void => {
    title.textContent = t("game:room.title", { game: titleOf(room.game), code: room.code });
    const perMove = room.timeControl?.perMove;
    const options = optionsText(room);
    about.textContent = [t("game:room.players", { count: room.seats }), options, perMove ? clockLabel(Number(perMove.seconds)) : ""].filter((part) => part !== "").join(" · ");
    if (!shown) {
      shown = true;
      mount(chatSlot, chatPane(client, chatChannel(social.ChatChannelKind.ROOM, room.code), { title: t("game:room.chat"), about: t("game:room.chatAbout"), readOnly: t("game:room.chatReadOnly") }, signal));
      const link = `${location.origin}${location.pathname}#/room/${room.code}`;
      mount(share, h("label", {}, `${t("game:room.inviteLink")} `, h("input", { class: "invite", readonly: true, value: link, size: Math.min(link.length, 48) })), copyButton(link));
    }
  };
  void (async () => {
    try {
      let room = await client.getRoom(code).catch(() => undefined);
      const me = client.player.playerId;
      if (room === undefined || !room.players.some((p) => p.playerId === me)) room = await client.joinRoom(code);
      if (room.state === play.RoomState.STARTED) return go(`#/game/${room.gameId}`);
      showRoom(room);
      for await (const update of client.watchRoom(code, signal)) {
        showRoom(update);
        const free = update.seats - update.players.length;
        mount(who, ...update.players.map((p) => h("li", { class: p.bot ? "bot" : "" }, nameLink(p), p.playerId === update.host?.playerId ? ` ${t("game:room.host")}` : "", p.playerId === me ? ` ${t("game:room.you")}` : "")), h("li", { class: "free" }, free === 0 ? t("game:room.full") : t("game:room.free", { count: free })));
        start.hidden = update.host?.playerId !== me;
        bots.hidden = update.host?.playerId !== me || update.players.length >= update.seats;
        if (update.state === play.RoomState.STARTED) return go(`#/game/${update.gameId}`);
        if (update.state === play.RoomState.CLOSED) return void (message.textContent = t("game:room.closed"));
      }
    } catch (error) {
      if (signal.aborted) return;
      if (error instanceof NotFound || error instanceof InvalidArgument) {
        title.textContent = t("game:room.noSuchRoom");
        message.textContent = t("game:room.noSuchRoomWhy");
        message.dataset.reason = error.reason;
        mount(share, h("a", { href: "#/", class: "lobby-link" }, t("game:room.backToLobby")));
        return;
      }
      fail(error);
    }
  })();
}
