// The tafel client: every call of the public API (tafel.play.v1), typed, with clear errors.
//
//   const client = new TafelClient(createWebTransport("http://127.0.0.1:8080"));
//   await client.signInAsGuest();
//   const match = await client.findMatch("connect4");
//   for await (const event of client.watch(match.gameId)) { ... }
//
// The core runs in browsers and Node alike: it takes any Connect transport (Connect or gRPC-Web
// over fetch from ./transports.js; native gRPC from ./node.js in Node). State-changing calls carry
// a request id the SDK chooses, and a retry reuses it, so retrying is always safe.

import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { durationFromMs } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, createClient, type CallOptions, type Client, type Transport } from "@connectrpc/connect";
import { certificateError, fromCallError, NotFound, TafelError } from "./errors.js";
import { isAfter } from "./events.js";
import type { GameEvent, GameMove, GameOptions, GameView } from "./gen/tafel/games/v1/games_pb.js";
import {
  AccountService,
  FindMatchRequestSchema,
  GameService,
  LobbyService,
  OfferKind,
  OfferStatus,
  RoomState,
  type FindMatchResponse,
  type GameRecord,
  type GameSummary,
  type GameType,
  type GetGameResponse,
  type ListGameRecordsResponse,
  type ListLiveGamesResponse,
  type ListMyGamesResponse,
  type MatchFound,
  type Offer,
  type Player,
  type ResignResponse,
  type Role,
  type Room,
  type Session,
  type SubmitMoveResponse,
  type WaitingSearch,
  type WatchGameResponse,
} from "./gen/tafel/play/v1/play_pb.js";
import { BotService } from "./gen/tafel/play/v1/bots_pb.js";
import {
  ChallengeService,
  ChallengeStatus,
  DeclineReason,
  EventService,
  SeatPreference,
  type AccountEvent,
  type Challenge,
  type ListChallengesResponse,
} from "./gen/tafel/play/v1/challenges_pb.js";
import {
  SafetyService,
  type GetMyStandingResponse,
  type ListBlockedResponse,
  type ReportReason,
} from "./gen/tafel/play/v1/safety_pb.js";
import { AdminService, ModerationService } from "./gen/tafel/admin/v1/admin_pb.js";
import {
  ChallengePolicy,
  ChatChannelKind,
  ChatService,
  FriendService,
  ProfileService,
  type ChatMessage,
  type ChatReady,
  type FollowedPlayer,
  type ListChatMessagesResponse,
  type PlayerSettings,
  type Profile,
} from "./gen/tafel/play/v1/social_pb.js";
import {
  EmailService,
  NotificationKind,
  NotificationService,
  VacationService,
  type ConfirmEmailResponse,
  type EmailAddress,
  type ListNotificationsResponse,
  type NotificationSettings,
  type Vacation,
} from "./gen/tafel/play/v1/notices_pb.js";
import {
  RatingService,
  TournamentService,
  CreateTournamentRequestSchema,
  ExportFormat,
  ExportPart,
  type CorrectResultResponse,
  type GetLeaderboardResponse,
  type GetStandingsResponse,
  type StartNextRoundResponse,
  type Tournament,
  type TournamentAuditEntry,
  type TournamentEvent,
  type TournamentGame,
  type TournamentRound,
} from "./gen/tafel/play/v1/tournaments_pb.js";
import type { MoveOptions } from "./moves.js";
import { PlayStream, type PlayStreamOptions } from "./play-stream.js";
import { RequestIds } from "./request-ids.js";
import { linkedAbort, resuming, sleep } from "./resume.js";

/** Unary calls retried by themselves (each state-changing one reuses its request id). */
const RETRYABLE: ReadonlySet<Code> = new Set([Code.Unavailable, Code.DeadlineExceeded]);

export interface ClientOptions {
  /** Deadline of each unary call (ms); default 30 s. */
  timeoutMs?: number;
  /** Retries of a unary call refused with UNAVAILABLE / DEADLINE_EXCEEDED; default 3. */
  retries?: number;
}

/** Correspondence controls the platform offers (TimeControl.daysPerMove). */
export const DAYS_PER_MOVE: readonly number[] = [1, 2, 3, 5, 7, 10, 14];

export interface MatchOptions {
  options?: GameOptions;
  /** Time per move in seconds (default: the server's, 60 s). */
  perMoveS?: number;
  /** Correspondence instead: 1, 2, 3, 5, 7, 10 or 14 days a move (a pool of its own). */
  daysPerMove?: number;
  minSeats?: number;
  maxSeats?: number;
  signal?: AbortSignal;
}

export interface RoomOptions {
  options?: GameOptions;
  /** Table size; 0 = the game's maximum. The room starts by itself when full. */
  seats?: number;
  perMoveS?: number;
  /** Correspondence instead: 1, 2, 3, 5, 7, 10 or 14 days a move. */
  daysPerMove?: number;
  /** List the room's game among live games, open to spectators (default: private). */
  watchable?: boolean;
}

/** CreateTournamentRequest's fields (without the request id), for creating and editing. */
export type TournamentSettings = Omit<MessageInitShape<typeof CreateTournamentRequestSchema>, "requestId" | "$typeName">;

/** One file of a tournament's export, assembled from its streamed chunks. */
export interface ExportedFile {
  /** E.g. "t0123456789abcdef-standings.csv". */
  name: string;
  /** "text/csv; charset=utf-8" or "application/json". */
  contentType: string;
  data: Uint8Array;
}

/** CreateTournamentRequest's field names (the update mask's paths) for settings keys. */
function maskPath(key: string): string {
  return key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
}

export interface WatchOptions {
  /** Resume after this event id (empty = from the start). */
  afterEventId?: string;
  /** End after the game's `ended` event (default true). */
  stopAtEnd?: boolean;
  /** Reconnections in a row before giving up (default 20). */
  maxRetries?: number;
  signal?: AbortSignal;
}

export interface ReportOptions {
  /** The game it happened in: moderators see its record. */
  gameId?: string;
  /** The chat message reported (its id in `chatChannel`, or in the players' channel of `gameId`). */
  messageId?: string;
  /** The channel of `messageId`: the report keeps the message and the lines around it. */
  chatChannel?: ChatChannelRef;
  /** Up to 1,000 characters in the reporter's words. */
  details?: string;
  /** Reuse to retry a report by hand; chosen by the SDK when unset. */
  requestId?: string;
}

export interface EventStreamOptions {
  /** Resume after this event id (an AccountEvent.eventId seen before); empty = from now on. */
  afterEventId?: string;
  /** Called once, when the stream is live, with the account's last event id ("0-0" when it has
   * none yet): read what is pending (listChallenges) now, and nothing falls between; a stream
   * opened later with this id as afterEventId sees every event since. */
  onReady?: (lastEventId: string) => void;
  /** Reconnections in a row before giving up (default 20). */
  maxRetries?: number;
  signal?: AbortSignal;
}

/** A chat channel: a game's players' (`players`) or spectators' (`spectators`) channel by game
 * id, a room's by its code, a tournament's by its id. */
export interface ChatChannelRef {
  kind: "players" | "spectators" | "room" | "tournament" | ChatChannelKind;
  id: string;
}

