// Log hygiene for values an attacker controls: they are cut short before they reach a line, and a
// warning an attacker can trigger at will is written once per key (and then at most once a minute, with
// a count of the ones left out), so a flood of bad requests cannot grow the log without bound.
import type { Logger } from 'pino';
import { LOGGED_VALUE_MAX, WARNING_INTERVAL_MS, WARNING_MAX_KEYS } from '../config/limits.ts';

/** `value` as a string of at most `max` characters (`…` marks a cut). */
export function clip(value: unknown, max = LOGGED_VALUE_MAX): string {
  const text = typeof value === 'string' ? value : String(value);
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

export interface WarningLimiterOptions {
  /** After the first line for a key, at most one more per this period. Default 60 s. */
  intervalMs?: number;
  /** Distinct keys remembered; beyond this every key shares one budget. Default 1,000. */
  maxKeys?: number;
  now?: () => number;
}

interface KeyState {
  loggedAt: number;
  suppressed: number;
}

/** Rate-limited warnings, by key (an origin, a reason). */
export class WarningLimiter {
  readonly #keys = new Map<string, KeyState>();
  readonly #intervalMs: number;
  readonly #maxKeys: number;
  readonly #now: () => number;

  constructor(
    private readonly logger: Logger,
    options: WarningLimiterOptions = {},
  ) {
    this.#intervalMs = options.intervalMs ?? WARNING_INTERVAL_MS;
    this.#maxKeys = options.maxKeys ?? WARNING_MAX_KEYS;
    this.#now = options.now ?? Date.now;
  }

  /** Writes `message` at warn unless this key was logged within the interval; returns whether it did. */
  warn(key: string, fields: Record<string, unknown>, message: string): boolean {
    const id = this.#keys.has(key) || this.#keys.size < this.#maxKeys ? key : '(other keys)';
    const state = this.#keys.get(id);
    const now = this.#now();
    if (state && now - state.loggedAt < this.#intervalMs) {
      state.suppressed++;
      return false;
    }
    const suppressed = state?.suppressed ?? 0;
    this.#keys.set(id, { loggedAt: now, suppressed: 0 });
    this.logger.warn(suppressed > 0 ? { ...fields, suppressed } : fields, message);
    return true;
  }

  /** Writes `message` at warn the first time `key` is seen, never again. */
  once(key: string, fields: Record<string, unknown>, message: string): boolean {
    if (this.#keys.has(key)) return false;
    if (this.#keys.size >= this.#maxKeys) return this.warn('(other keys)', fields, message);
    this.#keys.set(key, { loggedAt: this.#now(), suppressed: 0 });
    this.logger.warn(fields, message);
    return true;
  }
}
