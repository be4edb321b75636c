// A private room: opening its invite link (#/room/CODE) joins it. Says which game, options and
// clock it is for, who is in, the link to share (with a copy button), and for the host "start now"
// when the game allows fewer seats and "add a bot"; moves on to the game when it starts. A code
// that names no room says so and offers the way back, with no buttons for a room that is not there.
import { toJson } from "@bufbuild/protobuf";
import { chatChannel, chatPane } from "./chat.js";
import { clockLabel } from "./clock.js";
import { h, mount } from "./dom.js";
import { titleOf } from "./games/index.js";
import { choiceWords } from "./lobby.js";
import { explain, plural } from "./say.js";
import { nameLink } from "./names.js";
import { InvalidArgument, NotFound, TafelError, games, play, social, type TafelClient } from "./sdk.js";

/** "rows 6, columns 7" from the options the room was created with ("" = the game's usual ones). */
function optionsText(room: play.Room): string {
  if (room.options === undefined) return "";
  const json = toJson(games.GameOptionsSchema, room.options) as Record<string, Record<string, unknown>>;
  const chosen = json[room.game] ?? {};
  return Object.entries(chosen)
    .map(([name, value]) => `${choiceWords(name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`))} ${typeof value === "string" ? choiceWords(value) : String(value)}`)
    .join(", ");
}

function copyButton(text: string): HTMLElement {
  const note = h("span", { class: "copied", "aria-live": "polite" });
  const button = h("button", { type: "button", class: "copy" }, "Copy link");
  button.addEventListener("click", () => {
    navigator.clipboard.writeText(text).then(
      () => (note.textContent = " Copied: send it to the players you want at your table."),
      () => (note.textContent = " Copying is not allowed here: select the link and copy it."),
    );
  });
  return h("span", {}, button, note);
}

export function roomPage(root: HTMLElement, client: TafelClient, code: string, go: (hash: string) => void, signal: AbortSignal): void {
  const message = h("p", { class: "message", role: "alert" });
  const title = h("h2", {}, "Joining the room…");
  const about = h("p", { class: "room-about" });
  const share = h("div", { class: "room-share" });
  const who = h("ul", { class: "room-players" });
  const start = h("button", { class: "start", hidden: true }, "Start now");
  const bots = h("div", { class: "actions add-bots", hidden: true }, ...[1, 2, 3].map((level) => h("button", { class: `add-bot bot-${level}`, onclick: () => void client.requestBot(code, level).catch(fail) }, `Add a bot (level ${level})`)));
  // The room's chat, for the players seated before the game starts (opened once the room is joined).
  const chatSlot = h("div", { class: "chat-slot" });
  mount(root, h("section", { class: "room" }, title, about, share, who, start, bots, message, chatSlot));
  const fail = (error: unknown): void => {
    message.textContent = explain(error);
  };
  start.addEventListener("click", () => client.startRoom(code).catch(fail));
  let shown = false;
  const showRoom = (room: play.Room): void => {
    title.textContent = `${titleOf(room.game)} · room ${room.code}`;
    const perMove = room.timeControl?.perMove;
    const options = optionsText(room);
    about.textContent = `${plural(room.seats, "player")}${options ? ` · ${options}` : ""}${perMove ? ` · ${clockLabel(Number(perMove.seconds))}` : ""}`;
    if (!shown) {
      shown = true;
      mount(chatSlot, chatPane(client, chatChannel(social.ChatChannelKind.ROOM, room.code), { title: "Room chat", about: "The players in this room read this until the game starts; the game has its own chat.", readOnly: "Only the players seated in the room write here." }, signal));
      const link = `${location.origin}${location.pathname}#/room/${room.code}`;
      mount(share, h("label", {}, "Invite link ", h("input", { class: "invite", readonly: true, value: link, size: Math.min(link.length, 48) })), copyButton(link));
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
        mount(who, ...update.players.map((p) => h("li", { class: p.bot ? "bot" : "" }, nameLink(p), p.playerId === update.host?.playerId ? " (host)" : "", p.playerId === me ? " (you)" : "")), h("li", { class: "free" }, free === 0 ? "The table is full." : `${plural(free, "seat")} free`));
        start.hidden = update.host?.playerId !== me;
        bots.hidden = update.host?.playerId !== me || update.players.length >= update.seats;
        if (update.state === play.RoomState.STARTED) return go(`#/game/${update.gameId}`);
        if (update.state === play.RoomState.CLOSED) return fail(new TafelError("ROOM_CLOSED", "The room closed."));
      }
    } catch (error) {
      if (signal.aborted) return;
      if (error instanceof NotFound || error instanceof InvalidArgument) {
        title.textContent = "No such room";
        message.textContent = "There is no room with this code: it may have expired, or the link was cut short. Ask for a new invite link.";
        message.dataset.reason = error.reason;
        mount(share, h("a", { href: "#/", class: "lobby-link" }, "← Back to the lobby"));
        return;
      }
      fail(error);
    }
  })();
}
