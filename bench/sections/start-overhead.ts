// 2. Start overhead: POST /obv/verifications through the proxy (token already cached) beside calling the
// sandbox's endpoint 2 directly with a bearer. The difference is what the proxy adds: one more hop,
// validation, reading the link session, the upstream call's client side, the session write, the
// response. A bare node:http forwarder (token cached, purchases in a Map by link token, no validation,
// no store, no logs) is timed too: the least any proxy adds. The link sessions are made before the
// timing, as a merchant's server makes each one before its checkout page loads.
// Calls rotate between the three paths so a noisy neighbour on the machine hits all alike. Beside the
// wall-clock figures, the CPU the proxy's and the forwarder's processes used over the timed calls, per
// start: what a start costs the server's thread, which another process's load does not blur.
import { SequentialClient } from '../lib/http-client.ts';
import type { BenchOptions } from '../lib/options.ts';
import { formatDeltaMs, formatMs, type SectionResult } from '../lib/report.ts';
import { ProxiedProvider } from '../lib/stack.ts';
import { nowMs, summarize } from '../lib/stats.ts';
import type { BenchStorage } from '../lib/storage.ts';
import { fetchToken, postVerification, purchase, startThrough, verificationRequest } from '../lib/upstream.ts';

const AIM_ADDED_P50_MS = 1;

type Path = 'direct' | 'forwarder' | 'proxy';

export async function measureStartOverhead({ sizes }: BenchOptions, storage: BenchStorage): Promise<SectionResult> {
  const stack = await ProxiedProvider.start(storage.env);
  const provider = new SequentialClient(stack.providerUrl);
  const proxy = new SequentialClient(stack.proxy.address.origin);
  const forwarder = new SequentialClient(stack.forwarder.address.origin);
  const samples: Record<Path, number[]> = { direct: [], forwarder: [], proxy: [] };
  const cpuMs = { proxy: 0, forwarder: 0 };
  let store = '';
  try {
    store = (await stack.proxy.storage()).store;
    const token = await fetchToken(provider);
    const callbackBase = `${stack.proxy.address.origin}/obv`;
    const total = sizes.warmup + sizes.startSamples;
    const linkTokens = {
      proxy: await stack.proxy.prepareLinkSessions(total),
      forwarder: await stack.forwarder.prepareLinkSessions(total),
    };
    const calls: Record<Path, (index: number) => Promise<unknown>> = {
      direct: (index) =>
        postVerification(provider, token, verificationRequest(purchase(index), callbackBase, `direct-${index}`)),
      forwarder: (index) => startThrough(forwarder, '/verifications', linkTokens.forwarder[index]!),
      // The first proxied call fetches the token; from then on it is cached, as the figure requires.
      proxy: (index) => startThrough(proxy, '/obv/verifications', linkTokens.proxy[index]!),
    };
    const paths = Object.keys(calls) as Path[];
    const deadline = Date.now() + sizes.loopTimeoutMs;
    const cpuAt = async () => ({ proxy: await stack.proxy.cpuTime(), forwarder: await stack.forwarder.cpuTime() });
    let cpuBefore = { proxy: 0, forwarder: 0 };
    for (let index = 0; index < total && Date.now() < deadline; index++) {
      if (index === sizes.warmup) {
        await stack.proxy.profileStart();
        cpuBefore = await cpuAt();
      }
      for (let turn = 0; turn < paths.length; turn++) {
        const path = paths[(index + turn) % paths.length] as Path;
        const started = nowMs();
        await calls[path](index);
        if (index >= sizes.warmup) samples[path].push(nowMs() - started);
      }
    }
    const cpuAfter = await cpuAt();
    cpuMs.proxy = cpuAfter.proxy - cpuBefore.proxy;
    cpuMs.forwarder = cpuAfter.forwarder - cpuBefore.forwarder;
    await stack.proxy.profileStop(`start-obv-${storage.name}`);
  } finally {
    provider.close();
    proxy.close();
    forwarder.close();
    await stack.close();
  }
  const obv = summarize(samples.proxy);
  const bare = summarize(samples.direct);
  const floor = summarize(samples.forwarder);
  const cpuPerStartUs = (cpuMs.proxy * 1000) / Math.max(samples.proxy.length, 1);
  const forwarderCpuPerStartUs = (cpuMs.forwarder * 1000) / Math.max(samples.forwarder.length, 1);
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
      {
        metric: 'start p50, over a bare forwarder',
        value: formatMs(obv.p50),
        baseline: `${formatMs(floor.p50)} bare node:http forwarder`,
        comparison: `${formatDeltaMs(obv.p50 - floor.p50)} added`,
        aim: '',
      },
      {
        // Independent of the load on the machine: what one start costs the server's single thread.
        metric: 'server CPU per start',
        value: `${Math.round(cpuPerStartUs)} µs`,
        baseline: `${Math.round(forwarderCpuPerStartUs)} µs bare node:http forwarder`,
        comparison: `+${Math.round(cpuPerStartUs - forwarderCpuPerStartUs)} µs`,
        aim: '',
      },
    ],
    data: {
      store,
      proxy: obv,
      direct: bare,
      bareForwarder: floor,
      addedP50Ms: obv.p50 - bare.p50,
      addedP99Ms: obv.p99 - bare.p99,
      bareForwarderAddedP50Ms: floor.p50 - bare.p50,
      aimAddedP50Ms: AIM_ADDED_P50_MS,
      cpuPerStartUs,
      forwarderCpuPerStartUs,
    },
  };
}
