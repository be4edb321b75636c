// How to show a player: a bot as a bot with its level (the platform marks it: Player.bot), else
// the display name they chose, else their username.

/** The fields of a tafel.play.v1.Player that say how to show it. */
export interface Named {
  username: string;
  displayName?: string;
  bot?: boolean;
  botLevel?: number;
}

/** "Bot (level 2)", "Jörg de Vries" or "guest-2b0a23b2". */
export function playerName(player: Named | undefined, fallback = "someone"): string {
  if (player === undefined) return fallback;
  if (player.bot) return player.botLevel ? `Bot (level ${player.botLevel})` : "Bot";
  return player.displayName || player.username || fallback;
}
