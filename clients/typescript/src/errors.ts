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
  /** ErrorInfo's metadata: facts a client acts on, e.g. "until" (RFC 3339) of ACCOUNT_SUSPENDED. */
  readonly metadata: Readonly<Record<string, string>>;

  constructor(reason: string, detail: string, code: Code = Code.Unknown, metadata: Record<string, string> = {}) {
    super(reason ? `${reason}: ${detail}` : detail);
    this.name = new.target.name;
    this.reason = reason;
    this.detail = detail;
    this.code = code;
    this.metadata = metadata;
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
/** TLS refused: the server's certificate does not verify (an unknown CA, another name, expired).
 * Not retried: the same certificate fails the same way. Fix the trust: give the CA (`ca`) or the
 * name it was issued for (`serverName`) to the Node transport, or trust it in the system store. */
export class CertificateError extends TafelError {}

/** OpenSSL's verification codes as Node reports them (error.code), and Node's name check. */
const CERTIFICATE_CODES: ReadonlyMap<string, string> = new Map([
  ["ERR_TLS_CERT_ALTNAME_INVALID", "CERTIFICATE_NAME_MISMATCH"],
  ["HOSTNAME_MISMATCH", "CERTIFICATE_NAME_MISMATCH"],
  ["CERT_HAS_EXPIRED", "CERTIFICATE_EXPIRED"],
  ["CERT_NOT_YET_VALID", "CERTIFICATE_EXPIRED"],
  ["DEPTH_ZERO_SELF_SIGNED_CERT", "CERTIFICATE_UNTRUSTED"],
  ["SELF_SIGNED_CERT_IN_CHAIN", "CERTIFICATE_UNTRUSTED"],
  ["UNABLE_TO_VERIFY_LEAF_SIGNATURE", "CERTIFICATE_UNTRUSTED"],
  ["UNABLE_TO_GET_ISSUER_CERT", "CERTIFICATE_UNTRUSTED"],
  ["UNABLE_TO_GET_ISSUER_CERT_LOCALLY", "CERTIFICATE_UNTRUSTED"],
  ["CERT_SIGNATURE_FAILURE", "CERTIFICATE_UNTRUSTED"],
  ["CERT_UNTRUSTED", "CERTIFICATE_UNTRUSTED"],
  ["CERT_REJECTED", "CERTIFICATE_UNTRUSTED"],
  ["CERT_REVOKED", "CERTIFICATE_UNTRUSTED"],
  ["INVALID_CA", "CERTIFICATE_UNTRUSTED"],
  ["INVALID_PURPOSE", "CERTIFICATE_UNTRUSTED"],
]);

/** The TLS verification failure somewhere in `error`'s cause chain, if that is what it is. */
export function certificateError(error: unknown): CertificateError | undefined {
  const seen = new Set<unknown>();
  for (let cause = error; cause instanceof Error && !seen.has(cause); cause = (cause as { cause?: unknown }).cause) {
    seen.add(cause);
    if (cause instanceof CertificateError) return cause;
    const code = (cause as { code?: unknown }).code;
    const reason = typeof code === "string" ? CERTIFICATE_CODES.get(code) : undefined;
    if (reason !== undefined) {
      const hint =
        reason === "CERTIFICATE_NAME_MISMATCH"
          ? "connect by the name on the certificate or pass that name as serverName"
          : "pass the CA that signed it as ca, or trust it in the system store";
      return new CertificateError(reason, `the server's TLS certificate was refused (${code}: ${cause.message}); ${hint}`, Code.Unavailable);
    }
  }
  return undefined;
}

type ErrorClass = new (reason: string, detail: string, code: Code, metadata?: Record<string, string>) => TafelError;

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

export function errorFor(code: Code, reason: string, detail: string, metadata: Record<string, string> = {}): TafelError {
  const cls = BY_CODE.get(code) ?? TafelError;
  return new cls(reason, detail, code, metadata);
}

/** The typed error for anything a call threw (a ConnectError, a network failure, ...). */
export function fromCallError(error: unknown): TafelError {
  if (error instanceof TafelError) {
    return error;
  }
  const refused = certificateError(error);
  if (refused !== undefined) {
    return refused;
  }
  const connectError = ConnectError.from(error);
  const info = connectError.findDetails(ErrorInfoSchema)[0];
  const reason = info?.reason || Code[connectError.code].replace(/([a-z])([A-Z])/g, "$1_$2").toUpperCase();
  return errorFor(connectError.code, reason, connectError.rawMessage, { ...(info?.metadata ?? {}) });
}

/** Why and until when the account may not play: a refusal with reason ACCOUNT_SUSPENDED (`until`
 * set) or ACCOUNT_BANNED (`until` undefined: until a moderator lifts it); undefined for any other
 * error. `why` is the moderator's reason: ErrorInfo's "reason" metadata when the server sends it,
 * else its message without the leading "this account is suspended until …:" (show `until` in the
 * reader's own words and time zone instead of the machine-readable time). */
export function accountSanction(error: unknown): { banned: boolean; why: string; until: Date | undefined } | undefined {
  if (!(error instanceof TafelError) || (error.reason !== "ACCOUNT_SUSPENDED" && error.reason !== "ACCOUNT_BANNED")) {
    return undefined;
  }
  const text = error.metadata["until"];
  const until = text ? new Date(text) : undefined;
  const bare = text ? error.detail.replace(` until ${text}`, "") : error.detail;
  const why = error.metadata["reason"] ?? bare.replace(/^this account is (banned|suspended):\s*/i, "");
  return { banned: error.reason === "ACCOUNT_BANNED", why, until: until && !Number.isNaN(until.getTime()) ? until : undefined };
}
