// Counters the tests read to see what happened on the wire without timing anything.

export interface ProviderStats {
  /** Every request that reached the token endpoint, faults included. */
  tokenRequests: number;
  tokensIssued: number;
  verificationRequests: number;
  /** Delivery attempts, dropped ones included (a drop is a failed attempt). */
  notificationAttempts: number;
  /** Attempts deliberately not sent (the `dropNotifications` fault). */
  notificationsDropped: number;
  /** Extra copies sent by the `duplicateNotifications` fault. */
  notificationDuplicates: number;
  /** Notifications acknowledged with a 2xx. */
  notificationsDelivered: number;
  /** Notifications given up on after the last retry. */
  notificationsAbandoned: number;
  transactions: number;
}

export function createStats(): ProviderStats {
  return {
    tokenRequests: 0,
    tokensIssued: 0,
    verificationRequests: 0,
    notificationAttempts: 0,
    notificationsDropped: 0,
    notificationDuplicates: 0,
    notificationsDelivered: 0,
    notificationsAbandoned: 0,
    transactions: 0,
  };
}
