// Endpoint 3 from the sandbox's side: delivers each verification result to the merchant's notification
// URL as a Standard Webhooks message (docs/UPSTREAM.md#d12-notification-signature). A non-2xx answer, a timeout or a connection error is
// retried after each of `notificationRetryDelaysMs`, always with the same `webhook-id` so the receiver
// can deduplicate; after the last delay the notification is abandoned (and logged).
import { Webhook } from 'standardwebhooks';
import type { ProviderFaults } from './faults.ts';
import { takeCounted, takeFault } from './faults.ts';
import type { ProviderLogger } from './logger.ts';
import { randomId } from './state.ts';
import type { ProviderStats } from './stats.ts';

export interface NotifierSettings {
  webhookSecret: string;
  retryDelaysMs: readonly number[];
  timeoutMs: number;
  logger: ProviderLogger;
  faults: ProviderFaults;
  stats: ProviderStats;
}

interface Delivery {
  messageId: string;
  url: string;
  body: string;
  verificationId: string;
}

export class Notifier {
  readonly #settings: NotifierSettings;
  readonly #webhook: Webhook;
  readonly #timers = new Set<NodeJS.Timeout>();
  readonly #inFlight = new Set<AbortController>();
  #pending = 0;
  #settledWaiters: Array<() => void> = [];
  #closed = false;

  constructor(settings: NotifierSettings) {
    this.#settings = settings;
    this.#webhook = new Webhook(settings.webhookSecret);
  }

  /** Queues the delivery of `payload` to `url`; returns the `webhook-id` it will carry. */
  notify(url: string, payload: object & { verificationId: string }): string {
    const delivery: Delivery = {
      messageId: randomId('msg_'),
      url,
      body: JSON.stringify(payload),
      verificationId: payload.verificationId,
    };
    if (this.#closed) return delivery.messageId;
    this.#pending += 1;
    const { notificationDelayMs, lateNotifications } = this.#settings.faults;
    const late = takeCounted(lateNotifications) ? lateNotifications.delayMs : 0;
    this.#schedule(() => this.#attempt(delivery, 0), notificationDelayMs + late);
    return delivery.messageId;
  }

  /** Resolves once every queued notification has been delivered or abandoned. */
  settled(): Promise<void> {
    if (this.#pending === 0) return Promise.resolve();
    return new Promise((resolve) => this.#settledWaiters.push(resolve));
  }

  /** Cancels pending retries and in-flight deliveries. */
  close(): void {
    this.#closed = true;
    for (const timer of this.#timers) clearTimeout(timer);
    this.#timers.clear();
    for (const controller of this.#inFlight) controller.abort();
    this.#pending = 0;
    this.#wakeSettledWaiters();
  }

  #schedule(task: () => Promise<void>, delayMs: number): void {
    if (this.#closed) return;
    const timer = setTimeout(() => {
      this.#timers.delete(timer);
      void task();
    }, delayMs);
    this.#timers.add(timer);
  }

  async #attempt(delivery: Delivery, attempt: number): Promise<void> {
    const { stats, faults, logger } = this.#settings;
    stats.notificationAttempts += 1;
    let delivered = false;
    if (takeFault(faults, 'dropNotifications')) {
      stats.notificationsDropped += 1;
    } else {
      delivered = await this.#send(delivery);
    }
    if (this.#closed) return;
    if (delivered) {
      stats.notificationsDelivered += 1;
      logger.info(
        { verificationId: delivery.verificationId, webhookId: delivery.messageId, attempt },
        'notification delivered',
      );
      if (takeFault(faults, 'duplicateNotifications')) {
        stats.notificationDuplicates += 1;
        await this.#send(delivery);
      }
      this.#finish();
      return;
    }
    const delay = this.#settings.retryDelaysMs[attempt];
    if (delay === undefined) {
      stats.notificationsAbandoned += 1;
      logger.warn(
        { verificationId: delivery.verificationId, webhookId: delivery.messageId, attempts: attempt + 1 },
        'notification abandoned',
      );
      this.#finish();
      return;
    }
    this.#schedule(() => this.#attempt(delivery, attempt + 1), delay);
  }

  /** One POST; true on a 2xx. Failures are logged, never thrown: the retry schedule handles them. */
  async #send(delivery: Delivery): Promise<boolean> {
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), this.#settings.timeoutMs);
    this.#inFlight.add(controller);
    const timestamp = new Date();
    try {
      const response = await fetch(delivery.url, {
        method: 'POST',
        redirect: 'manual',
        signal: controller.signal,
        headers: {
          'content-type': 'application/json',
          'user-agent': 'obv-sandbox-notifier/1',
          'webhook-id': delivery.messageId,
          'webhook-timestamp': String(Math.floor(timestamp.getTime() / 1000)),
          'webhook-signature': this.#webhook.sign(delivery.messageId, timestamp, delivery.body),
        },
        body: delivery.body,
      });
      await response.body?.cancel();
      if (!response.ok) {
        this.#settings.logger.warn(
          { verificationId: delivery.verificationId, status: response.status },
          'notification refused',
        );
      }
      return response.ok;
    } catch (error) {
      const reason = controller.signal.aborted ? 'timeout' : error instanceof Error ? error.message : String(error);
      this.#settings.logger.warn({ verificationId: delivery.verificationId, reason }, 'notification failed');
      return false;
    } finally {
      clearTimeout(timer);
      this.#inFlight.delete(controller);
    }
  }

  #finish(): void {
    this.#pending = Math.max(0, this.#pending - 1);
    if (this.#pending === 0) this.#wakeSettledWaiters();
  }

  #wakeSettledWaiters(): void {
    const waiters = this.#settledWaiters;
    this.#settledWaiters = [];
    for (const wake of waiters) wake();
  }
}