export interface ChatWatchOptions {
  /** Resume after this message id; empty = the channel's latest 100 messages as history first. */
  afterMessageId?: string;
  /** Called with each `ready` (the first and every reopening's): `canWrite` says whether the
   * caller may write in the channel now, `chatOff` that they turned chat off (nothing follows
   * until they turn it on). */
  onReady?: (ready: ChatReady) => void;
  /** Reconnections in a row before giving up (default 20). */
  maxRetries?: number;
  signal?: AbortSignal;
}

export interface SettingsChange {
  chatEnabled?: boolean;
  /** Who may challenge you by name: everyone, only the players you follow, or nobody. */
  challengePolicy?: "everyone" | "followed" | "nobody" | ChallengePolicy;
}

const CHAT_KINDS: Record<string, ChatChannelKind> = {
  players: ChatChannelKind.GAME_PLAYERS,
  spectators: ChatChannelKind.GAME_SPECTATORS,
  room: ChatChannelKind.ROOM,
  tournament: ChatChannelKind.TOURNAMENT,
};

const POLICIES: Record<string, ChallengePolicy> = {
  everyone: ChallengePolicy.EVERYONE,
  followed: ChallengePolicy.FOLLOWED,
  nobody: ChallengePolicy.NOBODY,
};

function chatChannel(channel: ChatChannelRef): { kind: ChatChannelKind; id: string } {
  const kind = typeof channel.kind === "number" ? channel.kind : CHAT_KINDS[channel.kind];
  if (kind === undefined) throw new TafelError("BAD_CHAT_CHANNEL", `no chat channel kind ${String(channel.kind)}`);
  return { kind, id: channel.id };
}

export interface ChallengeOptions {
  options?: GameOptions;
  /** Time per move in seconds (default: the server's, 60 s). */
  perMoveS?: number;
  /** Correspondence instead: 1, 2, 3, 5, 7, 10 or 14 days a move. */
  daysPerMove?: number;
  /** Guests play casual games only (RATED_NEEDS_ACCOUNT). */
  rated?: boolean;
  /** The seat the challenger wants (two-player games: first moves first); default drawn. */
  seat?: "first" | "second";
  /** How long it waits for an answer, 10 s to 24 h (default 5 minutes; open ones 30). */
  expiresInS?: number;
  /** Reuse to retry by hand; chosen by the SDK when unset. */
  requestId?: string;
}

export interface RematchOptions {
  /** Give up (and withdraw this player's offer) after this long; default 120 s, the offer's life. */
  timeoutMs?: number;
  signal?: AbortSignal;
  /** With several seats in the game: which one answers. */
  seat?: number;
}

/** Changes to the notice settings (NotificationService); what is left out stays. */
export interface NoticeSettingsChange {
  /** Per kind: kept in the inbox (off: not kept at all) / also e-mailed. */
  inbox?: Partial<Record<NotificationKind, boolean>>;
  email?: Partial<Record<NotificationKind, boolean>>;
  /** Minutes after local midnight (may wrap past it), or null for none. */
  quietHours?: { startMinute: number; endMinute: number } | null;
  /** IANA name, e.g. "Europe/Amsterdam" ("" = UTC). */
  timeZone?: string;
  emailDigest?: boolean;
  /** Local hour (0-23) the digest goes out. */
  digestHour?: number;
}

function timeControl(
  perMoveS: number | undefined,
  daysPerMove?: number,
): { perMove?: ReturnType<typeof durationFromMs>; daysPerMove?: number } | undefined {
  if (perMoveS === undefined && daysPerMove === undefined) return undefined;
  return {
    perMove: perMoveS === undefined ? undefined : durationFromMs(Math.round(perMoveS * 1000)),
    daysPerMove,
  };
}

/** A connection to tafel's gateway (or its web edge) over the given transport. */
export class TafelClient {
  readonly accounts: Client<typeof AccountService>;
  readonly lobby: Client<typeof LobbyService>;
  readonly games: Client<typeof GameService>;
  readonly bots: Client<typeof BotService>;
  readonly ratings: Client<typeof RatingService>;
  readonly tournaments: Client<typeof TournamentService>;
  readonly safety: Client<typeof SafetyService>;
  readonly events: Client<typeof EventService>;
  readonly challenges: Client<typeof ChallengeService>;
  readonly chat: Client<typeof ChatService>;
  readonly friends: Client<typeof FriendService>;
  readonly profiles: Client<typeof ProfileService>;
  readonly notices: Client<typeof NotificationService>;
  readonly email: Client<typeof EmailService>;
  readonly vacations: Client<typeof VacationService>;
  /** The staff's API (tafel.admin.v1): refused with ROLE_REQUIRED without the role. */
  readonly moderation: Client<typeof ModerationService>;
  readonly admin: Client<typeof AdminService>;
  session: Session | undefined;
  readonly requestIds = new RequestIds();
  private readonly timeoutMs: number;
  private readonly retries: number;

  constructor(readonly transport: Transport, { timeoutMs = 30_000, retries = 3 }: ClientOptions = {}) {
    this.accounts = createClient(AccountService, transport);
    this.lobby = createClient(LobbyService, transport);
    this.games = createClient(GameService, transport);
    this.bots = createClient(BotService, transport);
    this.ratings = createClient(RatingService, transport);
    this.tournaments = createClient(TournamentService, transport);
    this.safety = createClient(SafetyService, transport);
    this.events = createClient(EventService, transport);
    this.challenges = createClient(ChallengeService, transport);
    this.chat = createClient(ChatService, transport);
    this.friends = createClient(FriendService, transport);
    this.profiles = createClient(ProfileService, transport);
    this.notices = createClient(NotificationService, transport);
    this.email = createClient(EmailService, transport);
    this.vacations = createClient(VacationService, transport);
    this.moderation = createClient(ModerationService, transport);
    this.admin = createClient(AdminService, transport);
    this.timeoutMs = timeoutMs;
    this.retries = retries;
  }

  /** Ends the transport's connection when it has one to end (a native gRPC transport's HTTP/2
   * connection); fetch-based transports need nothing. */
  close(): void {
    const closable = this.transport as Partial<{ close: () => void }>;
    closable.close?.();
  }

  // -- plumbing ------------------------------------------------------------------------------

  get player(): Player {
    const player = this.session?.player;
    if (player === undefined) {
      throw new TafelError("NOT_SIGNED_IN", "sign in first (register, signIn or signInAsGuest)");
    }
    return player;
  }

  /** The token header, sent the same way on every transport. */
  headers(): Record<string, string> {
    return this.session ? { authorization: `Bearer ${this.session.token}` } : {};
  }

  private options(): CallOptions {
    return { headers: this.headers(), timeoutMs: this.timeoutMs };
  }

  /** A unary call with the token, typed errors and safe retries of UNAVAILABLE. `send` builds the
   * call from options so each attempt sends the very same request (and request id). */
  async call<T>(send: (options: CallOptions) => Promise<T>, retries = this.retries): Promise<T> {
    let delay = 100;
    for (let attempt = 0; ; attempt++) {
      try {
        return await send(this.options());
      } catch (error) {
        const code = ConnectError.from(error).code;
        // A refused certificate fails the same way every time: no retry.
        if (RETRYABLE.has(code) && attempt < retries && certificateError(error) === undefined) {
          await sleep(delay);
          delay = Math.min(delay * 2, 2000);
          continue;
        }
        throw fromCallError(error);
      }
    }
  }

  // -- accounts ------------------------------------------------------------------------------

