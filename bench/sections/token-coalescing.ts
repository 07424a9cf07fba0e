// 6. Token requests made by N concurrent starts on a cold cache: the proxy must ask the provider once.
// The baseline is the same N starts made the naive way (each fetching its own token), counted by the
// same provider's stats in the same run.
import { SequentialClient } from '../lib/http-client.ts';
import type { BenchOptions } from '../lib/options.ts';
import type { SectionResult } from '../lib/report.ts';
import { ProxiedProvider } from '../lib/stack.ts';
import { fetchToken, postVerification, purchase, startThrough, verificationRequest } from '../lib/upstream.ts';

export async function measureTokenCoalescing({ sizes }: BenchOptions): Promise<SectionResult> {
  const count = sizes.coldStarts;
  const stack = await ProxiedProvider.start();
  const proxy = new SequentialClient(stack.proxy.address.origin, count);
  const provider = new SequentialClient(stack.providerUrl, count);
  try {
    // The merchant's server made each checkout's link session beforehand (no provider call).
    const linkTokens = await stack.proxy.prepareLinkSessions(count);
    const before = await stack.stats();
    await Promise.all(linkTokens.map((linkToken) => startThrough(proxy, '/obv/verifications', linkToken)));
    const afterProxy = await stack.stats();
    const callbackBase = `${stack.proxy.address.origin}/obv`;
    await Promise.all(
      Array.from({ length: count }, async (_, index) =>
        postVerification(
          provider,
          await fetchToken(provider),
          verificationRequest(purchase(index), callbackBase, `naive-${index}`),
        ),
      ),
    );
    const afterNaive = await stack.stats();
    const viaProxy = afterProxy.tokenRequests - before.tokenRequests;
    const naive = afterNaive.tokenRequests - afterProxy.tokenRequests;
    return {
      section: 'tokens',
      rows: [
        {
          metric: `token requests, ${count} concurrent cold starts`,
          value: String(viaProxy),
          baseline: `${naive} token per start`,
          comparison: `${naive - viaProxy} saved`,
          aim: '= 1',
          met: viaProxy === 1,
        },
      ],
      data: {
        concurrentStarts: count,
        tokenRequestsViaProxy: viaProxy,
        tokenRequestsNaive: naive,
        verificationRequestsViaProxy: afterProxy.verificationRequests - before.verificationRequests,
      },
    };
  } finally {
    proxy.close();
    provider.close();
    await stack.close();
  }
}
