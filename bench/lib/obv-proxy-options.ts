// The configuration of the proxy the bench measures, apart from its child process so a test can check
// that it admits every socket a full run opens.
import type { ProxyConfigInput } from '../../proxy/index.ts';
import { WEBHOOK_SECRET } from './notifications.ts';

export const BENCH_MOUNT_PATH = '/obv';

/**
 * The relay's caps lifted past what a run opens: every idle socket comes from 127.0.0.1 (the per-address
 * cap, default 64, would refuse all but 64) and a full run holds up to 20,000 at once (the per-instance
 * cap, OBV_WS_MAX_TOTAL, defaults to 10,000: the sockets past it were closed with 1013 before they
 * subscribed, which is what broke the relay and memory sections at full size).
 */
export const BENCH_SOCKET_CAP = 1_000_000;

export function benchProxyOptions(origin: string, upstreamUrl = 'http://127.0.0.1:9'): ProxyConfigInput {
  return {
    baseUrl: upstreamUrl,
    clientId: 'sandbox_client',
    clientSecret: 'sandbox_secret',
    publicUrl: origin,
    mountPath: BENCH_MOUNT_PATH,
    webhookSecret: WEBHOOK_SECRET,
    merchantId: 'bench-merchant',
    sandbox: true,
    // The bench sends thousands of starts from one address: the per-IP limit would stop it.
    rateLimit: 0,
    maxSocketsPerClient: BENCH_SOCKET_CAP,
    maxSockets: BENCH_SOCKET_CAP,
  };
}

/** The merchant API key the bench's server-side calls (POST /transactions) carry. */
export const BENCH_MERCHANT_API_KEY = 'bench-merchant-api-key-0123456789abcdef';

/**
 * What POST /transactions needs besides the base options: the merchant API key and the payment gateway
 * (the sandbox serves endpoint 4 too, for its documented app and client).
 */
export function benchPaymentOptions(upstreamUrl = 'http://127.0.0.1:9'): Partial<ProxyConfigInput> {
  return {
    gatewayUrl: upstreamUrl,
    merchantApiKey: BENCH_MERCHANT_API_KEY,
    pgwAppId: 'sandbox-app',
    pgwClientId: 'sandbox_client',
  };
}