  /** `displayName` (optional): the name others see, in any script (1-32 characters). */
  async register(username: string, password: string, displayName = ""): Promise<Player> {
    // Not retried: a lost answer to a Register that succeeded would come back ALREADY_EXISTS.
    const response = await this.call((o) => this.accounts.register({ username, password, displayName }, o), 0);
    this.session = response.session;
    return this.player;
  }

  async signIn(username: string, password: string): Promise<Player> {
    const response = await this.call((o) => this.accounts.signIn({ username, password }, o));
    this.session = response.session;
    return this.player;
  }

  /** `displayName` (optional): the name others see instead of the generated guest name. */
  async signInAsGuest(displayName = ""): Promise<Player> {
    const response = await this.call((o) => this.accounts.signInAsGuest({ displayName }, o));
    this.session = response.session;
    return this.player;
  }

  /** The name others see ("" removes it: the username shows). Refusals: BAD_DISPLAY_NAME,
   * DISPLAY_NAME_TOO_LONG, DISPLAY_NAME_RESERVED. Tokens carry the name, so this client carries on
   * with the fresh session the server answers. */
  async setDisplayName(displayName: string): Promise<Player> {
    const response = await this.call((o) => this.accounts.setDisplayName({ displayName }, o));
    this.session = required(response.session, "session");
    return this.player;
  }

  /** A new token with a fresh expiry for this session (before the old one expires). */
  async refreshSession(): Promise<Session> {
    const session = required((await this.call((o) => this.accounts.refreshSession({}, o))).session, "session");
    this.session = session;
    return session;
  }

  /** Revoke this session's token (or, with `allSessions`, every token of the player so far). */
  async signOut({ allSessions = false }: { allSessions?: boolean } = {}): Promise<void> {
    await this.call((o) => this.accounts.signOut({ allSessions }, o));
    this.session = undefined;
  }

  async me(): Promise<Player> {
    const response = await this.call((o) => this.accounts.getMe({}, o));
    if (response.player === undefined) {
      throw new TafelError("NO_PLAYER", "the server answered without a player");
    }
    return response.player;
  }

  /** The caller's role (ROLE_PLAYER for everyone without a staff role, guests included). */
  async myRole(): Promise<Role> {
    return (await this.call((o) => this.accounts.getMe({}, o))).role;
  }

  /** A new password (the current one must be given). Every other session of the account is
   * revoked; this client carries on with the fresh session the server answers. */
  async changePassword(currentPassword: string, newPassword: string): Promise<Session> {
    // Not retried: a lost answer to a change that succeeded would come back WRONG_PASSWORD.
    const response = await this.call((o) => this.accounts.changePassword({ currentPassword, newPassword }, o), 0);
    this.session = required(response.session, "session");
    return this.session;
  }

  /** Erase the account (its password confirms): personal data deleted, games kept under a
   * placeholder name, every session revoked. Cannot be undone. */
  async deleteAccount(password: string): Promise<void> {
    // Not retried: a lost answer would come back UNAUTHENTICATED (the session is gone with it).
    await this.call((o) => this.accounts.deleteAccount({ password }, o), 0);
    this.session = undefined;
  }

  /** Everything the platform keeps about the caller, as the JSON text the server wrote. */
  async exportMyData(): Promise<string> {
    return (await this.call((o) => this.accounts.exportMyData({}, o))).json;
  }

  // -- safety: block, mute, report, standing -------------------------------------------------

  async blockPlayer(username: string): Promise<Player> {
    return required((await this.call((o) => this.safety.blockPlayer({ username }, o))).player, "player");
  }

  async unblockPlayer(username: string): Promise<void> {
    await this.call((o) => this.safety.unblockPlayer({ username }, o));
  }

  async mutePlayer(username: string): Promise<Player> {
    return required((await this.call((o) => this.safety.mutePlayer({ username }, o))).player, "player");
  }

  async unmutePlayer(username: string): Promise<void> {
    await this.call((o) => this.safety.unmutePlayer({ username }, o));
  }

  /** The players the caller blocks and mutes. */
  async listBlocked(): Promise<ListBlockedResponse> {
    return this.call((o) => this.safety.listBlocked({}, o));
  }

  /** Report a player (optionally in a game) to the moderators; returns the report's id. A retry
   * reuses the request id, so the report is filed once. */
  async report(username: string, reason: ReportReason, opts: ReportOptions = {}): Promise<string> {
    const request = {
      username,
      reason,
      gameId: opts.gameId ?? "",
      messageId: opts.messageId ?? "",
      chatChannel: opts.chatChannel === undefined ? undefined : chatChannel(opts.chatChannel),
      details: opts.details ?? "",
      requestId: opts.requestId ?? this.requestIds.next(),
    };
    return (await this.call((o) => this.safety.report(request, o))).reportId;
  }

  /** The caller's warnings and sanctions in force, newest first. */
  async myStanding(): Promise<GetMyStandingResponse> {
    return this.call((o) => this.safety.getMyStanding({}, o));
  }

  // -- lobby ---------------------------------------------------------------------------------

  async gameTypes(): Promise<GameType[]> {
    return (await this.call((o) => this.lobby.listGameTypes({}, o))).gameTypes;
  }

  /** Queue for a game and yield each status until matched. Breaking out of the loop (or aborting
   * `signal`) leaves the queue, except for a correspondence search (`daysPerMove`), which stays
   * queued for a week until matched (the game comes as gameStarted on `myEvents`) or withdrawn
   * with `cancelSearch`. A lost connection or a stopping gateway sends the search again
   * with the same request id (it takes over its ticket, or gets the match it was paired into). */
  async *findMatchUpdates(game: string, opts: MatchOptions = {}): AsyncGenerator<FindMatchResponse> {
    const request = create(FindMatchRequestSchema, {
      game,
      options: opts.options,
      timeControl: timeControl(opts.perMoveS, opts.daysPerMove),
      minSeats: opts.minSeats ?? 0,
      maxSeats: opts.maxSeats ?? 0,
      requestId: this.requestIds.next(),
    });
    let updates = 0;
    yield* resuming({
      // Cancelling the call (leaving the loop) is what takes the ticket out of the queue.
      open: (_after, signal) => this.lobby.findMatch(request, { headers: this.headers(), signal }),
      idOf: () => String(++updates),
      isAfter: () => true, // a search sent again reports from now on: nothing to drop
      isLast: (update) => update.status.case === "matched",
      afterId: "",
      maxRetries: 20,
      signal: opts.signal,
      reopenOnEnd: true,
    });
  }

  /** Queue and wait until matched; returns the game id and seat. */
  async findMatch(game: string, opts: MatchOptions = {}): Promise<MatchFound> {
    for await (const update of this.findMatchUpdates(game, opts)) {
      if (update.status.case === "matched") {
        return update.status.value;
      }
    }
    throw new TafelError("MATCH_ENDED", "the matchmaking stream ended without a match");
  }

  /** Your correspondence searches waiting for an opponent (they outlive the stream that sent
   * them), oldest first. */
  async listMySearches(): Promise<WaitingSearch[]> {
    return (await this.call((o) => this.lobby.listMySearches({}, o))).searches;
  }

