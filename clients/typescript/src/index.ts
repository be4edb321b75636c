// @tafel/sdk: the browser-safe core (no Node-only imports here; native gRPC is in ./node.js).

export { DAYS_PER_MOVE, TafelClient } from "./client.js";
export type {
  ChallengeOptions,
  ChatChannelRef,
  ChatWatchOptions,
  ClientOptions,
  EventStreamOptions,
  ExportedFile,
  MatchOptions,
  NoticeSettingsChange,
  RematchOptions,
  ReportOptions,
  RoomOptions,
  SettingsChange,
  TournamentSettings,
  WatchOptions,
} from "./client.js";
export { Code, ConnectError } from "@connectrpc/connect";
export type { Interceptor } from "@connectrpc/connect";
export * from "./errors.js";
export { eventPosition, isAfter, presenceOf } from "./events.js";
export { playerName } from "./names.js";
export { moves, options, placeOnCell, placeOnJoker, type GameName, type MoveOptions } from "./moves.js";
export { PlayStream, type PlayConnection, type PlayStreamOptions } from "./play-stream.js";
export { RequestIds } from "./request-ids.js";
export { sleep } from "./resume.js";
export { createWebTransport, type WebProtocol, type WebTransportOptions } from "./transports.js";

// The generated messages, by package, for anything the helpers above do not cover.
export * as admin from "./gen/tafel/admin/v1/admin_pb.js";
export * as challenges from "./gen/tafel/play/v1/challenges_pb.js";
export * as coloursquare from "./gen/tafel/coloursquare/v1/coloursquare_pb.js";
export * as connect4 from "./gen/tafel/connect4/v1/connect4_pb.js";
export * as games from "./gen/tafel/games/v1/games_pb.js";
export * as notices from "./gen/tafel/play/v1/notices_pb.js";
export * as play from "./gen/tafel/play/v1/play_pb.js";
export * as plus4 from "./gen/tafel/plus4/v1/plus4_pb.js";
export * as safety from "./gen/tafel/play/v1/safety_pb.js";
export * as social from "./gen/tafel/play/v1/social_pb.js";
export * as tournaments from "./gen/tafel/play/v1/tournaments_pb.js";
