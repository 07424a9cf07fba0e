// Fault controls: a mutable object the tests, the CLI's env and the sandbox controls (controls.ts) turn at
// run time to make the sandbox misbehave the ways a real provider does. Each counter is consumed as the
// fault fires.

/** How a forced token-endpoint failure shows itself. */
export type TokenFailureKind = '5xx' | 'timeout';

/** The endpoints a delay or a time-out can be put on: 2 (verification create) and 4 (transaction). */
export type ControlledEndpoint = 'verification' | 'transaction';

export interface ProviderFaults {
  /** Deliveries to swallow before sending; each counts as a failed attempt and is retried. */
  dropNotifications: number;
  /** Wait this long before the first delivery attempt of each notification. */
  notificationDelayMs: number;
  /** Notifications to send twice (same `webhook-id`), as an at-least-once sender may. */
  duplicateNotifications: number;
  /** The next `count` notifications wait `delayMs` (beside `notificationDelayMs`) before their first attempt. */
  lateNotifications: { count: number; delayMs: number };
  /** The next `count` token requests answer 503 (`5xx`) or never answer (`timeout`). */
  tokenFailures: { count: number; kind: TokenFailureKind };
  /** Wait this long before answering each transaction request (endpoint 4), as a slow gateway does. */
  transactionDelayMs: number;
  /** Wait this long before answering each verification request (endpoint 2). */
  verificationDelayMs: number;
  /** The next requests to endpoint 2 or 4 never answered (held open until the caller gives up); nothing is recorded. */
  endpointTimeouts: Record<ControlledEndpoint, number>;
  /** The next `count` verifications to end at the bank fail with this code and message, whoever signs in. */
  verificationFailures: { count: number; errorCode: string; errorMessage: string };
}

/** Fresh fault controls, all off unless `initial` turns some on. */
export function createFaults(initial: Partial<ProviderFaults> = {}): ProviderFaults {
  return {
    dropNotifications: initial.dropNotifications ?? 0,
    notificationDelayMs: initial.notificationDelayMs ?? 0,
    duplicateNotifications: initial.duplicateNotifications ?? 0,
    lateNotifications: {
      count: initial.lateNotifications?.count ?? 0,
      delayMs: initial.lateNotifications?.delayMs ?? 0,
    },
    tokenFailures: { count: initial.tokenFailures?.count ?? 0, kind: initial.tokenFailures?.kind ?? '5xx' },
    transactionDelayMs: initial.transactionDelayMs ?? 0,
    verificationDelayMs: initial.verificationDelayMs ?? 0,
    endpointTimeouts: {
      verification: initial.endpointTimeouts?.verification ?? 0,
      transaction: initial.endpointTimeouts?.transaction ?? 0,
    },
    verificationFailures: {
      count: initial.verificationFailures?.count ?? 0,
      errorCode: initial.verificationFailures?.errorCode ?? '',
      errorMessage: initial.verificationFailures?.errorMessage ?? '',
    },
  };
}

/** Consumes one unit of a counter fault; true when the fault fires for this event. */
export function takeFault(faults: ProviderFaults, key: 'dropNotifications' | 'duplicateNotifications'): boolean {
  if (faults[key] <= 0) return false;
  faults[key] -= 1;
  return true;
}

/** Consumes one unit of a `{count}` fault; true when it fires. */
export function takeCounted(fault: { count: number }): boolean {
  if (fault.count <= 0) return false;
  fault.count -= 1;
  return true;
}