  /** Withdraw your waiting search for `game` (idempotent): `cancelled` says whether one was
   * waiting; `gameId` names the game it started when it had been paired already. */
  async cancelSearch(game: string): Promise<{ cancelled: boolean; gameId: string }> {
    const answer = await this.call((o) => this.lobby.cancelSearch({ game }, o));
    return { cancelled: answer.cancelled, gameId: answer.gameId };
  }

  async createRoom(game: string, opts: RoomOptions = {}): Promise<Room> {
    const request = {
      game,
      options: opts.options,
      seats: opts.seats ?? 0,
      timeControl: timeControl(opts.perMoveS, opts.daysPerMove),
      watchable: opts.watchable ?? false,
    };
    // Not retried: a lost answer would leave a second, empty room behind.
    return required((await this.call((o) => this.lobby.createRoom(request, o), 0)).room, "room");
  }

  async joinRoom(code: string): Promise<Room> {
    return required((await this.call((o) => this.lobby.joinRoom({ code }, o))).room, "room");
  }

  async leaveRoom(code: string): Promise<Room> {
    return required((await this.call((o) => this.lobby.leaveRoom({ code }, o))).room, "room");
  }

  async startRoom(code: string): Promise<Room> {
    return required((await this.call((o) => this.lobby.startRoom({ code }, o))).room, "room");
  }

  async getRoom(code: string): Promise<Room> {
    return required((await this.call((o) => this.lobby.getRoom({ code }, o))).room, "room");
  }

  /** The room now and on every change, until it starts or closes. */
  async *watchRoom(code: string, signal?: AbortSignal): AsyncGenerator<Room> {
    try {
      for await (const update of this.lobby.watchRoom({ code }, { headers: this.headers(), signal })) {
        if (update.room !== undefined) {
          yield update.room;
        }
      }
    } catch (error) {
      throw fromCallError(error);
    }
  }

  /** Wait until the room starts; returns it with its game id. */
  async waitRoomStarted(code: string, signal?: AbortSignal): Promise<Room> {
    for await (const room of this.watchRoom(code, signal)) {
      if (room.state === RoomState.STARTED) {
        return room;
      }
      if (room.state === RoomState.CLOSED) {
        throw new TafelError("ROOM_CLOSED", `room ${code} closed before it started`);
      }
    }
    throw new TafelError("ROOM_ENDED", `watching room ${code} ended before it started`);
  }

  /** Ask the bot pool for a bot of `level` (1-3) to join your room; returns the request's id. */
  async requestBot(roomCode: string, level: number): Promise<string> {
    return (await this.call((o) => this.bots.requestBot({ roomCode, level }, o))).requestId;
  }

  // -- play ----------------------------------------------------------------------------------

  async getGame(gameId: string): Promise<GetGameResponse> {
    return this.call((o) => this.games.getGame({ gameId }, o));
  }

  /** GetGame, waiting while the game is still being created (a room or a tournament round
   * announces its game id a moment before the game exists). */
  async waitForGame(gameId: string, timeoutMs = 15_000): Promise<GetGameResponse> {
    const deadline = Date.now() + timeoutMs;
    let delay = 50;
    for (;;) {
      try {
        return await this.getGame(gameId);
      } catch (error) {
        if (!(error instanceof NotFound) || Date.now() + delay > deadline) {
          throw error;
        }
        await sleep(delay);
        delay = Math.min(delay * 2, 1000);
      }
    }
  }

  /** Submit a typed move (e.g. `moves.connect4(3)`) for the caller's seat. */
  async submitMove(gameId: string, move: GameMove, opts: MoveOptions = {}): Promise<SubmitMoveResponse> {
    const expectedVersion = opts.expectedVersion ?? (await this.getGame(gameId)).summary?.status?.version ?? 0n;
    const request = { gameId, expectedVersion, move, requestId: opts.requestId ?? this.requestIds.next(), seat: opts.seat };
    return this.call((o) => this.games.submitMove(request, o));
  }

  async resign(gameId: string, opts: Pick<MoveOptions, "requestId" | "seat"> = {}): Promise<ResignResponse> {
    const request = { gameId, requestId: opts.requestId ?? this.requestIds.next(), seat: opts.seat };
    return this.call((o) => this.games.resign(request, o));
  }

  async listMyGames(pageSize = 50, pageToken = ""): Promise<ListMyGamesResponse> {
    return this.call((o) => this.games.listMyGames({ pageSize, pageToken }, o));
  }

  async listLiveGames(game = "", pageSize = 50, pageToken = ""): Promise<ListLiveGamesResponse> {
    return this.call((o) => this.games.listLiveGames({ game, pageSize, pageToken }, o));
  }

  async getRecord(gameId: string): Promise<GameRecord> {
    return required((await this.call((o) => this.games.getGameRecord({ gameId }, o))).record, "record");
  }

  /** A finished game's record and its every position as the server rebuilt it: views[v] is the
   * position after version v, drawn as a live board is. No views once the platform no longer keeps
   * them (GetGameRecordResponse.views in play.proto says when). */
  async getReplay(gameId: string): Promise<{ record: GameRecord; views: GameView[] }> {
    const response = await this.call((o) => this.games.getGameRecord({ gameId, includeViews: true }, o));
    return { record: required(response.record, "record"), views: response.views };
  }

  async listRecords(filter: { playerId?: string; game?: string; pageSize?: number; pageToken?: string } = {}): Promise<ListGameRecordsResponse> {
    return this.call((o) => this.games.listGameRecords({ pageSize: 50, ...filter }, o));
  }

  /** A game's events after `afterEventId`, with the status after each, resuming by itself after a
   * dropped connection from the last event seen: nothing lost, nothing repeated. */
  async *watchGame(gameId: string, opts: WatchOptions = {}): AsyncGenerator<WatchGameResponse> {
    const stopAtEnd = opts.stopAtEnd ?? true;
    yield* resuming({
      open: (afterEventId, signal) => this.games.watchGame({ gameId, afterEventId }, { headers: this.headers(), signal }),
      idOf: (response) => response.event?.eventId,
      isAfter,
      isLast: (response) => stopAtEnd && response.event?.kind.case === "ended",
      afterId: opts.afterEventId ?? "",
      maxRetries: opts.maxRetries ?? 20,
      signal: opts.signal,
    });
  }

  /** A game's events (see watchGame). */
  async *watch(gameId: string, opts: WatchOptions = {}): AsyncGenerator<GameEvent> {
    for await (const response of this.watchGame(gameId, opts)) {
      if (response.event !== undefined) {
        yield response.event;
      }
    }
  }

  /** The bidirectional Play stream (native gRPC in Node; see play-stream.ts). `batchResponses`
   * lets the gateway send an action's answer and its own events in one message. */
  playStream(options: PlayStreamOptions = {}): PlayStream {
    return new PlayStream(this, options);
  }

  // -- ratings and tournaments ---------------------------------------------------------------

  async leaderboard(game: string, pageSize = 20, pageToken = ""): Promise<GetLeaderboardResponse> {
    return this.call((o) => this.ratings.getLeaderboard({ leaderboard: game, includeProvisional: true, pageSize, pageToken }, o));
  }

  /** Fields of CreateTournamentRequest (name, game, format, rounds, capacity, ...). */
  async createTournament(fields: Omit<MessageInitShape<typeof CreateTournamentRequestSchema>, "requestId" | "$typeName">): Promise<Tournament> {
    const request = create(CreateTournamentRequestSchema, { ...fields, requestId: this.requestIds.next() });
    return required((await this.call((o) => this.tournaments.createTournament(request, o))).tournament, "tournament");
  }

