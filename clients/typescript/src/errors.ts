// Exceptions the SDK throws: one class per status the platform uses, each carrying the server's
// machine reason (google.rpc.ErrorInfo.reason, e.g. COLUMN_FULL) and readable message. The same
// classes whatever the transport: native gRPC, gRPC-Web and Connect all carry the same details.

import { Code, ConnectError } from "@connectrpc/connect";
import { ErrorInfoSchema } from "./gen/google/rpc/error_details_pb.js";

/** A call the platform refused. `reason` is a stable code such as COLUMN_FULL. */
export class TafelError extends Error {
  readonly reason: string;
  readonly code: Code;
  /** The server's readable message (without the reason prefix). */
  readonly detail: string;

  constructor(reason: string, detail: string, code: Code = Code.Unknown) {
    super(reason ? `${reason}: ${detail}` : detail);
    this.name = new.target.name;
    this.reason = reason;
    this.detail = detail;
    this.code = code;
  }
}

export class InvalidArgument extends TafelError {}
export class NotFound extends TafelError {}
export class AlreadyExists extends TafelError {}
export class PermissionDenied extends TafelError {}
export class Unauthenticated extends TafelError {}
/** FAILED_PRECONDITION: not your turn, a full column, the game is over, ... */
export class IllegalMove extends TafelError {}
/** ABORTED: the game moved on since the version the move was made against. */
export class VersionConflict extends TafelError {}
export class RateLimited extends TafelError {}
/** UNAVAILABLE: a dependency is down; retrying later is safe (requests are idempotent). */
export class Unavailable extends TafelError {}
export class DeadlineExceeded extends TafelError {}

type ErrorClass = new (reason: string, detail: string, code: Code) => TafelError;

const BY_CODE: ReadonlyMap<Code, ErrorClass> = new Map<Code, ErrorClass>([
  [Code.InvalidArgument, InvalidArgument],
  [Code.NotFound, NotFound],
  [Code.AlreadyExists, AlreadyExists],
  [Code.PermissionDenied, PermissionDenied],
  [Code.Unauthenticated, Unauthenticated],
  [Code.FailedPrecondition, IllegalMove],
  [Code.Aborted, VersionConflict],
  [Code.ResourceExhausted, RateLimited],
  [Code.Unavailable, Unavailable],
  [Code.DeadlineExceeded, DeadlineExceeded],
]);

export function errorFor(code: Code, reason: string, detail: string): TafelError {
  const cls = BY_CODE.get(code) ?? TafelError;
  return new cls(reason, detail, code);
}

/** The typed error for anything a call threw (a ConnectError, a network failure, ...). */
export function fromCallError(error: unknown): TafelError {
  if (error instanceof TafelError) {
    return error;
  }
  const connectError = ConnectError.from(error);
  const info = connectError.findDetails(ErrorInfoSchema)[0];
  const reason = info?.reason || Code[connectError.code].replace(/([a-z])([A-Z])/g, "$1_$2").toUpperCase();
  return errorFor(connectError.code, reason, connectError.rawMessage);
}
