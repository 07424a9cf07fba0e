// The sandbox provider with obv-link's proxy in front of it, and the bare forwarder beside it (the
// least any proxy in between costs), each in its own process.
import { BenchChild } from './rpc.ts';
import { ServerUnderTest } from './servers.ts';

export interface ProviderStatsSnapshot {
  tokenRequests: number;
  verificationRequests: number;
}

export class ProxiedProvider {
  private constructor(
    readonly provider: BenchChild,
    readonly providerUrl: string,
    readonly proxy: ServerUnderTest,
    readonly forwarder: ServerUnderTest,
  ) {}

  /** `proxyEnv`: more of obv-server.ts's settings (its storage, payments). */
  static async start(proxyEnv: Record<string, string> = {}): Promise<ProxiedProvider> {
    const provider = await BenchChild.spawn('provider-server.ts', 'provider', { quiet: true });
    const providerUrl = await provider.call<string>('url');
    const proxy = await ServerUnderTest.start('obv', { ...proxyEnv, BENCH_UPSTREAM_URL: providerUrl });
    const forwarder = await ServerUnderTest.start('bare', { BENCH_UPSTREAM_URL: providerUrl });
    return new ProxiedProvider(provider, providerUrl, proxy, forwarder);
  }

  stats(): Promise<ProviderStatsSnapshot> {
    return this.provider.call<ProviderStatsSnapshot>('stats');
  }

  async close(): Promise<void> {
    await this.proxy.close();
    await this.forwarder.close();
    await this.provider.close();
  }
}