  async listTournaments(pageSize = 50, pageToken = ""): Promise<Tournament[]> {
    return (await this.call((o) => this.tournaments.listTournaments({ pageSize, pageToken }, o))).tournaments;
  }

  async getTournament(tournamentId: string): Promise<Tournament> {
    return required((await this.call((o) => this.tournaments.getTournament({ tournamentId }, o))).tournament, "tournament");
  }

  /** Refusals: REGISTRATION_NOT_OPEN (metadata opens_at), NOT_REGISTERING, RATING_TOO_LOW
   * (min_rating), TOO_FEW_RATED_GAMES (min_rated_games), BAD_INVITATION_CODE, BANNED_FROM_TOURNAMENT,
   * TOURNAMENT_FULL. */
  async joinTournament(tournamentId: string, invitationCode = ""): Promise<Tournament> {
    return required((await this.call((o) => this.tournaments.joinTournament({ tournamentId, invitationCode }, o))).tournament, "tournament");
  }

  /** One round's pairings and results (0 = the current round). */
  async tournamentRound(tournamentId: string, round = 0): Promise<TournamentRound> {
    return required((await this.call((o) => this.tournaments.getRound({ tournamentId, round }, o))).round, "round");
  }

  /** Every game of the tournament (or of one round, or one player's), all pages read. */
  async tournamentGames(tournamentId: string, opts: { round?: number; playerId?: string; pageSize?: number } = {}): Promise<TournamentGame[]> {
    const games: TournamentGame[] = [];
    let pageToken = "";
    do {
      const page = await this.call((o) => this.tournaments.listTournamentGames({ tournamentId, round: opts.round ?? 0, playerId: opts.playerId ?? "", pageSize: opts.pageSize ?? 100, pageToken }, o));
      games.push(...page.games);
      pageToken = page.nextPageToken;
    } while (pageToken);
    return games;
  }

  /** Standings, pairings and every game's record (`parts`; none = all three) as CSV or JSON, each
   * file assembled from the streamed chunks. A dropped stream is asked again from the start. */
  async exportTournament(tournamentId: string, format: "csv" | "json", parts: ("standings" | "pairings" | "games")[] = []): Promise<ExportedFile[]> {
    const partEnum = { standings: ExportPart.STANDINGS, pairings: ExportPart.PAIRINGS, games: ExportPart.GAMES };
    const request = { tournamentId, format: format === "csv" ? ExportFormat.CSV : ExportFormat.JSON, parts: parts.map((p) => partEnum[p]) };
    return this.call(async (o) => {
      const files: { name: string; contentType: string; chunks: Uint8Array[] }[] = [];
      for await (const chunk of this.tournaments.exportTournament(request, o)) {
        let file = files.at(-1);
        if (file === undefined || file.name !== chunk.fileName) {
          file = { name: chunk.fileName, contentType: chunk.contentType, chunks: [] };
          files.push(file);
        }
        file.chunks.push(chunk.data);
      }
      return files.map((f) => {
        const data = new Uint8Array(f.chunks.reduce((n, c) => n + c.length, 0));
        let at = 0;
        for (const c of f.chunks) {
          data.set(c, at);
          at += c.length;
        }
        return { name: f.name, contentType: f.contentType, data };
      });
    });
  }

  /** An arena's player steps away (not paired again) or comes back (`paused` false). */
  async pauseArenaPlay(tournamentId: string, paused: boolean): Promise<Tournament> {
    return required((await this.call((o) => this.tournaments.pauseArenaPlay({ tournamentId, paused }, o))).tournament, "tournament");
  }

  // -- directing a tournament (its organiser, or an organiser or admin role) --------------------

  /** Change the settings given (their keys are the update mask, so a key given its zero value is
   * cleared): name, capacity, rounds, startsAt, registrationOpensAt/ClosesAt, entry,
   * invitationCode, lateJoinUntilRound, roundStartTimes, manualRounds, ... */
  async updateTournament(tournamentId: string, settings: TournamentSettings): Promise<Tournament> {
    const paths = Object.keys(settings).map(maskPath);
    if (paths.length === 0) throw new TafelError("BAD_UPDATE_MASK", "name at least one field to change", Code.InvalidArgument);
    const request = { tournamentId, settings: create(CreateTournamentRequestSchema, settings), updateMask: { paths } };
    return required((await this.call((o) => this.tournaments.updateTournament(request, o))).tournament, "tournament");
  }

  /** Withdraw a player (before the start: unregister them); `ban`: never to join again. */
  async removePlayer(tournamentId: string, playerId: string, opts: { ban?: boolean; reason?: string } = {}): Promise<Tournament> {
    return required((await this.call((o) => this.tournaments.removePlayer({ tournamentId, playerId, ban: opts.ban ?? false, reason: opts.reason ?? "" }, o))).tournament, "tournament");
  }

  async pauseTournament(tournamentId: string): Promise<Tournament> {
    return required((await this.call((o) => this.tournaments.pauseTournament({ tournamentId }, o))).tournament, "tournament");
  }

  async resumeTournament(tournamentId: string): Promise<Tournament> {
    return required((await this.call((o) => this.tournaments.resumeTournament({ tournamentId }, o))).tournament, "tournament");
  }

  /** Not retried (a second try could start the round after): ROUND_IN_PROGRESS, NO_NEXT_ROUND. */
  async startNextRound(tournamentId: string): Promise<StartNextRoundResponse> {
    return this.call((o) => this.tournaments.startNextRound({ tournamentId }, o), 0);
  }

  /** End it now with final standings. A retry whose first try did its work (NOT_RUNNING, the
   * tournament terminated) answers with the tournament, as the first would have. */
  async terminateTournament(tournamentId: string, reason = ""): Promise<Tournament> {
    try {
      return required((await this.call((o) => this.tournaments.terminateTournament({ tournamentId, reason }, o))).tournament, "tournament");
    } catch (error) {
      if (!(error instanceof TafelError) || error.reason !== "NOT_RUNNING") throw error;
      const tournament = await this.getTournament(tournamentId);
      if (!tournament.terminated) throw error;
      return tournament;
    }
  }

  /** Decide a game by hand: `ranks` per seat (1 = best; a two-player draw is [1, 1]); an arena's
   * games are round 0. Safe to repeat (the same ranks change nothing). */
  async correctResult(tournamentId: string, game: { round: number; board: number; decider?: number }, ranks: number[], reason: string): Promise<CorrectResultResponse> {
    return this.call((o) => this.tournaments.correctResult({ tournamentId, round: game.round, board: game.board, decider: game.decider ?? 0, ranks, reason }, o));
  }

  /** A message to every participant; the number it went to. A retry reuses the request id, so it
   * is sent once. ANNOUNCEMENTS_TOO_FAST: wait `error.metadata.retry_after_ms`. */
  async announce(tournamentId: string, text: string, opts: { requestId?: string } = {}): Promise<number> {
    const requestId = opts.requestId ?? this.requestIds.next();
    return (await this.call((o) => this.tournaments.announce({ tournamentId, text, requestId }, o))).recipients;
  }

  /** The directors' actions on this tournament, oldest first (directors only). */
  async tournamentAudit(tournamentId: string): Promise<TournamentAuditEntry[]> {
    return (await this.call((o) => this.tournaments.listTournamentAudit({ tournamentId }, o))).entries;
  }

