// The servers under test, each in its own child process: obv-link's proxy (with its relay) and the
// bare node:http + ws baseline. Both answer the same calls, so a section drives either the same way.
import { BenchChild, PROFILING } from './rpc.ts';
import type { MemoryReading } from './memory.ts';

/** Where a server listens and which paths take notifications. */
export interface ServerAddress {
  origin: string;
  wsUrl: string;
  /** Path prefix (then the ref) of the relay measurement's notification. */
  relayPrefix: string;
  /** Whether that notification must carry a Standard Webhooks signature. */
  relaySigned: boolean;
  /** Path prefix (then the ref) of the intake measurement's notifications (always signed). */
  intakePrefix: string;
}

/** A session the server already knows: the browser subscribes with the id, the provider notifies the ref. */
export interface PreparedSession {
  sessionId: string;
  ref: string;
}

export type ServerKind = 'obv' | 'bare';

export class ServerUnderTest {
  private constructor(
    readonly kind: ServerKind,
    readonly child: BenchChild,
    readonly address: ServerAddress,
  ) {}

  static async start(kind: ServerKind, env: Record<string, string> = {}): Promise<ServerUnderTest> {
    const child = await BenchChild.spawn(kind === 'obv' ? 'obv-server.ts' : 'bare-server.ts', `${kind}-server`, {
      env,
      quiet: true,
    });
    return new ServerUnderTest(kind, child, await child.call<ServerAddress>('address'));
  }

  /** Creates `count` sessions the server will accept subscriptions and notifications for. */
  prepareSessions(count: number): Promise<PreparedSession[]> {
    return this.child.call<PreparedSession[]>('prepareSessions', { count }, 300_000);
  }

  /**
   * Makes `count` link sessions, the `index`th for `purchase(index)`, as the merchant's server does before
   * its checkout pages load; their link tokens in that order.
   */
  prepareLinkSessions(count: number): Promise<string[]> {
    return this.child.call<string[]>('prepareLinkSessions', { count }, 300_000);
  }

  /** obv-link's proxy: the storage asked for and the store it actually used (see obv-server.ts). */
  storage(): Promise<{ asked: string; store: string }> {
    return this.child.call<{ asked: string; store: string }>('storage');
  }

  /**
   * obv-link's proxy on SQLite: the WAL fsyncs run and the acknowledgements that waited for one, since it
   * started (storage/sqlite/wal-sync.ts); null on the other storage backends and the bare server.
   */
  syncStats(): Promise<{ fsyncs: number; acknowledgements: number } | null> {
    return this.child.call<{ fsyncs: number; acknowledgements: number } | null>('syncStats');
  }

  memory(): Promise<MemoryReading> {
    return this.child.call<MemoryReading>('memory');
  }

  /** CPU milliseconds the server process has used so far. */
  cpuTime(): Promise<number> {
    return this.child.call<number>('cpuTime');
  }

  /** With BENCH_CPU_PROF=1, starts profiling the server (the measured phase begins). */
  async profileStart(): Promise<void> {
    if (PROFILING) await this.child.call('profileStart');
  }

  /** With BENCH_CPU_PROF=1, writes the profile as `{name}.cpuprofile` and says where. */
  async profileStop(name: string): Promise<void> {
    if (PROFILING) console.log(`bench: CPU profile ${await this.child.call<string>('profileStop', { name })}`);
  }

  close(): Promise<void> {
    return this.child.close();
  }
}
