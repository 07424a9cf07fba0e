// The proxy's own Standard Webhooks check (node:crypto) against the reference `standardwebhooks`
// package: it must accept exactly what the package accepts and refuse with the package's reasons.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { createWebhookVerifier, WebhookSignatureError } from '../../../proxy/common/webhook-signature.ts';

const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const OTHER_SECRET = 'whsec_d3Jvbmctc2VjcmV0LXdyb25nLXNlY3JldA==';
const NOW_MS = 1_750_000_000_000;
const NOW_S = NOW_MS / 1000;

function signed(secret: string, id: string, seconds: number, payload: string): string {
  return new Webhook(secret).sign(id, new Date(seconds * 1000), payload);
}

/** What the reference package says about the same input: 'ok' or its error message. */
function reference(payload: string, headers: { id: string; timestamp: string; signature: string }): string {
  const realNow = Date.now;
  Date.now = () => NOW_MS;
  try {
    new Webhook(SECRET).verify(payload, {
      'webhook-id': headers.id,
      'webhook-timestamp': headers.timestamp,
      'webhook-signature': headers.signature,
    });
    return 'ok';
  } catch (error) {
    return (error as Error).message;
  } finally {
    Date.now = realNow;
  }
}

function ours(payload: string, headers: { id: string; timestamp: string; signature: string }): string {
  try {
    createWebhookVerifier(SECRET).verify(payload, headers, NOW_MS);
    return 'ok';
  } catch (error) {
    assert.ok(error instanceof WebhookSignatureError);
    return error.message;
  }
}

describe('Standard Webhooks signature check', () => {
  const payload = '{"account":{"accountToken":"acct-1"},"note":"caf\u00e9 \u{1F600}"}';
  const good = signed(SECRET, 'msg_1', NOW_S, payload);
  const cases: Record<string, { payload: string; id: string; timestamp: string; signature: string }> = {
    'a valid signature': { payload, id: 'msg_1', timestamp: String(NOW_S), signature: good },
    'a valid signature among others': {
      payload,
      id: 'msg_1',
      timestamp: String(NOW_S),
      signature: `v2,abc v1,Zm9v ${good} v1a,x`,
    },
    'a valid signature with a trailing part': {
      payload,
      id: 'msg_1',
      timestamp: String(NOW_S),
      signature: `${good},extra`,
    },
    'a signature made with another secret': {
      payload,
      id: 'msg_1',
      timestamp: String(NOW_S),
      signature: signed(OTHER_SECRET, 'msg_1', NOW_S, payload),
    },
    'a body changed after signing': {
      payload: payload.replace('acct-1', 'acct-2'),
      id: 'msg_1',
      timestamp: String(NOW_S),
      signature: good,
    },
    'another webhook-id': { payload, id: 'msg_2', timestamp: String(NOW_S), signature: good },
    'a signature under another version': {
      payload,
      id: 'msg_1',
      timestamp: String(NOW_S),
      signature: good.replace('v1,', 'v2,'),
    },
    'a signature without a version': { payload, id: 'msg_1', timestamp: String(NOW_S), signature: good.slice(3) },
    'a missing id': { payload, id: '', timestamp: String(NOW_S), signature: good },
    'a missing timestamp': { payload, id: 'msg_1', timestamp: '', signature: good },
    'a missing signature': { payload, id: 'msg_1', timestamp: String(NOW_S), signature: '' },
    'a timestamp that is not a number': { payload, id: 'msg_1', timestamp: 'soon', signature: good },
    'a timestamp six minutes old': {
      payload,
      id: 'msg_1',
      timestamp: String(NOW_S - 360),
      signature: signed(SECRET, 'msg_1', NOW_S - 360, payload),
    },
    'a timestamp six minutes ahead': {
      payload,
      id: 'msg_1',
      timestamp: String(NOW_S + 360),
      signature: signed(SECRET, 'msg_1', NOW_S + 360, payload),
    },
    'a timestamp four minutes old': {
      payload,
      id: 'msg_1',
      timestamp: String(NOW_S - 240),
      signature: signed(SECRET, 'msg_1', NOW_S - 240, payload),
    },
    'a timestamp with a fraction': { payload, id: 'msg_1', timestamp: `${NOW_S}.9`, signature: good },
  };
  for (const [name, { payload: body, ...headers }] of Object.entries(cases)) {
    test(`judges ${name} as the standardwebhooks package does`, () => {
      assert.equal(ours(body, headers), reference(body, headers));
    });
  }

  test('accepts a valid signature and refuses a tampered one', () => {
    assert.equal(ours(payload, { id: 'msg_1', timestamp: String(NOW_S), signature: good }), 'ok');
    assert.equal(
      ours(`${payload} `, { id: 'msg_1', timestamp: String(NOW_S), signature: good }),
      'No matching signature found',
    );
  });

  test('refuses an empty secret', () => {
    assert.throws(() => createWebhookVerifier('whsec_'), /Secret can't be empty/);
  });
});