  async leaveTournament(tournamentId: string): Promise<void> {
    await this.call((o) => this.tournaments.leaveTournament({ tournamentId }, o));
  }

  async startTournament(tournamentId: string): Promise<Tournament> {
    return required((await this.call((o) => this.tournaments.startTournament({ tournamentId }, o))).tournament, "tournament");
  }

  async standings(tournamentId: string): Promise<GetStandingsResponse> {
    return this.call((o) => this.tournaments.getStandings({ tournamentId }, o));
  }

  /** A tournament's events, resuming by itself after a dropped connection; ends after it finishes. */
  async *watchTournament(tournamentId: string, opts: Omit<WatchOptions, "stopAtEnd"> = {}): AsyncGenerator<TournamentEvent> {
    const responses = resuming({
      open: (afterEventId, signal) =>
        this.tournaments.watchTournament({ tournamentId, afterEventId }, { headers: this.headers(), signal }),
      idOf: (response) => response.event?.eventId,
      // Tournament event ids are opaque and strictly increasing per tournament: a resumed stream
      // starts after the id it was given, so anything it sends is new.
      isAfter: () => true,
      isLast: (response) => response.event?.kind.case === "finished" || response.event?.kind.case === "cancelled",
      afterId: opts.afterEventId ?? "",
      maxRetries: opts.maxRetries ?? 20,
      signal: opts.signal,
    });
    for await (const response of responses) {
      if (response.event !== undefined) {
        yield response.event;
      }
    }
  }

  // -- chat, following, profiles and settings ---------------------------------------

  /** Say `text` in a channel (`{ kind: "players", id: gameId }`). A retry reuses the request id,
   * so the line is said once (the answer is the first message). Refusals: CHAT_NEEDS_ACCOUNT,
   * CHAT_NOT_ALLOWED, CHAT_CHANNEL_NOT_FOUND, CHAT_OFF, CHAT_EMPTY, CHAT_TOO_LONG, CHAT_TOO_FAST
   * (`error.metadata.retry_after_ms`), CHAT_MUTED. */
  async sendChat(channel: ChatChannelRef, text: string, opts: { requestId?: string } = {}): Promise<ChatMessage> {
    const request = { channel: chatChannel(channel), text, requestId: opts.requestId ?? this.requestIds.next() };
    return required((await this.call((o) => this.chat.sendChatMessage(request, o))).message, "message");
  }

  /** A channel's messages (history first when no `afterMessageId`), then live ones until `signal`
   * aborts or the loop is left. After a dropped connection or a stopping gateway it resumes by
   * itself after the last message it handed out: nothing lost, nothing twice. */
  async *watchChat(channel: ChatChannelRef, opts: ChatWatchOptions = {}): AsyncGenerator<ChatMessage> {
    const named = chatChannel(channel);
    const responses = resuming({
      open: (afterMessageId, signal) => this.chat.watchChat({ channel: named, afterMessageId }, { headers: this.headers(), signal }),
      idOf: (response) => {
        if (response.kind.case === "message") return response.kind.value.messageId;
        if (response.kind.case === "lines") return response.kind.value.messages.at(-1)?.messageId;
        // A `ready` is no position: the history a watch without an id gets comes after it.
        if (response.kind.case === "ready") opts.onReady?.(response.kind.value);
        return undefined;
      },
      isAfter,
      isLast: () => false,
      afterId: opts.afterMessageId ?? "",
      maxRetries: opts.maxRetries ?? 20,
      signal: opts.signal,
      reopenOnEnd: true, // the watch has no end of its own: one that ends was cut
    });
    let seen = opts.afterMessageId ?? "";
    for await (const response of responses) {
      // A busy channel's waiting lines come several in one response (`lines`).
      const said = response.kind.case === "message" ? [response.kind.value] : response.kind.case === "lines" ? response.kind.value.messages : [];
      for (const message of said) {
        if (seen && !isAfter(message.messageId, seen)) continue; // never twice
        seen = message.messageId;
        yield message;
      }
    }
  }

  /** A channel's kept messages after `afterMessageId` (empty: from the oldest), oldest first, at
   * most `pageSize` (0 = 100, at most 500); `more` says whether more follow. */
  async listChat(channel: ChatChannelRef, opts: { afterMessageId?: string; pageSize?: number } = {}): Promise<ListChatMessagesResponse> {
    const request = { channel: chatChannel(channel), afterMessageId: opts.afterMessageId ?? "", pageSize: opts.pageSize ?? 0 };
    return this.call((o) => this.chat.listChatMessages(request, o));
  }

  /** Follow a player: their presence in listFollowing and a `presence` event on your event stream
   * when it changes. Following again changes nothing. Refusals: PLAYER_NOT_FOUND,
   * FOLLOW_NEEDS_ACCOUNT, TOO_MANY_FOLLOWS. */
  async follow(username: string): Promise<FollowedPlayer> {
    return required((await this.call((o) => this.friends.follow({ username }, o))).followed, "followed player");
  }

  async unfollow(username: string): Promise<void> {
    await this.call((o) => this.friends.unfollow({ username }, o));
  }

  /** The players you follow with their presence: playing first, then online, then by last seen. */
  async listFollowing(): Promise<FollowedPlayer[]> {
    return (await this.call((o) => this.friends.listFollowing({}, o))).following;
  }

  /** A player's public page (ratings with history, last games, results against you). */
  async getProfile(username: string): Promise<Profile> {
    return required((await this.call((o) => this.profiles.getProfile({ username }, o))).profile, "profile");
  }

  async getMySettings(): Promise<PlayerSettings> {
    return required((await this.call((o) => this.profiles.getMySettings({}, o))).settings, "settings");
  }

  /** Change the settings given (the rest stay); setting a value is safe to repeat. */
  async updateMySettings(change: SettingsChange): Promise<PlayerSettings> {
    const policy = change.challengePolicy;
    const request = {
      chatEnabled: change.chatEnabled,
      challengePolicy: policy === undefined ? ChallengePolicy.UNSPECIFIED : typeof policy === "number" ? policy : POLICIES[policy],
    };
    if (request.challengePolicy === undefined) throw new TafelError("BAD_CHALLENGE_POLICY", `no challenge policy ${String(policy)}`);
    return required((await this.call((o) => this.profiles.updateMySettings(request, o))).settings, "settings");
  }

  // -- the inbox, e-mail and vacations --------------------------------------------

  /** Your notices, newest first, and `unread` (the badge). New ones also come on `accountEvents`
   * (event.kind.case "notification"), and reads and clears from any client as "inbox". */
  async listNotifications(opts: { unreadOnly?: boolean; pageSize?: number; pageToken?: string } = {}): Promise<ListNotificationsResponse> {
    const request = { unreadOnly: opts.unreadOnly ?? false, pageSize: opts.pageSize ?? 50, pageToken: opts.pageToken ?? "" };
    return await this.call((o) => this.notices.listNotifications(request, o));
  }

  /** Mark the notices named read (or every one with `all`); returns the unread count left. */
  async markNotificationsRead(ids: string[], opts: { all?: boolean } = {}): Promise<number> {
    return (await this.call((o) => this.notices.markNotificationsRead({ notificationIds: ids, all: opts.all ?? false }, o))).unread;
  }

