// A private room: opening its invite link (#/room/CODE) joins it. Shows who is in, the link to
// share, and for the host a "start now" when the game allows fewer seats; moves on to the game
// when it starts.
import { h, mount } from "./dom.js";
import { TafelError, play, type TafelClient } from "./sdk.js";

export function roomPage(root: HTMLElement, client: TafelClient, code: string, go: (hash: string) => void, signal: AbortSignal): void {
  const message = h("p", { class: "message", role: "alert" });
  const who = h("ul", { class: "room-players" });
  const link = `${location.origin}${location.pathname}#/room/${code}`;
  const start = h("button", { class: "start", hidden: true }, "Start now");
  const bots = h("div", { class: "actions add-bots", hidden: true }, ...[1, 2, 3].map((level) => h("button", { class: `add-bot bot-${level}`, onclick: () => void client.requestBot(code, level).catch(fail) }, `Add a bot (level ${level})`)));
  mount(root, h("section", { class: "room" }, h("h2", {}, `Room ${code}`), h("p", {}, "Invite link: ", h("input", { class: "invite", readonly: true, value: link, size: link.length })), who, start, bots, message));
  const fail = (error: unknown): void => {
    message.textContent = error instanceof TafelError ? error.detail : String(error);
  };
  start.addEventListener("click", () => client.startRoom(code).catch(fail));
  void (async () => {
    try {
      let room = await client.getRoom(code).catch(() => undefined);
      const me = client.player.playerId;
      if (room === undefined || !room.players.some((p) => p.playerId === me)) room = await client.joinRoom(code);
      if (room.state === play.RoomState.STARTED) return go(`#/game/${room.gameId}`);
      for await (const update of client.watchRoom(code, signal)) {
        mount(who, ...update.players.map((p) => h("li", {}, p.username, p.playerId === update.host?.playerId ? " (host)" : "")), h("li", { class: "free" }, `${update.seats - update.players.length} seat(s) free`));
        start.hidden = update.host?.playerId !== me;
        bots.hidden = update.host?.playerId !== me || update.players.length >= update.seats;
        if (update.state === play.RoomState.STARTED) return go(`#/game/${update.gameId}`);
        if (update.state === play.RoomState.CLOSED) return fail(new TafelError("ROOM_CLOSED", "The room closed."));
      }
    } catch (error) {
      if (!signal.aborted) fail(error);
    }
  })();
}
