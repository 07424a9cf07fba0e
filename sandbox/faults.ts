// Fault controls: a mutable object the tests (and the CLI's env) turn at run time to make the sandbox
// misbehave the ways a real provider does. Each counter is consumed as the fault fires.

/** How a forced token-endpoint failure shows itself. */
export type TokenFailureKind = '5xx' | 'timeout';

export interface ProviderFaults {
  /** Deliveries to swallow before sending; each counts as a failed attempt and is retried. */
  dropNotifications: number;
  /** Wait this long before the first delivery attempt of each notification. */
  notificationDelayMs: number;
  /** Notifications to send twice (same `webhook-id`), as an at-least-once sender may. */
  duplicateNotifications: number;
  /** The next `count` token requests answer 503 (`5xx`) or never answer (`timeout`). */
  tokenFailures: { count: number; kind: TokenFailureKind };
  /** Wait this long before answering each transaction request (endpoint 4), as a slow gateway does. */
  transactionDelayMs: number;
}

/** Fresh fault controls, all off unless `initial` turns some on. */
export function createFaults(initial: Partial<ProviderFaults> = {}): ProviderFaults {
  return {
    dropNotifications: initial.dropNotifications ?? 0,
    notificationDelayMs: initial.notificationDelayMs ?? 0,
    duplicateNotifications: initial.duplicateNotifications ?? 0,
    tokenFailures: { count: initial.tokenFailures?.count ?? 0, kind: initial.tokenFailures?.kind ?? '5xx' },
    transactionDelayMs: initial.transactionDelayMs ?? 0,
  };
}

/** Consumes one unit of a counter fault; true when the fault fires for this event. */
export function takeFault(faults: ProviderFaults, key: 'dropNotifications' | 'duplicateNotifications'): boolean {
  if (faults[key] <= 0) return false;
  faults[key] -= 1;
  return true;
}