  /** Remove the notices named (or every one with `all`); returns the unread count left. */
  async clearNotifications(ids: string[], opts: { all?: boolean } = {}): Promise<number> {
    return (await this.call((o) => this.notices.clearNotifications({ notificationIds: ids, all: opts.all ?? false }, o))).unread;
  }

  /** Which notices reach you and how (every kind listed, with its defaults until changed). */
  async notificationSettings(): Promise<NotificationSettings> {
    return required((await this.call((o) => this.notices.getNotificationSettings({}, o))).settings, "settings");
  }

  /** Change what is given; the rest stays as the server has it. */
  async updateNotificationSettings(change: NoticeSettingsChange): Promise<NotificationSettings> {
    const settings = await this.notificationSettings();
    for (const [channel, changes] of [["inbox", change.inbox], ["email", change.email]] as const) {
      for (const [kind, on] of Object.entries(changes ?? {})) {
        if (on === undefined) continue;
        let preference = settings.preferences.find((p) => p.kind === Number(kind));
        if (preference === undefined) {
          preference = { $typeName: "tafel.play.v1.NoticePreference", kind: Number(kind) as NotificationKind, inbox: true, email: false };
          settings.preferences.push(preference);
        }
        preference[channel] = on;
      }
    }
    if (change.quietHours !== undefined) {
      settings.quietHours = {
        $typeName: "tafel.play.v1.QuietHours",
        enabled: change.quietHours !== null,
        startMinute: change.quietHours?.startMinute ?? settings.quietHours?.startMinute ?? 0,
        endMinute: change.quietHours?.endMinute ?? settings.quietHours?.endMinute ?? 0,
      };
    }
    if (change.timeZone !== undefined) settings.timeZone = change.timeZone;
    if (change.emailDigest !== undefined) settings.emailDigest = change.emailDigest;
    if (change.digestHour !== undefined) settings.digestHour = change.digestHour;
    return required((await this.call((o) => this.notices.updateNotificationSettings({ settings }, o))).settings, "settings");
  }

  /** Your address, whether it is confirmed, and a changed one waiting for its confirmation. */
  async getEmail(): Promise<EmailAddress> {
    return required((await this.call((o) => this.email.getEmail({}, o))).email, "email");
  }

  /** Set or change your address ("" removes it): a confirmation link is mailed to it in
   * `language`. Not retried by itself: each try mails a link (3 an hour, EMAIL_TOO_FAST). */
  async setEmail(address: string, language = ""): Promise<EmailAddress> {
    return required((await this.call((o) => this.email.setEmail({ address, language }, o), 0)).email, "email");
  }

  /** Confirm an address with the token from the mailed link (no session needed; safe to repeat). */
  async confirmEmail(token: string): Promise<ConfirmEmailResponse> {
    return await this.call((o) => this.email.confirmEmail({ token }, o));
  }

  /** One click from a mail: stop that mail's kind; returns "digest" or "immediate". */
  async unsubscribe(token: string): Promise<string> {
    return (await this.call((o) => this.email.unsubscribe({ token }, o))).stopped;
  }

  /** Whether you are on vacation, until when, and this year's allowance left. */
  async getVacation(): Promise<Vacation> {
    return required((await this.call((o) => this.vacations.getVacation({}, o))).vacation, "vacation");
  }

  /** Go on vacation now, for `hours` (whole hours) or until ended / the allowance is used up. */
  async startVacation(hours?: number): Promise<Vacation> {
    const request = hours === undefined ? {} : { duration: durationFromMs(Math.round(hours) * 3_600_000) };
    return required((await this.call((o) => this.vacations.startVacation(request, o))).vacation, "vacation");
  }

  /** Come back: your clocks run again from where they stood. */
  async endVacation(): Promise<Vacation> {
    return required((await this.call((o) => this.vacations.endVacation({}, o))).vacation, "vacation");
  }

  // -- the account's event stream, challenges, offers ------------------------------

  /** The caller's events (challenges in and out, games starting, offers in their games), live,
   * until `signal` aborts or the loop is left. After a dropped connection or a stopping gateway it
   * resumes by itself from the last event it handed out (on any gateway): nothing lost, nothing
   * twice. An id older than the server keeps (a day) fails with reason EVENT_ID_OUT_OF_RANGE: list
   * what is pending and watch from now. */
  async *watchMyEvents(opts: EventStreamOptions = {}): AsyncGenerator<AccountEvent> {
    let positioned = (opts.afterEventId ?? "") !== "";
    let ready = false;
    const responses = resuming({
      open: (afterEventId, signal) => this.events.watchMyEvents({ afterEventId }, { headers: this.headers(), signal }),
      idOf: (response) => {
        if (response.kind.case === "event") return response.kind.value.eventId;
        if (response.kind.case !== "ready") return undefined;
        // A watch "from now" starts at the stream's end, which the first `ready` names ("0-0" for
        // an account with no events yet, so a reopening before any event misses nothing either).
        // Later readies are not positions: events made during a cut come after them.
        const end = response.kind.value.lastEventId || "0-0";
        if (!ready) {
          ready = true;
          opts.onReady?.(end);
        }
        return positioned ? undefined : end;
      },
      isAfter,
      isLast: () => false,
      afterId: opts.afterEventId ?? "",
      maxRetries: opts.maxRetries ?? 20,
      signal: opts.signal,
      reopenOnEnd: true, // the stream has no end of its own: one that ends was cut
    });
    for await (const response of responses) {
      positioned = true;
      if (response.kind.case === "event") yield response.kind.value;
    }
  }

  /** Challenge a player by username to `game`; they get it on their event stream. The same
   * request id again (a retry) returns the first challenge. */
  async challenge(username: string, game: string, opts: ChallengeOptions = {}): Promise<Challenge> {
    return this.createChallenge({ username }, game, opts);
  }

  /** Challenge one of the platform's bots (level 1-3). It accepts at once: `roomCode` is the
   * private room of two that seats you and the bot joins; `waitRoomStarted(roomCode)` gives the
   * game once the bot sits down. */
  async challengeBot(level: number, game: string, opts: ChallengeOptions = {}): Promise<Challenge> {
    return this.createChallenge({ botLevel: level }, game, opts);
  }

  /** A challenge anyone may take (listed by listOpenChallenges, in the lobby). */
  async openChallenge(game: string, opts: ChallengeOptions = {}): Promise<Challenge> {
    return this.createChallenge({ open: true }, game, opts);
  }

  private async createChallenge(whom: { username?: string; botLevel?: number; open?: boolean }, game: string, opts: ChallengeOptions): Promise<Challenge> {
    const request = {
      ...whom,
      game,
      options: opts.options,
      timeControl: timeControl(opts.perMoveS, opts.daysPerMove),
      rated: opts.rated ?? false,
      seatPreference: opts.seat === "first" ? SeatPreference.FIRST : opts.seat === "second" ? SeatPreference.SECOND : SeatPreference.UNSPECIFIED,
      expiresIn: opts.expiresInS === undefined ? undefined : durationFromMs(Math.round(opts.expiresInS * 1000)),
      requestId: opts.requestId ?? this.requestIds.next(),
    };
    return required((await this.call((o) => this.challenges.createChallenge(request, o))).challenge, "challenge");
  }

