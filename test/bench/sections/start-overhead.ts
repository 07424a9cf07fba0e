// 2. Start overhead: POST /obv/verifications through the proxy (token already cached) beside calling the
// sandbox's endpoint 2 directly with a bearer. The difference is what the proxy adds: validation,
// the upstream call's client side, the session write, the response. Calls alternate between the two
// paths so a noisy neighbour on the machine hits both alike.
import { SequentialClient } from '../lib/http-client.ts';
import type { BenchOptions } from '../lib/options.ts';
import { formatDeltaMs, formatMs, type SectionResult } from '../lib/report.ts';
import { ProxiedProvider } from '../lib/stack.ts';
import { nowMs, summarize } from '../lib/stats.ts';
import { fetchToken, startThroughProxy, startVerificationDirectly } from '../lib/upstream.ts';

const AIM_ADDED_P50_MS = 1;

async function timed(call: () => Promise<void>): Promise<number> {
  const started = nowMs();
  await call();
  return nowMs() - started;
}

export async function measureStartOverhead({ sizes }: BenchOptions): Promise<SectionResult> {
  const stack = await ProxiedProvider.start();
  const provider = new SequentialClient(stack.providerUrl);
  const proxy = new SequentialClient(stack.proxy.address.origin);
  const direct: number[] = [];
  const proxied: number[] = [];
  try {
    const token = await fetchToken(provider);
    const callbackBase = `${stack.proxy.address.origin}/obv`;
    const deadline = Date.now() + 5 * 60_000;
    const total = sizes.warmup + sizes.startSamples;
    for (let index = 0; index < total && Date.now() < deadline; index++) {
      const record = index >= sizes.warmup;
      const viaDirect = (): Promise<number> => timed(() => startVerificationDirectly(provider, token, index, callbackBase));
      const viaProxy = (): Promise<number> => timed(() => startThroughProxy(proxy, index));
      // The first proxied call fetches the token; from then on it is cached, as the figure requires.
      const [first, second] = index % 2 === 0 ? [await viaDirect(), await viaProxy()] : [await viaProxy(), await viaDirect()];
      if (!record) continue;
      direct.push(index % 2 === 0 ? first : second);
      proxied.push(index % 2 === 0 ? second : first);
    }
  } finally {
    provider.close();
    proxy.close();
    await stack.close();
  }
  const obv = summarize(proxied);
  const bare = summarize(direct);
  return {
    section: 'start',
    rows: [
      {
        metric: 'start p50, POST /obv/verifications',
        value: formatMs(obv.p50),
        baseline: `${formatMs(bare.p50)} endpoint 2 direct`,
        comparison: `${formatDeltaMs(obv.p50 - bare.p50)} added`,
        aim: `added < ${AIM_ADDED_P50_MS} ms`,
        met: obv.p50 - bare.p50 < AIM_ADDED_P50_MS,
      },
      {
        metric: 'start p99, POST /obv/verifications',
        value: formatMs(obv.p99),
        baseline: `${formatMs(bare.p99)} endpoint 2 direct`,
        comparison: `${formatDeltaMs(obv.p99 - bare.p99)} added`,
        aim: '',
      },
    ],
    data: { proxy: obv, direct: bare, addedP50Ms: obv.p50 - bare.p50, addedP99Ms: obv.p99 - bare.p99, aimAddedP50Ms: AIM_ADDED_P50_MS },
  };
}
