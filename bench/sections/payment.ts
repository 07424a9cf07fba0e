// Payment: POST /obv/transactions with a link reference, as the merchant's server pays an order. Each
// sample is a whole link first, untimed: the link session (in the proxy's process, as a merchant's Node
// server makes it), the element's start (POST /obv/verifications), the sandbox bank's sign-in (which
// sends the provider's signed notification to the proxy), the outcome read back (POST /obv/sessions/lookup,
// as the element's polling fallback does) for its link reference. Every sample's link is made first; then
// only the payments are timed: the proxy resolves the reference in its session store, claims the order,
// calls endpoint 4 with the stored accountToken, records the payment. Beside it, in the same run: endpoint
// 4 called directly with a bearer and an accountToken the sandbox issued (what a merchant without obv-link
// would send), alternating. The payments run apart from the links so that the CPU the proxy's process
// used over them (and its profile, BENCH_CPU_PROF=1) is the payments' alone.
import { expectStatus, SequentialClient } from '../lib/http-client.ts';
import { BENCH_MERCHANT_API_KEY } from '../lib/obv-proxy-options.ts';
import type { BenchOptions } from '../lib/options.ts';
import { formatDeltaMs, formatMs, type SectionResult } from '../lib/report.ts';
import { ProxiedProvider } from '../lib/stack.ts';
import { nowMs, summarize } from '../lib/stats.ts';
import type { BenchStorage } from '../lib/storage.ts';
import { fetchToken, purchase } from '../lib/upstream.ts';

const TRANSACTION_PATH = '/transaction/v4/interactive';
const OUTCOME_TIMEOUT_MS = 10_000;

