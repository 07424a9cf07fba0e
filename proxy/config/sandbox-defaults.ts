// With OBV_SANDBOX=true the sandbox's published credentials (docs/SANDBOX.md) fill whatever the
// merchant left unset, so a first run against `npx obv-link-sandbox` needs only a handful of variables.
// Values the merchant sets always win; without the sandbox flag nothing is filled in.
import { SANDBOX_SEALING_KEY, type SealingKey } from './sealing-keys.ts';

/** The sandbox's documented client, webhook secret and endpoint-4 header values. */
export const SANDBOX_DEFAULTS = {
  clientId: 'sandbox_client',
  clientSecret: 'sandbox_secret',
  webhookSecret: 'whsec_c2FuZGJveC13ZWJob29rLXNlY3JldC1vYnYtbGluaw==',
  merchantId: 'sandbox-merchant',
  pgwAppId: 'sandbox-app',
  pgwClientId: 'sandbox_client',
  /** Derived from a published phrase (config/sealing-keys.ts): the sandbox's fake tokens only. */
  sealingKeys: [SANDBOX_SEALING_KEY] as SealingKey[],
} as const;

/** `input` with the sandbox defaults under any unset key, when its `sandbox` setting is exactly on. */
export function withSandboxDefaults<T extends object>(input: T): T {
  const sandbox = (input as { sandbox?: unknown }).sandbox;
  if (sandbox !== true && sandbox !== 'true') return input;
  const filled: Record<string, unknown> = { ...(input as Record<string, unknown>) };
  for (const [key, value] of Object.entries(SANDBOX_DEFAULTS)) filled[key] ??= value;
  return filled as T;
}
