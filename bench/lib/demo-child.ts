// Parent side of children/demo-server.ts: the demo checkout in its own process, and the clock of the
// sandbox's notifications in it.
import { BenchChild } from './rpc.ts';

/** When the sandbox's notification of a sample left, and its bank's redirect (children/demo-server.ts notes them). */
export interface NotificationClock {
  reset(): Promise<void>;
  /** Wall-clock time of the first notification since the last reset, undefined if none left. */
  firstSentAt(): Promise<number | undefined>;
  /** Wall-clock time the sandbox wrote its first 303 (the bank's redirect) since the last reset, undefined if none. */
  firstRedirectAt(): Promise<number | undefined>;
}

export interface DemoChild extends NotificationClock {
  readonly url: string;
  close(): Promise<void>;
}

/** Starts the demo in a child process; `proxyOptions` are spread into the proxy's options. */
export async function startDemoChild(proxyOptions: Readonly<Record<string, unknown>> = {}): Promise<DemoChild> {
  const child = await BenchChild.spawn('demo-server.ts', 'demo', {
    env: { BENCH_DEMO_PROXY: JSON.stringify(proxyOptions) },
    quiet: true,
  });
  const url = await child.call<string>('url');
  return {
    url,
    reset: () => child.call<void>('resetNotifications'),
    firstSentAt: async () => (await child.call<number | null>('firstNotificationAt')) ?? undefined,
    firstRedirectAt: async () => (await child.call<number | null>('firstRedirectAt')) ?? undefined,
    close: () => child.close(),
  };
}
