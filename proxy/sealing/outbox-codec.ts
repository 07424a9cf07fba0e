// The outbox's codec (storage/outbox.ts OutboxCodec) over the sealing keys: each event's body sealed
// under the first key of OBV_SEALING_KEYS, bound to the event's id (a body copied onto another event
// does not open), opened under any configured key; a body stored in the clear by an earlier release
// opens as it is (the backends seal those at start-up).
//
// The user tag is HMAC-SHA-256 of the merchant user id under a key derived from each sealing key (HKDF,
// a fixed label), never the sealing key itself. One tag per configured key: `append` writes the first
// key's, forgetUser looks up all of them, so a rotation (a new first key) does not make it miss the
// events tagged before; an event whose key is dropped from the list no longer opens anyway, so its tag
// has nothing left to find. A dedicated stable secret would need one more setting to keep and rotate.
//
// Why a codec handed to each backend rather than a decorator around EventOutbox (events/): the backends
// must keep the tag beside the body, as a column or field they index, and rewrite a forgotten user's
// events in their own transaction; a decorator would have had to change every backend's interface to
// opaque bodies anyway, and every caller that reads `event` from the outbox would have had to be wrapped.
import { createHmac, hkdfSync } from 'node:crypto';
import type { SealingKey } from '../config/sealing-keys.ts';
import type { OutboxCodec } from '../storage/outbox.ts';
import { isClearBody } from '../storage/outbox.ts';
import { createSealer } from './sealer.ts';

/** HKDF's `info`: the one use the derived key serves. */
const USER_TAG_LABEL = 'obv-link outbox merchant user tag v1';

const eventContext = (eventId: string) => `outbox-event:${eventId}`;

export function createOutboxCodec(keys: readonly SealingKey[]): OutboxCodec {
  const sealer = createSealer(keys);
  const tagKeys = keys.map((k) => Buffer.from(hkdfSync('sha256', k.key, '', USER_TAG_LABEL, 32)));
  return {
    seals: true,
    seal: (eventId, body) => sealer.seal(body, eventContext(eventId)),
    open: (eventId, stored) => (isClearBody(stored) ? stored : sealer.open(stored, eventContext(eventId))),
    userTags: (merchantUserId) =>
      tagKeys.map((key) => createHmac('sha256', key).update(merchantUserId, 'utf8').digest('base64url')),
  };
}