/** Start, bank sign-in, outcome: the link reference the element would hand the page for `linkToken`. */
async function linkOnce(proxy: SequentialClient, bank: SequentialClient, linkToken: string): Promise<string> {
  const started = await proxy.request('POST', '/obv/verifications', { linkToken }, { origin: proxy.origin });
  expectStatus(started, 201, 'start');
  const { sessionId, consumerUrl } = JSON.parse(started.body) as { sessionId: string; consumerUrl: string };
  const consumer = new URL(consumerUrl);
  const form = new URLSearchParams({
    t: consumer.searchParams.get('t') ?? '',
    username: 'user_good',
    password: 'pass_good',
  }).toString();
  const signedIn = await bank.request('POST', consumer.pathname, form, {
    'content-type': 'application/x-www-form-urlencoded',
  });
  expectStatus(signedIn, 303, 'bank sign-in');
  // The provider's notification is on its way (sent as the bank answers): read the session until it arrived.
  const deadline = Date.now() + OUTCOME_TIMEOUT_MS;
  for (;;) {
    const lookup = await proxy.request('POST', '/obv/sessions/lookup', { sessionId }, { origin: proxy.origin });
    expectStatus(lookup, 200, 'session lookup');
    const outcome = (JSON.parse(lookup.body) as { outcome?: { status: string; linkRef?: string } }).outcome;
    if (outcome?.status === 'success' && outcome.linkRef) return outcome.linkRef;
    if (outcome) throw new Error(`the link ended ${outcome.status}: ${lookup.body.slice(0, 300)}`);
    if (Date.now() > deadline) throw new Error(`no outcome within ${OUTCOME_TIMEOUT_MS} ms of the bank's sign-in`);
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}

/** POST /obv/transactions for the `index`th purchase: what the merchant's server sends. */
async function payThroughProxy(proxy: SequentialClient, linkRef: string, index: number): Promise<void> {
  const { merchantUserId, merchantTransactionId, amount, currency } = purchase(index);
  const response = await proxy.request(
    'POST',
    '/obv/transactions',
    { linkRef, merchantUserId, merchantTransactionId, amount, currency },
    {
      authorization: `Bearer ${BENCH_MERCHANT_API_KEY}`,
    },
  );
  expectStatus(response, 201, 'POST /obv/transactions');
}

/** Endpoint 4 directly, for the same purchase, with an accountToken the sandbox issued. */
async function payDirect(
  provider: SequentialClient,
  token: string,
  accountToken: string,
  index: number,
): Promise<void> {
  const { merchantUserId, merchantTransactionId, amount, currency } = purchase(index);
  const response = await provider.request(
    'POST',
    TRANSACTION_PATH,
    {
      accountToken,
      amount,
      currency,
      product: 'ACH',
      originatorIp: '127.0.0.1',
      merchant: {
        merchantId: 'bench-merchant',
        merchantUserId,
        merchantTransactionId: `direct-${merchantTransactionId}`,
      },
    },
    { authorization: `Bearer ${token}`, 'x-pgw-app-id': 'sandbox-app', 'x-pgw-client-id': 'sandbox_client' },
  );
  expectStatus(response, 201, 'endpoint 4 direct');
}

export async function measurePayment({ sizes }: BenchOptions, storage: BenchStorage): Promise<SectionResult> {
  const stack = await ProxiedProvider.start({ ...storage.env, BENCH_PAYMENTS: '1' });
  const proxy = new SequentialClient(stack.proxy.address.origin);
  const bank = new SequentialClient(stack.providerUrl);
  const provider = new SequentialClient(stack.providerUrl);
  const samples = { proxy: [] as number[], direct: [] as number[] };
  let store = '';
  let cpuMs = 0;
  try {
    store = (await stack.proxy.storage()).store;
    const warmup = Math.min(sizes.warmup, 50);
    const total = warmup + sizes.paySamples;
    const linkTokens = await stack.proxy.prepareLinkSessions(total);
    const token = await fetchToken(provider);
    const linkDeadline = Date.now() + sizes.loopTimeoutMs;
    const linkRefs: string[] = [];
    for (let index = 0; index < total && Date.now() < linkDeadline; index++)
      linkRefs.push(await linkOnce(proxy, bank, linkTokens[index]!));
    const accountToken = (await stack.provider.call<string[]>('accountTokens'))[0];
    if (!accountToken) throw new Error('the sandbox issued no accountToken');
    const deadline = Date.now() + sizes.loopTimeoutMs;
    let cpuBefore = 0;
    let index = 0;
    for (; index < linkRefs.length && Date.now() < deadline; index++) {
      if (index === warmup) {
        await stack.proxy.profileStart();
        cpuBefore = await stack.proxy.cpuTime();
      }
      const linkRef = linkRefs[index]!;
      // Alternate which goes first, so a noisy neighbour hits both alike.
      const calls = [
        ['proxy', () => payThroughProxy(proxy, linkRef, index)],
        ['direct', () => payDirect(provider, token, accountToken, index)],
      ] as const;
      for (const [path, call] of index % 2 === 0 ? calls : [...calls].reverse()) {
        const started = nowMs();
        await call();
        if (index >= warmup) samples[path].push(nowMs() - started);
      }
    }
    if (index > warmup) {
      cpuMs = (await stack.proxy.cpuTime()) - cpuBefore;
      await stack.proxy.profileStop(`pay-obv-${storage.name}`);
    }
  } finally {
    proxy.close();
    bank.close();
    provider.close();
    await stack.close();
  }
  const obv = summarize(samples.proxy);
  const direct = summarize(samples.direct);
  const row = (which: 'p50' | 'p99') => ({
    metric: `pay ${which}, POST /obv/transactions with a link reference`,
    value: formatMs(obv[which]),
    baseline: `${formatMs(direct[which])} endpoint 4 direct`,
    comparison: `${formatDeltaMs(obv[which] - direct[which])} added`,
    aim: '',
  });
  const cpuPerPaymentUs = (cpuMs * 1000) / Math.max(samples.proxy.length, 1);
  return {
    section: 'pay',
    rows: [
      row('p50'),
      row('p99'),
      {
        // Independent of the load on the machine: what one payment costs the proxy's single thread.
        metric: 'server CPU per payment',
        value: `${Math.round(cpuPerPaymentUs)} µs`,
        baseline: '',
        comparison: '',
        aim: '',
      },
    ],
    data: {
      store,
      proxy: obv,
      direct,
      addedP50Ms: obv.p50 - direct.p50,
      addedP99Ms: obv.p99 - direct.p99,
      cpuPerPaymentUs,
    },
  };
}