  /** Accept a challenge to you (or an open one): the game starts for both; its id is `gameId`. */
  async acceptChallenge(challengeId: string): Promise<Challenge> {
    // Accepting again is answered the same way, so a retry is safe.
    return required((await this.call((o) => this.challenges.acceptChallenge({ challengeId }, o))).challenge, "challenge");
  }

  /** Decline a challenge to you, with a reason from the list (the challenger is told it). */
  async declineChallenge(challengeId: string, reason: DeclineReason = DeclineReason.GENERIC): Promise<Challenge> {
    return this.settleChallenge(challengeId, ChallengeStatus.DECLINED, (o) => this.challenges.declineChallenge({ challengeId, reason }, o));
  }

  /** Withdraw a challenge you made while it is pending. */
  async cancelChallenge(challengeId: string): Promise<Challenge> {
    return this.settleChallenge(challengeId, ChallengeStatus.CANCELLED, (o) => this.challenges.cancelChallenge({ challengeId }, o));
  }

  /** A decline or cancel, retried like any call: a retry whose first attempt landed is refused
   * CHALLENGE_NOT_PENDING, and then the challenge as it is answers (it is what was asked for). */
  private async settleChallenge(
    challengeId: string,
    want: ChallengeStatus,
    send: (o: CallOptions) => Promise<{ challenge?: Challenge }>,
  ): Promise<Challenge> {
    let attempts = 0;
    try {
      return required((await this.call((o) => (attempts++, send(o)))).challenge, "challenge");
    } catch (error) {
      if (attempts > 1 && error instanceof TafelError && error.reason === "CHALLENGE_NOT_PENDING") {
        const now = await this.getChallenge(challengeId);
        if (now.status === want) return now;
      }
      throw error;
    }
  }

  async getChallenge(challengeId: string): Promise<Challenge> {
    return required((await this.call((o) => this.challenges.getChallenge({ challengeId }, o))).challenge, "challenge");
  }

  /** Your pending challenges, to you (`incoming`) and by you (`outgoing`), oldest first. */
  async listChallenges(): Promise<ListChallengesResponse> {
    return this.call((o) => this.challenges.listChallenges({}, o));
  }

  /** Open challenges anyone may take, newest first (optionally one game's). */
  async listOpenChallenges(game = ""): Promise<Challenge[]> {
    return (await this.call((o) => this.challenges.listOpenChallenges({ game }, o))).challenges;
  }

  /** Offer a draw (two-player games), ask for a takeback (casual games) or, after the game, offer
   * a rematch. The others get it on their event streams. It carries a request id, so a retry
   * after a lost answer is answered with the same offer. */
  async makeOffer(gameId: string, kind: OfferKind, opts: { seat?: number; requestId?: string } = {}): Promise<Offer> {
    const request = { gameId, kind, seat: opts.seat, requestId: opts.requestId ?? this.requestIds.next() };
    return required((await this.call((o) => this.games.makeOffer(request, o))).offer, "offer");
  }

  async offerDraw(gameId: string): Promise<Offer> {
    return this.makeOffer(gameId, OfferKind.DRAW);
  }

  async askTakeback(gameId: string): Promise<Offer> {
    return this.makeOffer(gameId, OfferKind.TAKEBACK);
  }

  async offerRematch(gameId: string): Promise<Offer> {
    return this.makeOffer(gameId, OfferKind.REMATCH);
  }

  /** Accept or decline the pending offer of `kind` (declining your own withdraws it). A draw
   * accepted ends the game DRAW_AGREED; a takeback returns the game to before the asker's last
   * move; a rematch accepted by all carries `newGameId`. Not retried by itself: a resent answer may
   * come back NO_OFFER once the first was counted. */
  async answerOffer(gameId: string, kind: OfferKind, accept: boolean, opts: { seat?: number } = {}): Promise<Offer> {
    return required((await this.call((o) => this.games.answerOffer({ gameId, kind, accept, seat: opts.seat }, o), 0)).offer, "offer");
  }

  /** End a game before every player has moved: no result, no rating (TOO_LATE_TO_ABORT after). */
  async abortGame(gameId: string): Promise<GameSummary> {
    // Not retried: a lost answer would come back GAME_OVER (the game's watch shows the end).
    return required((await this.call((o) => this.games.abortGame({ gameId }, o), 0)).summary, "summary");
  }

  /** Play again after `gameId`: offer a rematch, or accept the one another player offered, and
   * wait on the event stream until every player has accepted; resolves with the new game's id.
   * Rejects with REMATCH_DECLINED (or _EXPIRED, _WITHDRAWN) when it will not happen, and with
   * REMATCH_TIMEOUT after `timeoutMs` (withdrawing this player's acceptance first). */
  async rematch(gameId: string, opts: RematchOptions = {}): Promise<string> {
    const call = linkedAbort(opts.signal);
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new TafelError("REMATCH_TIMEOUT", "nobody answered the rematch offer in time", Code.DeadlineExceeded)), opts.timeoutMs ?? 120_000);
    });
    const outcome = (offer: Offer): string | undefined => {
      if (offer.gameId !== gameId || offer.kind !== OfferKind.REMATCH || offer.status === OfferStatus.PENDING) return undefined;
      if (offer.status === OfferStatus.ACCEPTED) return offer.newGameId;
      const how = OfferStatus[offer.status] ?? "ENDED";
      throw new TafelError(`REMATCH_${how}`, `the rematch offer was ${how.toLowerCase()}`, Code.FailedPrecondition);
    };
    // The stream is live before the offer is made, so its answer cannot slip past.
    let live = (): void => undefined;
    const ready = new Promise<void>((resolve) => (live = resolve));
    const answered = (async (): Promise<string> => {
      for await (const event of this.watchMyEvents({ signal: call.signal, onReady: () => live() })) {
        const newGame = event.kind.case === "offer" ? outcome(event.kind.value) : undefined;
        if (newGame) return newGame;
      }
      throw new TafelError("REMATCH_ENDED", "the event stream ended", Code.Unavailable);
    })();
    for (const p of [timeout, answered]) p.catch(() => undefined); // raced below; never unhandled
    try {
      await Promise.race([ready, answered, timeout]);
      let offer: Offer;
      try {
        offer = await this.makeOffer(gameId, OfferKind.REMATCH, { seat: opts.seat });
      } catch (error) {
        if (!(error instanceof TafelError && error.reason === "OFFER_PENDING")) throw error;
        offer = await this.answerOffer(gameId, OfferKind.REMATCH, true, { seat: opts.seat }); // theirs: accept it
      }
      return outcome(offer) || (await Promise.race([answered, timeout]));
    } catch (error) {
      // Given up (timed out, or the caller left): take this player's yes back, so nobody is led
      // into a game without them. An offer already settled answers NO_OFFER, which is fine.
      if (!(error instanceof TafelError && error.reason.startsWith("REMATCH_") && error.reason !== "REMATCH_TIMEOUT")) {
        await this.answerOffer(gameId, OfferKind.REMATCH, false, { seat: opts.seat }).catch(() => undefined);
      }
      throw error instanceof TafelError ? error : fromCallError(error);
    } finally {
      clearTimeout(timer);
      call.release();
    }
  }

}

function required<T>(value: T | undefined, what: string): T {
  if (value === undefined) {
    throw new TafelError("INCOMPLETE_ANSWER", `the server answered without a ${what}`);
  }
  return value;
}
