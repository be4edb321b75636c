// The signed-in session, kept in localStorage so a reload stays signed in. The token is checked
// with GetMe on start; a token the server no longer accepts is forgotten.
import { TafelClient, Unauthenticated, createWebTransport, type Interceptor, type play } from "./sdk.js";

const KEY = "tafel.session";

interface Stored {
  token: string;
  playerId: string;
  username: string;
  guest: boolean;
  displayName?: string;
}

export function newClient(interceptors: Interceptor[] = []): TafelClient {
  return new TafelClient(createWebTransport(location.origin, { interceptors }));
}

/** Keep the client's session for the next load (after signing in, or a new password's session). */
export function save(client: TafelClient): void {
  const session = client.session;
  if (session?.player === undefined) return;
  const stored: Stored = { token: session.token, playerId: session.player.playerId, username: session.player.username, guest: session.player.guest, displayName: session.player.displayName };
  localStorage.setItem(KEY, JSON.stringify(stored));
}

/** Put the stored session back on `client`; false when there is none or the server refuses it. */
export async function restore(client: TafelClient): Promise<boolean> {
  const text = localStorage.getItem(KEY);
  if (text === null) return false;
  const stored = JSON.parse(text) as Stored;
  const player: play.Player = { $typeName: "tafel.play.v1.Player", playerId: stored.playerId, username: stored.username, guest: stored.guest, displayName: stored.displayName ?? "", bot: false, botLevel: 0 };
  client.session = { $typeName: "tafel.play.v1.Session", token: stored.token, player };
  try {
    await client.me();
    return true;
  } catch (error) {
    if (!(error instanceof Unauthenticated)) throw error;
    client.session = undefined;
    localStorage.removeItem(KEY);
    return false;
  }
}

export async function signIn(client: TafelClient, how: "guest" | "signin" | "register", username = "", password = "", displayName = ""): Promise<void> {
  if (how === "guest") await client.signInAsGuest(displayName);
  else if (how === "register") await client.register(username, password, displayName);
  else await client.signIn(username, password);
  save(client);
}

/** Forget the session here without asking the server (an account just deleted). */
export function forget(client: TafelClient): void {
  client.session = undefined;
  localStorage.removeItem(KEY);
}

export async function signOut(client: TafelClient): Promise<void> {
  try {
    await client.accounts.signOut({}, { headers: client.headers() });
  } finally {
    client.session = undefined;
    localStorage.removeItem(KEY);
  }
}
