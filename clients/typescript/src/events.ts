// Event ids are "<version>-<index>" (GameEvent.event_id, AccountEvent.event_id) and chat message
// ids "<ms>-<n>": ordered numerically, not as strings.

import type { AccountEvent } from "./gen/tafel/play/v1/challenges_pb.js";
import type { PresenceChanged } from "./gen/tafel/play/v1/social_pb.js";

export function eventPosition(eventId: string): [number, number] {
  const [version = "0", index = "0"] = eventId.split("-");
  return [Number(version), Number(index || 0)];
}

/** Whether `eventId` comes after `last` in its game's event stream. */
export function isAfter(eventId: string, last: string): boolean {
  const [v, i] = eventPosition(eventId);
  const [lv, li] = eventPosition(last);
  return v > lv || (v === lv && i > li);
}

/** A followed player's new presence (online, playing which game, last seen) from an account
 * event, or undefined for any other event. */
export function presenceOf(event: AccountEvent): PresenceChanged | undefined {
  return event.kind.case === "presence" ? event.kind.value : undefined;
}
