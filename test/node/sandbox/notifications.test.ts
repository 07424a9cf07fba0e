import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { describe, test } from 'node:test';
import { Webhook } from 'standardwebhooks';
import type { ReceivedNotification } from './helpers.ts';
import {
  SANDBOX_WEBHOOK_SECRET,
  startTestProvider,
  startVerification,
  startWebhookReceiver,
  submitConsumerForm,
  verificationBody,
} from './helpers.ts';

function signatureHeaders(notification: ReceivedNotification): Record<string, string> {
  const header = (name: string) => String(notification.headers[name] ?? '');
  return {
    'webhook-id': header('webhook-id'),
    'webhook-timestamp': header('webhook-timestamp'),
    'webhook-signature': header('webhook-signature'),
  };
}

/** Runs one verification to a success and returns the verificationId. */
async function verifyConsumer(
  provider: Awaited<ReturnType<typeof startTestProvider>>,
  body = verificationBody(),
): Promise<string> {
  const { consumerUrl, verificationId } = await startVerification(provider, body);
  const response = await submitConsumerForm(consumerUrl, { username: 'user_good', password: 'pass_good' });
  assert.equal(response.status, 303);
  return verificationId;
}

describe('notifications (endpoint 3)', () => {
  test('signs each notification so that standardwebhooks Webhook.verify accepts it with the sandbox secret', async (t) => {
    const receiver = await startWebhookReceiver(t);
    const provider = await startTestProvider(t, { defaultNotificationURL: receiver.url });
    const verificationId = await verifyConsumer(provider);
    await provider.notificationsSettled();
    const [notification] = receiver.received;
    assert.ok(notification);
    assert.equal(notification.headers['content-type'], 'application/json');
    const verified = new Webhook(SANDBOX_WEBHOOK_SECRET).verify(notification.body, signatureHeaders(notification)) as {
      verificationId: string;
    };
    assert.equal(verified.verificationId, verificationId);
    assert.equal(provider.stats.notificationsDelivered, 1);
  });

  test('produces signatures a different secret rejects', async (t) => {
    const receiver = await startWebhookReceiver(t);
    const provider = await startTestProvider(t, { defaultNotificationURL: receiver.url });
    await verifyConsumer(provider);
    await provider.notificationsSettled();
    const [notification] = receiver.received;
    assert.ok(notification);
    const otherSecret = `whsec_${Buffer.from('another-secret-entirely').toString('base64')}`;
    assert.throws(() => new Webhook(otherSecret).verify(notification.body, signatureHeaders(notification)), {
      name: 'WebhookVerificationError',
    });
    assert.throws(
      () =>
        new Webhook(SANDBOX_WEBHOOK_SECRET).verify(
          notification.body.replace('SUCCESS', 'FAILURE'),
          signatureHeaders(notification),
        ),
      { name: 'WebhookVerificationError' },
    );
  });

  test('signs with the webhookSecret option when one is given', async (t) => {
    const secret = `whsec_${Buffer.from('merchant-configured-secret').toString('base64')}`;
    const receiver = await startWebhookReceiver(t);
    const provider = await startTestProvider(t, { defaultNotificationURL: receiver.url, webhookSecret: secret });
    await verifyConsumer(provider);
    await provider.notificationsSettled();
    const [notification] = receiver.received;
    assert.ok(notification);
    assert.doesNotThrow(() => new Webhook(secret).verify(notification.body, signatureHeaders(notification)));
  });

  test('retries a notification answered with non-2xx until a 2xx, keeping the same webhook-id', async (t) => {
    const receiver = await startWebhookReceiver(t, (index) => (index < 2 ? 500 : 200));
    const provider = await startTestProvider(t, { defaultNotificationURL: receiver.url });
    await verifyConsumer(provider);
    await provider.notificationsSettled();
    assert.equal(receiver.received.length, 3);
    const ids = new Set(receiver.received.map((notification) => notification.headers['webhook-id']));
    assert.equal(ids.size, 1);
    for (const notification of receiver.received) {
      assert.doesNotThrow(() =>
        new Webhook(SANDBOX_WEBHOOK_SECRET).verify(notification.body, signatureHeaders(notification)),
      );
    }
    assert.equal(provider.stats.notificationAttempts, 3);
    assert.equal(provider.stats.notificationsDelivered, 1);
  });

  test('retries a delivery that times out', async (t) => {
    const receiver = await startWebhookReceiver(t, (index) => (index === 0 ? 'hang' : 204));
    const provider = await startTestProvider(t, { defaultNotificationURL: receiver.url, notificationTimeoutMs: 100 });
    await verifyConsumer(provider);
    await provider.notificationsSettled();
    assert.equal(receiver.received.length, 2);
    assert.equal(receiver.received[0]?.headers['webhook-id'], receiver.received[1]?.headers['webhook-id']);
    assert.equal(provider.stats.notificationsDelivered, 1);
  });

  test('retries a delivery whose connection is dropped, keeping the same webhook-id', async (t) => {
    const receiver = await startWebhookReceiver(t, (index) => (index < 2 ? 'reset' : 204));
    const provider = await startTestProvider(t, { defaultNotificationURL: receiver.url });
    await verifyConsumer(provider);
    await provider.notificationsSettled();
    assert.equal(receiver.received.length, 3);
    assert.equal(new Set(receiver.received.map((notification) => notification.headers['webhook-id'])).size, 1);
    assert.equal(provider.stats.notificationsDelivered, 1);
  });

  test('gives up after a bounded number of attempts when the receiver cannot be reached', async (t) => {
    // A port that refuses connections: bind one, note it, close it.
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const { port } = probe.address() as AddressInfo;
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    const provider = await startTestProvider(t, {
      defaultNotificationURL: `http://127.0.0.1:${port}/gone`,
      notificationRetryDelaysMs: [5, 5],
    });
    await verifyConsumer(provider);
    await provider.notificationsSettled();
    assert.equal(provider.stats.notificationAttempts, 3);
    assert.equal(provider.stats.notificationsDelivered, 0);
    assert.equal(provider.stats.notificationsAbandoned, 1);
  });

  test('drops the first deliveries while the drop fault is on, counts them as failed attempts, and retries', async (t) => {
    const receiver = await startWebhookReceiver(t);
    const provider = await startTestProvider(t, {
      defaultNotificationURL: receiver.url,
      faults: { dropNotifications: 2 },
    });
    await verifyConsumer(provider);
    await provider.notificationsSettled();
    assert.equal(receiver.received.length, 1);
    assert.equal(provider.stats.notificationsDropped, 2);
    assert.equal(provider.stats.notificationAttempts, 3);
    assert.equal(provider.stats.notificationsDelivered, 1);
    assert.equal(provider.faults.dropNotifications, 0);
  });

  test('sends a notification twice with the same webhook-id while the duplicate fault is on', async (t) => {
    const receiver = await startWebhookReceiver(t);
    const provider = await startTestProvider(t, { defaultNotificationURL: receiver.url });
    provider.faults.duplicateNotifications = 1;
    await verifyConsumer(provider);
    // Settle before the next verification, so its notification cannot land between the first and its copy.
    await provider.notificationsSettled();
    await verifyConsumer(provider);
    await provider.notificationsSettled();
    assert.equal(receiver.received.length, 3);
    const [first, duplicate, next] = receiver.received;
    assert.equal(first?.headers['webhook-id'], duplicate?.headers['webhook-id']);
    assert.equal(first?.body, duplicate?.body);
    assert.notEqual(next?.headers['webhook-id'], first?.headers['webhook-id']);
    assert.equal(provider.stats.notificationDuplicates, 1);
  });

  test('holds each notification back for the delay fault, then delivers it', async (t) => {
    const receiver = await startWebhookReceiver(t);
    const provider = await startTestProvider(t, {
      defaultNotificationURL: receiver.url,
      faults: { notificationDelayMs: 1_000 },
    });
    await verifyConsumer(provider);
    assert.equal(provider.stats.notificationAttempts, 0, 'nothing is attempted before the delay');
    await provider.notificationsSettled();
    assert.equal(receiver.received.length, 1);
    assert.equal(provider.stats.notificationsDelivered, 1);
  });

  test('re-verifies an account it issued and notifies the same accountToken', async (t) => {
    const receiver = await startWebhookReceiver(t);
    const provider = await startTestProvider(t, { defaultNotificationURL: receiver.url });
    await verifyConsumer(provider);
    await provider.notificationsSettled();
    const first = JSON.parse(receiver.received[0]?.body ?? '{}') as { account: { accountToken: string } };
    await verifyConsumer(provider, verificationBody({}, { accountToken: first.account.accountToken }));
    await provider.notificationsSettled();
    const second = JSON.parse(receiver.received[1]?.body ?? '{}') as { account: { accountToken: string } };
    assert.equal(second.account.accountToken, first.account.accountToken);
  });
});
