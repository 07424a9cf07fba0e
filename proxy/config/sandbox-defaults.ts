// With OBV_SANDBOX=true the sandbox's published credentials (docs/SANDBOX.md) and its address fill
// whatever the merchant left unset, so a first run against `npx obv-link-sandbox` needs one variable
// besides the port. Values the merchant sets always win; without the sandbox flag nothing is filled in.
import { SANDBOX_SEALING_KEY, type SealingKey } from './sealing-keys.ts';

/** The sandbox's documented client, webhook secret and endpoint-4 header values. */
export const SANDBOX_DEFAULTS = {
  /** Where `npx obv-link-sandbox` listens by default (its PROVIDER_PORT, 4010). */
  baseUrl: 'http://127.0.0.1:4010',
  clientId: 'sandbox_client',
  clientSecret: 'sandbox_secret',
  webhookSecret: 'whsec_c2FuZGJveC13ZWJob29rLXNlY3JldC1vYnYtbGluaw==',
  merchantId: 'sandbox-merchant',
  pgwAppId: 'sandbox-app',
  pgwClientId: 'sandbox_client',
  /** Derived from a published phrase (config/sealing-keys.ts): the sandbox's fake tokens only. */
  sealingKeys: [SANDBOX_SEALING_KEY] as SealingKey[],
} as const;

/**
 * `input` with the sandbox defaults under any unset key, when its `sandbox` setting is exactly on. The
 * public URL is filled only when a port is given (PORT): it is then this machine's address on that port,
 * where the README's servers listen. Without one the proxy cannot know where the app listens, so it asks.
 */
export function withSandboxDefaults<T extends object>(input: T): T {
  const sandbox = (input as { sandbox?: unknown }).sandbox;
  if (sandbox !== true && sandbox !== 'true') return input;
  const filled: Record<string, unknown> = { ...(input as Record<string, unknown>) };
  for (const [key, value] of Object.entries(SANDBOX_DEFAULTS)) filled[key] ??= value;
  const port = filled.port;
  if (port !== undefined && port !== '') filled.publicUrl ??= `http://127.0.0.1:${String(port)}`;
  return filled as T;
}
