// Idempotency-Key on POST /verifications: a retried start returns the session the first one created;
// the same key with another body is a client bug (422). Claims live in the session store, so this holds
// across instances.
import { createHash } from 'node:crypto';
import type { ProxyConfig } from '../config/schema.ts';
import { problem } from '../common/errors.ts';
import type { IdempotencyStore, SessionRecord, SessionStore } from '../storage/sessions.ts';

function hashOf(value: string): string {
  return createHash('sha256').update(value).digest('base64url');
}

/**
 * The session for this key and body: the one an earlier request with both created, else a new one from
 * `start`. `client` scopes the key (the client address).
 */
export async function startOnce(
  deps: { config: Pick<ProxyConfig, 'sessionTtlMs'>; store: IdempotencyStore & Pick<SessionStore, 'get'> },
  client: string,
  key: string,
  body: unknown,
  start: () => Promise<SessionRecord>,
): Promise<SessionRecord> {
  const { config, store } = deps;
  // Scoped to the client address so one client's key can never return another client's session, and
  // bound to the body: the key marks "this key was used", the body claim "with this body". A retry
  // with the same body returns the first session; the same key with another body is a 422.
  const scope = `${client}\n${key}`;
  const keyClaim = hashOf(scope);
  const bodyClaim = hashOf(`${scope}\n${hashOf(JSON.stringify(body))}`);
  // A start that failed releases its claims; the waiting duplicate then tries to claim them itself.
  for (let attempt = 0; attempt < 3; attempt++) {
    const sameBody = await store.claimIdempotencyKey(bodyClaim, config.sessionTtlMs);
    if (!sameBody.claimed) {
      const existing = sameBody.sessionId === undefined ? undefined : await store.get(sameBody.sessionId);
      if (existing) return existing;
      continue;
    }
    const firstUse = await store.claimIdempotencyKey(keyClaim, config.sessionTtlMs);
    if (!firstUse.claimed) {
      await store.releaseIdempotencyKey(bodyClaim);
      // The key's first request failed and released it: claim again.
      if (firstUse.sessionId === undefined) continue;
      throw problem(
        'idempotency-key-reused',
        'This Idempotency-Key was already used with a different request body; use a new key for a new request.',
        { errors: [{ path: 'Idempotency-Key', message: 'was already used with a different body' }] },
      );
    }
    let record;
    try {
      record = await start();
    } catch (error) {
      await Promise.all([store.releaseIdempotencyKey(bodyClaim), store.releaseIdempotencyKey(keyClaim)]);
      throw error;
    }
    // The body claim first: a duplicate waiting on the key claim then finds the body claim complete.
    await store.completeIdempotencyKey(bodyClaim, record.sessionId, config.sessionTtlMs);
    await store.completeIdempotencyKey(keyClaim, record.sessionId, config.sessionTtlMs);
    return record;
  }
  throw problem('conflict', 'Another request with this Idempotency-Key is failing; retry with a new key.');
}
