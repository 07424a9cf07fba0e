// Idle subscribed WebSocket clients spread over as many child processes as the open-file limit needs.
import { socketsPerProcess } from './limits.ts';
import { BenchChild } from './rpc.ts';
import type { ServerAddress } from './servers.ts';

const HANDSHAKES_IN_FLIGHT = 64;

export class IdleSocketPool {
  readonly #children: BenchChild[] = [];
  /** Sockets open in each child. */
  readonly #counts: number[] = [];

  constructor(readonly name: string) {}

  get open(): number {
    return this.#counts.reduce((total, count) => total + count, 0);
  }

  /**
   * Opens one subscribed socket per session id (filling the last child before starting another) and
   * throws if any failed: a figure "at N sockets" must really have N.
   */
  async add(address: ServerAddress, sessionIds: readonly string[], timeoutMs: number): Promise<void> {
    const perChild = socketsPerProcess();
    let offset = 0;
    while (offset < sessionIds.length) {
      let last = this.#children.length - 1;
      if (last < 0 || (this.#counts[last] as number) >= perChild) {
        this.#children.push(
          await BenchChild.spawn('socket-clients.ts', `${this.name}-clients-${this.#children.length}`),
        );
        this.#counts.push(0);
        last++;
      }
      const child = this.#children[last] as BenchChild;
      const batch = sessionIds.slice(offset, offset + perChild - (this.#counts[last] as number));
      const result = await child.call<{ opened: number; failed: number; firstError?: string; ms: number }>(
        'open',
        {
          wsUrl: address.wsUrl,
          origin: address.origin,
          sessionIds: batch,
          concurrency: HANDSHAKES_IN_FLIGHT,
          timeoutMs,
        },
        timeoutMs + 30_000,
      );
      this.#counts[last] = (this.#counts[last] as number) + result.opened;
      if (result.failed > 0 || result.opened < batch.length) {
        throw new Error(
          `${this.name}: ${result.opened}/${batch.length} sockets subscribed; first error: ${result.firstError ?? 'time ran out'}`,
        );
      }
      offset += batch.length;
    }
  }

  async close(): Promise<void> {
    await Promise.all(this.#children.map((child) => child.close()));
    this.#children.length = 0;
    this.#counts.length = 0;
  }
}
