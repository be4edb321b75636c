/** A protobuf Timestamp as epoch milliseconds (undefined when unset). */
export function timestampMs(t: { seconds: bigint; nanos: number } | undefined): number | undefined {
  return t === undefined ? undefined : Number(t.seconds) * 1000 + t.nanos / 1e6;
}
