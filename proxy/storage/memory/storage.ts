// Every repository in memory, for one instance: tests, and sandbox mode when chosen. A restart loses
// everything (production refuses it unless OBV_ALLOW_VOLATILE_STORAGE says otherwise: config/schema.ts).
import type { OutboxCodec } from '../outbox.ts';
import type { Storage } from '../storage.ts';
import { MemoryResultBus } from './bus.ts';
import { MemoryLinkSessionStore } from './link-sessions.ts';
import { MemoryEventOutbox } from './outbox.ts';
import { MemoryPaymentStore } from './payments.ts';
import { MemoryRemovalStore } from './removals.ts';
import { MemorySessionStore } from './session-store.ts';

export function createMemoryStorage(
  options: { now?: (() => number) | undefined; outboxCodec?: OutboxCodec | undefined } = {},
): Storage {
  const { now } = options;
  const sessionStore = new MemorySessionStore({ now });
  const resultBus = new MemoryResultBus();
  return {
    kind: 'memory',
    sessionStore,
    resultBus,
    eventOutbox: new MemoryEventOutbox({ codec: options.outboxCodec }),
    payments: new MemoryPaymentStore({ now }),
    linkSessions: new MemoryLinkSessionStore({ now }),
    removals: new MemoryRemovalStore(),
    sealsEvents: options.outboxCodec?.seals ?? false,
    location: 'memory',
    async close() {
      await Promise.all([sessionStore.close(), resultBus.close()]);
    },
  };
}
