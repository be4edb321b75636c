// One transport over several gateways. Gateways are interchangeable (any of them serves any call
// and any game), so calls go to the current one until it answers UNAVAILABLE (cannot be reached:
// stopped, killed, or draining for a restart), and from then on to the next. The caller's own
// retries (unary calls, resumed watches, a reopened Play stream) then land on a live gateway.

import { Code, ConnectError, type Transport } from "@connectrpc/connect";

type Closable = Transport & { close(): void };

export function failover(transports: Closable[]): Closable {
  let current = 0;
  const moveOnFrom = (index: number, error: unknown): void => {
    // Only the first failure of a gateway moves on (concurrent calls fail together).
    if (ConnectError.from(error).code === Code.Unavailable && current === index) {
      current = (index + 1) % transports.length;
    }
  };
  async function* watched<O>(messages: AsyncIterable<O>, index: number): AsyncIterable<O> {
    try {
      yield* messages;
    } catch (error) {
      moveOnFrom(index, error);
      throw error;
    }
  }
  return {
    async unary(method, signal, timeoutMs, header, input, contextValues) {
      const index = current;
      try {
        return await transports[index]!.unary(method, signal, timeoutMs, header, input, contextValues);
      } catch (error) {
        moveOnFrom(index, error);
        throw error;
      }
    },
    async stream(method, signal, timeoutMs, header, input, contextValues) {
      const index = current;
      try {
        const response = await transports[index]!.stream(method, signal, timeoutMs, header, input, contextValues);
        return { ...response, message: watched(response.message, index) };
      } catch (error) {
        moveOnFrom(index, error);
        throw error;
      }
    },
    close: () => transports.forEach((transport) => transport.close()),
  };
}
