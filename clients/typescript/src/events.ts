// Event ids are "<version>-<index>" (GameEvent.event_id): ordered numerically, not as strings.

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
