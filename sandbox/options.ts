// Options of createProvider/startProvider (docs/CONTRACTS.md §1 "Programmatic API") and their defaults.
import type { ProviderFaults } from './faults.ts';
import type { ProviderLogger } from './logger.ts';
import { silentLogger } from './logger.ts';
import type { SandboxClient } from './sandbox-data.ts';
import { DEFAULT_WEBHOOK_SECRET, SANDBOX_CLIENTS } from './sandbox-data.ts';

export interface ProviderOptions {
  /** `expires_in` of issued bearer tokens. Default 3600. */
  tokenTtlSeconds?: number;
  /** Lifetime of a `consumerUrl`. Default 900 (15 minutes). */
  consumerUrlTtlSeconds?: number;
  /** Standard Webhooks secret (`whsec_…`) notifications are signed with. */
  webhookSecret?: string;
  /** Waits between delivery attempts; attempts = length + 1. Default 0.5 s, 2 s, 10 s, 30 s, 60 s. */
  notificationRetryDelaysMs?: number[];
  /** A delivery attempt that has not answered by then counts as failed. Default 10 s. */
  notificationTimeoutMs?: number;
  /** Where the consumer goes after the bank page when the request names no `merchant.returnURL`. */
  defaultReturnURL?: string;
  /** Where notifications go when the request names no `merchant.notificationURL`. */
  defaultNotificationURL?: string;
  /** Base of `consumerUrl`s. Default: scheme and Host of the verification request. */
  publicUrl?: string;
  /** Initial fault controls; the live object is `provider.faults`. */
  faults?: Partial<ProviderFaults>;
  /** Registered clients. Default: the documented sandbox clients. */
  clients?: readonly SandboxClient[];
  /** Display names by `merchant.merchantId`, as a provider keeps them on file: the bank page names the merchant. */
  merchantNames?: Readonly<Record<string, string>>;
  /** Upper bound of each in-memory table (tokens, verifications, accounts, transactions). Default 10 000. */
  maxEntries?: number;
  /** Structured logger; silent by default. */
  logger?: ProviderLogger;
  /** Clock in epoch milliseconds, injectable so tests can move past lifetimes without waiting. */
  now?: () => number;
}

/** Options with every default applied. */
export interface ProviderConfig {
  merchantNames: Readonly<Record<string, string>>;
  tokenTtlSeconds: number;
  consumerUrlTtlSeconds: number;
  webhookSecret: string;
  notificationRetryDelaysMs: readonly number[];
  notificationTimeoutMs: number;
  defaultReturnURL: string | undefined;
  defaultNotificationURL: string | undefined;
  publicUrl: string | undefined;
  clients: readonly SandboxClient[];
  maxEntries: number;
  logger: ProviderLogger;
  now: () => number;
}

export const DEFAULT_RETRY_DELAYS_MS: readonly number[] = [500, 2_000, 10_000, 30_000, 60_000];

function requirePositive(name: string, value: number): number {
  if (!Number.isFinite(value) || value <= 0)
    throw new TypeError(`provider option ${name} must be a positive number, got ${value}`);
  return value;
}

function requireHttpUrl(name: string, value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new TypeError(`provider option ${name} must be an absolute URL, got ${JSON.stringify(value)}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new TypeError(`provider option ${name} must be an http(s) URL, got ${JSON.stringify(value)}`);
  }
  return value;
}

/** Applies defaults and rejects impossible combinations with a TypeError naming the option. */
export function resolveOptions(options: ProviderOptions): ProviderConfig {
  const retryDelays = options.notificationRetryDelaysMs ?? DEFAULT_RETRY_DELAYS_MS;
  if (retryDelays.some((delay) => !Number.isFinite(delay) || delay < 0)) {
    throw new TypeError('provider option notificationRetryDelaysMs must hold non-negative numbers');
  }
  return {
    merchantNames: { ...options.merchantNames },
    tokenTtlSeconds: Math.ceil(requirePositive('tokenTtlSeconds', options.tokenTtlSeconds ?? 3600)),
    consumerUrlTtlSeconds: requirePositive('consumerUrlTtlSeconds', options.consumerUrlTtlSeconds ?? 900),
    webhookSecret: options.webhookSecret ?? DEFAULT_WEBHOOK_SECRET,
    notificationRetryDelaysMs: [...retryDelays],
    notificationTimeoutMs: requirePositive('notificationTimeoutMs', options.notificationTimeoutMs ?? 10_000),
    defaultReturnURL: requireHttpUrl('defaultReturnURL', options.defaultReturnURL),
    defaultNotificationURL: requireHttpUrl('defaultNotificationURL', options.defaultNotificationURL),
    publicUrl: requireHttpUrl('publicUrl', options.publicUrl)?.replace(/\/+$/, ''),
    clients: options.clients ?? SANDBOX_CLIENTS,
    maxEntries: Math.floor(requirePositive('maxEntries', options.maxEntries ?? 10_000)),
    logger: options.logger ?? silentLogger,
    now: options.now ?? Date.now,
  };
}
