// The element's timers and limits, in one place. Tests shorten them (test/browser/helpers.ts).

/** Delays and limits of the flow and its watch on the session. */
export const timing = {
  reconnectBaseMs: 500,
  reconnectMaxMs: 15_000,
  /** Sockets in a row that end without an outcome (never opened, dropped, or silent) before polling starts. */
  socketFailuresBeforePolling: 3,
  /** How long a socket may take to confirm the subscription before it counts as a failed one. */
  subscribeTimeoutMs: 10_000,
  /** While polling, how often the socket is tried again (it is faster than the next poll when it works). */
  socketRetryWhilePollingMs: 30_000,
  pollIntervalMs: 2_500,
  /** How long a start may take before the element gives up and blames the service (the proxy waits on the provider). */
  startTimeoutMs: 20_000,
  /** Polls that fail in a row before the element reports a network error. */
  pollFailuresBeforeError: 6,
  /** How long after the session's `expiresAt` the element asks the proxy, should no socket have said so. */
  expiryCheckDelayMs: 1_000,
  /**
   * How long the live region stays empty when the checkout tab comes back, so that a screen reader
   * announces the outcome that arrived while the tab was hidden.
   */
  reannouncePauseMs: 99,
  /** How long the first screen waits for the saved-account offer before it is drawn without it. */
  offerWaitMs: 2_000,
};
