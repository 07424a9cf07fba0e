// Returning shoppers, proxy side: a consented success gives the merchant's server a saved account
// (sealed, bound to the user) and the consent record; passed back in a link session it is offered to the
// element under an opaque id, chosen with no bank step and no upstream verification, removed with the
// merchant's hook told; another user's, altered or unknown-key saved accounts are refused naming their
// index; a stale account (sandbox control) makes /transactions answer reauthorization-required, and a
// link session that re-authorizes it sends its token upstream and returns a fresh saved account.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { completeConsumerStep } from '../../helpers/consumer.ts';
import { startProxyPair, TEST_MERCHANT_API_KEY, type ProxyPair } from '../../helpers/proxy-harness.ts';
import type { OutcomeReport, SavedAccount, SavedAccountRemoval } from '../../../proxy/index.ts';
import { createSealer } from '../../../proxy/sealing/sealer.ts';
import { CONSENT_VERSION } from '../../../proxy/words/consent.ts';
import { EVENTS_SECRET, startMerchantEndpoint } from '../../helpers/merchant-endpoint.ts';

const AUTH = `Bearer ${TEST_MERCHANT_API_KEY}`;
const USER = 'user-4410';

function checkout(extra: Record<string, unknown> = {}) {
  return {
    merchantUserId: USER,
    merchantTransactionId: `order-${randomUUID()}`,
    amount: '42.50',
    currency: 'USD',
    consumer: { firstName: 'Ana', lastName: 'López', email: 'ana@example.com' },
    language: 'en-US',
    ...extra,
  };
}

/** What the element reads of a session (POST /sessions/lookup: the id in the body, never in a URL). */
const lookup = (baseUrl: string, sessionId: string) =>
  fetch(`${baseUrl}/sessions/lookup`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ sessionId }),
  });

interface Problem {
  type: string;
  errors?: { path: string; message: string }[];
  account?: Record<string, string>;
}
interface Offer {
  accounts: { id: string; fiName: string; displayLabel: string; spokenLabel: string }[];
  saving?: { version: string; label: string; text: string; details: string; more: string; lang: string };
  reconnect?: { fiName: string; displayLabel: string };
}

describe('saved accounts', () => {
  let pair: ProxyPair;
  const reports: OutcomeReport[] = [];
  const removals: SavedAccountRemoval[] = [];
  let failRemoval = false;
  before(async () => {
    pair = await startProxyPair({
      proxy: {
        onOutcome: (report) => void reports.push(report),
        onSavedAccountRemoved: (removal) => {
          if (failRemoval) throw new Error('database down');
          removals.push(removal);
        },
      },
    });
  });
  after(() => pair.close());

  const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${pair.baseUrl}${path}`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        origin: pair.origin,
        'user-agent': 'SavedAccountTest/1.0',
        ...headers,
      },
      body: JSON.stringify(body),
    });
  const server = (path: string, body: unknown) => post(path, body, { authorization: AUTH });

  async function linkSession(extra: Record<string, unknown> = {}) {
    const purchase = checkout(extra);
    const response = await server('/link-sessions', purchase);
    assert.equal(response.status, 201, await response.clone().text());
    return { ...((await response.json()) as { linkToken: string }), purchase };
  }

  const offerOf = async (linkToken: string) => {
    const response = await post('/saved-accounts/offer', { linkToken });
    assert.equal(response.status, 200);
    return (await response.json()) as Offer;
  };

  /** A first purchase through the bank with the consent box ticked: the saved account the server gets. */
  async function linkAndSave(
    who: 'good' | 'savings' = 'good',
  ): Promise<{ saved: SavedAccount; linkRef: string; sessionId: string; purchase: ReturnType<typeof checkout> }> {
    const { linkToken, purchase } = await linkSession({ allowSaving: true });
    const started = await post('/verifications', { linkToken, consent: CONSENT_VERSION });
    assert.equal(started.status, 201, await started.clone().text());
    const { sessionId, consumerUrl } = (await started.json()) as { sessionId: string; consumerUrl: string };
    await completeConsumerStep(consumerUrl, who);
    await pair.provider.notificationsSettled();
    const view = (await (await lookup(pair.baseUrl, sessionId)).json()) as { outcome: { linkRef: string } };
    const linked = (await (
      await fetch(`${pair.baseUrl}/links/${view.outcome.linkRef}`, { headers: { authorization: AUTH } })
    ).json()) as { savedAccount: SavedAccount };
    return { saved: linked.savedAccount, linkRef: view.outcome.linkRef, sessionId, purchase };
  }

  const pay = (linkRef: string, purchase: ReturnType<typeof checkout>) =>
    server('/transactions', {
      linkRef,
      merchantUserId: purchase.merchantUserId,
      merchantTransactionId: purchase.merchantTransactionId,
      amount: purchase.amount,
      currency: 'USD',
    });

  test('the offer of a link session that allows saving carries the consent words and their version, and no accounts', async () => {
    const { linkToken } = await linkSession({ allowSaving: true, language: 'es-MX' });
    const offer = await offerOf(linkToken);
    assert.deepEqual(offer.accounts, []);
    assert.equal(offer.saving?.version, CONSENT_VERSION);
    assert.equal(offer.saving?.lang, 'es');
    assert.match(offer.saving?.details ?? '', /Eliminar/);
    assert.match(offer.saving?.text ?? '', /^Autorizas a esta tienda /, 'no merchant name configured: the plain words');
    assert.equal((offer as unknown as { words: { remove: string } }).words.remove, 'Eliminar');
    const plain = await offerOf((await linkSession()).linkToken);
    assert.deepEqual(Object.keys(plain).sort(), ['accounts', 'words']);
    assert.deepEqual(plain.accounts, []);
  });

  for (const [page, extra] of [
    ["the element's (confirmed at its form's submit)", {}],
    [
      "a hosted page's (confirmed by Continue)",
      { hosted: { completionRedirectUri: 'https://shop.example/linked', state: 'st-1' } },
    ],
  ] as const) {
    test(`chosen is not confirmed: a saved account chosen on ${page} page releases nothing to the merchant until the shopper confirms it`, async () => {
      const { saved } = await linkAndSave();
      const { linkToken, purchase } = await linkSession({ savedAccounts: [saved.sealed], ...extra });
      const [offered] = (await offerOf(linkToken)).accounts;
      assert.ok(offered);
      const before = reports.length;
      // What the element does as soon as the page opens: the first saved account, chosen.
      const chosen = await post('/saved-accounts/use', { linkToken, savedAccountId: offered.id });
      assert.equal(chosen.status, 201);
      const { linkRef } = (await chosen.json()) as { linkRef: string };
      assert.ok(linkRef, 'the page has the account at once');
      // Opened and left (a mail scanner, a link preview): no onOutcome (the event goes out with it), nothing payable.
      assert.equal(reports.length, before, 'no onOutcome');
      const refused = await pay(linkRef, purchase);
      assert.equal(refused.status, 403);
      assert.equal(((await refused.json()) as Problem).type, 'urn:obv-link:problem:choice-unconfirmed');
      assert.equal((await fetch(`${pair.baseUrl}/links/${linkRef}`, { headers: { authorization: AUTH } })).status, 403);
      const transactions = pair.provider.stats.transactions;
      // The shopper submits the form (or taps Continue).
      assert.equal((await post('/saved-accounts/confirm', { linkRef })).status, 204);
      assert.equal(reports.length, before + 1);
      assert.equal(reports.at(-1)?.outcome.status, 'success');
      assert.equal((await pay(linkRef, purchase)).status, 201);
      assert.equal(pair.provider.stats.transactions, transactions + 1);
      // Again: nothing more; an unknown reference is named.
      assert.equal((await post('/saved-accounts/confirm', { linkRef })).status, 204);
      assert.equal(reports.length, before + 1);
      const unknown = await post('/saved-accounts/confirm', { linkRef: 'x'.repeat(22) });
      assert.equal(unknown.status, 404);
      assert.equal(((await unknown.json()) as Problem).errors?.[0]?.path, 'linkRef');
    });
  }

  test('a consented success gives the server a sealed saved account and the consent record (GET /links and onOutcome); the browser sees neither', async () => {
    const { saved, sessionId, linkRef } = await linkAndSave();
    assert.match(saved.sealed, /^obv1\.sandbox\./);
    assert.match(saved.accountId, /^sa_/);
    assert.equal(saved.fiName, 'Sandbox Federal Bank');
    assert.ok(Date.parse(saved.linkedAt) > 0);
    assert.equal(saved.consent?.version, CONSENT_VERSION);
    assert.equal(saved.consent?.userAgent, 'SavedAccountTest/1.0');
    assert.equal(saved.consent?.ip, '127.0.0.1');
    assert.match(saved.consent?.checkbox ?? '', /Save this account/);
    assert.match(
      saved.consent?.text ?? '',
      /debit this bank account.*Nothing is debited without your confirmation.*“Remove”/,
      'the whole authorization, its collapsible part too',
    );
    const accountToken = [...pair.provider.state.accounts.values()].at(-1)!.accountToken;
    assert.ok(!saved.sealed.includes(accountToken), 'the token is not readable in the sealed string');
    const report = reports.find((r) => r.sessionId === sessionId);
    assert.equal(report?.outcome.status === 'success' && report.outcome.savedAccount?.accountId, saved.accountId);
    const browser = await (await lookup(pair.baseUrl, sessionId)).text();
    assert.ok(
      !browser.includes(saved.sealed) && !browser.includes(accountToken) && !browser.includes(saved.accountId),
      browser,
    );
    assert.ok(browser.includes(linkRef));
    assert.equal(
      (JSON.parse(browser) as { outcome: { note?: string } }).outcome.note,
      'This account will be saved for your next purchases.',
      'the shopper is told',
    );
  });

  test('without the consent box ticked nothing is saved; consent is refused where saving is not allowed or the words are another version', async () => {
    const { linkToken } = await linkSession({ allowSaving: true });
    const started = (await (await post('/verifications', { linkToken })).json()) as {
      sessionId: string;
      consumerUrl: string;
    };
    await completeConsumerStep(started.consumerUrl, 'good');
    await pair.provider.notificationsSettled();
    const view = (await (await lookup(pair.baseUrl, started.sessionId)).json()) as { outcome: { linkRef: string } };
    const linked = (await (
      await fetch(`${pair.baseUrl}/links/${view.outcome.linkRef}`, { headers: { authorization: AUTH } })
    ).json()) as Record<string, unknown>;
    assert.equal(linked.savedAccount, undefined);

    const notAllowed = await post('/verifications', {
      linkToken: (await linkSession()).linkToken,
      consent: CONSENT_VERSION,
    });
    assert.equal(notAllowed.status, 400);
    assert.deepEqual(
      ((await notAllowed.json()) as Problem).errors?.map((e) => e.path),
      ['consent'],
    );
    const oldWords = await post('/verifications', {
      linkToken: (await linkSession({ allowSaving: true })).linkToken,
      consent: '2020-01-01',
    });
    assert.equal(oldWords.status, 400);
    assert.deepEqual(
      ((await oldWords.json()) as Problem).errors?.map((e) => e.path),
      ['consent'],
    );
  });

  test('a saved account passed back is offered by an opaque id with display fields only, and choosing it pays with no upstream verification', async () => {
    const { saved } = await linkAndSave();
    const { linkToken, purchase } = await linkSession({ savedAccounts: [saved.sealed] });
    const offerText = await (await post('/saved-accounts/offer', { linkToken })).text();
    assert.ok(!offerText.includes(saved.sealed) && !offerText.includes(saved.accountId), offerText);
    const offer = JSON.parse(offerText) as Offer;
    assert.equal(offer.accounts.length, 1);
    const [offered] = offer.accounts;
    assert.equal(offered!.fiName, 'Sandbox Federal Bank');
    assert.equal(offered!.displayLabel, 'Checking ••••4321');
    assert.equal(offered!.spokenLabel, 'Checking ending in 4321');
    // Another link session offers the same account under another id.
    assert.notEqual(
      (await offerOf((await linkSession({ savedAccounts: [saved.sealed] })).linkToken)).accounts[0]!.id,
      offered!.id,
    );

    const verificationsBefore = pair.provider.stats.verificationRequests;
    const chosen = await post('/saved-accounts/use', { linkToken, savedAccountId: offered!.id });
    assert.equal(chosen.status, 201);
    const chosenText = await chosen.text();
    assert.ok(!chosenText.includes(saved.sealed));
    const outcome = JSON.parse(chosenText) as { status: string; linkRef: string; displayLabel: string };
    assert.equal(outcome.status, 'success');
    assert.equal(outcome.displayLabel, 'Checking ••••4321');
    assert.equal(pair.provider.stats.verificationRequests, verificationsBefore, 'no upstream verification');
    const transactionsBefore = pair.provider.stats.transactions;
    // The element confirms the choice at its form's submit.
    assert.equal((await post('/saved-accounts/confirm', { linkRef: outcome.linkRef })).status, 204);
    const paid = await pay(outcome.linkRef, purchase);
    assert.equal(paid.status, 201, await paid.clone().text());
    assert.equal(pair.provider.stats.transactions, transactionsBefore + 1);
    const linked = (await (
      await fetch(`${pair.baseUrl}/links/${outcome.linkRef}`, { headers: { authorization: AUTH } })
    ).json()) as Record<string, unknown>;
    assert.equal(linked.savedAccountId, saved.accountId);
    assert.ok(
      reports.some((r) => r.savedAccountId === saved.accountId),
      'onOutcome hears the choice',
    );
  });

  /** Links through the bank with the consent box ticked, from a link session that knows `savedAccounts`: the saved account the server gets. */
  async function saveAgain(
    savedAccounts: string[],
    who: 'good' | 'savings' = 'good',
  ): Promise<SavedAccount | undefined> {
    const { linkToken } = await linkSession({ allowSaving: true, savedAccounts });
    const started = (await (await post('/verifications', { linkToken, consent: CONSENT_VERSION })).json()) as {
      sessionId: string;
      consumerUrl: string;
    };
    await completeConsumerStep(started.consumerUrl, who);
    await pair.provider.notificationsSettled();
    const view = (await (await lookup(pair.baseUrl, started.sessionId)).json()) as { outcome: { linkRef: string } };
    return (
      (await (
        await fetch(`${pair.baseUrl}/links/${view.outcome.linkRef}`, { headers: { authorization: AUTH } })
      ).json()) as { savedAccount?: SavedAccount }
    ).savedAccount;
  }

  test('one row per bank account: saving the same account again renews its saved account under the same accountId; another account gets its own', async () => {
    const { saved } = await linkAndSave();
    const again = await saveAgain([saved.sealed]);
    assert.equal(again?.accountId, saved.accountId, 'the same bank account, linked and saved again: the same id');
    assert.notEqual(again?.sealed, saved.sealed, 'renewed: a new seal (its token and linkedAt)');
    assert.equal(again?.consent?.version, CONSENT_VERSION, 'with the consent of this start');
    const book = new Map([saved, again!].map((account) => [account.accountId, account]));
    assert.equal(book.size, 1, 'a merchant keying by accountId keeps one row');
    const savings = await saveAgain([saved.sealed], 'savings');
    assert.notEqual(savings?.accountId, saved.accountId, 'another account (savings) is a saved account of its own');
  });

  test('an account the shopper removed is not renewed under its id: saved again, it is a new saved account', async () => {
    const { saved } = await linkAndSave();
    const { linkToken } = await linkSession({ allowSaving: true, savedAccounts: [saved.sealed] });
    const [offered] = (await offerOf(linkToken)).accounts;
    assert.equal((await post('/saved-accounts/remove', { linkToken, savedAccountId: offered!.id })).status, 204);
    const started = (await (await post('/verifications', { linkToken, consent: CONSENT_VERSION })).json()) as {
      sessionId: string;
      consumerUrl: string;
    };
    await completeConsumerStep(started.consumerUrl, 'good');
    await pair.provider.notificationsSettled();
    const view = (await (await lookup(pair.baseUrl, started.sessionId)).json()) as { outcome: { linkRef: string } };
    const { savedAccount } = (await (
      await fetch(`${pair.baseUrl}/links/${view.outcome.linkRef}`, { headers: { authorization: AUTH } })
    ).json()) as { savedAccount?: SavedAccount };
    assert.ok(savedAccount);
    assert.notEqual(savedAccount.accountId, saved.accountId);
  });

  test("another user's, an altered and an unknown-key saved account are refused (422 naming each index), never offered", async () => {
    const { saved } = await linkAndSave();
    const flipped = saved.sealed.slice(0, -3) + (saved.sealed.at(-3) === 'A' ? 'B' : 'A') + saved.sealed.slice(-2);
    const foreignKey = createSealer([
      { id: 'sandbox', key: Buffer.from(Array.from({ length: 32 }, (_, i) => 7 + i * 5)) },
    ]);
    const unknownKey = saved.sealed.replace(/^obv1\.sandbox\./, 'obv1.k-gone.');
    const forged = foreignKey.seal(JSON.stringify({ v: 1 }), `saved-account:${USER}`);
    const cases: [string, Record<string, unknown>, string][] = [
      ['another user', { merchantUserId: 'someone-else', savedAccounts: [saved.sealed] }, 'savedAccounts.0'],
      ['altered', { savedAccounts: [saved.sealed, flipped] }, 'savedAccounts.1'],
      ['unknown key', { savedAccounts: [unknownKey] }, 'savedAccounts.0'],
      ['sealed by another proxy', { savedAccounts: [forged] }, 'savedAccounts.0'],
      ["re-authorize another user's", { merchantUserId: 'someone-else', reauthorize: saved.sealed }, 'reauthorize'],
    ];
    for (const [name, extra, path] of cases) {
      const response = await server('/link-sessions', checkout(extra));
      assert.equal(response.status, 422, name);
      const problem = (await response.json()) as Problem;
      assert.equal(problem.type, 'urn:obv-link:problem:saved-account-refused', name);
      assert.deepEqual(
        problem.errors?.map((e) => e.path),
        [path],
        name,
      );
    }
    const messages = await Promise.all([
      server('/link-sessions', checkout({ savedAccounts: [unknownKey] })).then((r) => r.json() as Promise<Problem>),
    ]);
    assert.match(messages[0]!.errors![0]!.message, /key this proxy does not have/);
    await assert.rejects(
      pair.proxy.createLinkSession(checkout({ savedAccounts: [flipped] })),
      (error: Error & { status?: number }) => error.status === 422,
    );
  });

  test('removing an offered account tells the merchant once, and it is no longer offered nor usable in that link session', async () => {
    const first = await linkAndSave();
    const second = await linkAndSave('savings');
    const { linkToken } = await linkSession({ savedAccounts: [first.saved.sealed, second.saved.sealed] });
    const offer = await offerOf(linkToken);
    assert.equal(offer.accounts.length, 2);
    const target = offer.accounts[1]!;

    const earlier = removals.length;
    failRemoval = true;
    const refused = await post('/saved-accounts/remove', { linkToken, savedAccountId: target.id });
    assert.equal(refused.status, 500);
    assert.equal(
      (await offerOf(linkToken)).accounts.length,
      2,
      'a removal the merchant did not record leaves it offered',
    );
    failRemoval = false;

    const removed = await post('/saved-accounts/remove', { linkToken, savedAccountId: target.id });
    assert.equal(removed.status, 204);
    assert.equal(removals.length, earlier + 1);
    assert.equal(removals.at(-1)!.accountId, second.saved.accountId);
    assert.equal(removals.at(-1)!.sealed, second.saved.sealed);
    assert.equal(removals.at(-1)!.merchantUserId, USER);
    assert.deepEqual(
      (await offerOf(linkToken)).accounts.map((a) => a.id),
      [offer.accounts[0]!.id],
    );
    const use = await post('/saved-accounts/use', { linkToken, savedAccountId: target.id });
    assert.equal(use.status, 404);
    assert.equal(((await use.json()) as Problem).type, 'urn:obv-link:problem:unknown-saved-account');
    assert.equal((await post('/saved-accounts/remove', { linkToken, savedAccountId: target.id })).status, 404);
    assert.equal(removals.length, earlier + 1);
  });

  test('a removal is remembered by the proxy: the account is refused in any later link session (410 naming it), gone from open ones, and a reference made from it before no longer pays', async () => {
    const kept = await linkAndSave();
    const dropped = await linkAndSave('savings');
    // A reference made from the account before the shopper removed it (another checkout of the same user).
    const earlier = await linkSession({ savedAccounts: [dropped.saved.sealed] });
    const earlierOffer = await offerOf(earlier.linkToken);
    const chosen = (await (
      await post('/saved-accounts/use', { linkToken: earlier.linkToken, savedAccountId: earlierOffer.accounts[0]!.id })
    ).json()) as { linkRef: string };
    assert.equal((await post('/saved-accounts/confirm', { linkRef: chosen.linkRef })).status, 204);
    // Another open link session offering both.
    const open = await linkSession({ savedAccounts: [kept.saved.sealed, dropped.saved.sealed] });
    const { linkToken } = await linkSession({ savedAccounts: [kept.saved.sealed, dropped.saved.sealed] });
    const offer = await offerOf(linkToken);
    assert.equal(
      (await post('/saved-accounts/remove', { linkToken, savedAccountId: offer.accounts[1]!.id })).status,
      204,
    );

    // The merchant's server still holds the sealed string and passes it back: refused, naming it.
    const refused = await server(
      '/link-sessions',
      checkout({ savedAccounts: [kept.saved.sealed, dropped.saved.sealed] }),
    );
    assert.equal(refused.status, 410);
    const problem = (await refused.json()) as Problem;
    assert.equal(problem.type, 'urn:obv-link:problem:saved-account-removed');
    assert.deepEqual(
      problem.errors?.map((e) => e.path),
      ['savedAccounts.1'],
    );
    assert.equal((await server('/link-sessions', checkout({ reauthorize: dropped.saved.sealed }))).status, 410);
    assert.equal(
      (await server('/link-sessions', checkout({ savedAccounts: [kept.saved.sealed] }))).status,
      201,
      'the other account stays usable',
    );
    // An open link session no longer offers it either.
    assert.deepEqual(
      (await offerOf(open.linkToken)).accounts.map((a) => a.displayLabel),
      ['Checking ••••4321'],
    );
    // And the reference made from it earlier pays nothing.
    const paid = await pay(chosen.linkRef, earlier.purchase);
    assert.equal(paid.status, 410);
    assert.deepEqual(
      ((await paid.json()) as Problem).errors?.map((e) => e.path),
      ['linkRef'],
    );
  });

  test('one link token starts and chooses a bounded number of times (429 naming linkToken), so a leaked token cannot flood', async () => {
    const { saved } = await linkAndSave();
    const { linkToken } = await linkSession({ savedAccounts: [saved.sealed] });
    const [offered] = (await offerOf(linkToken)).accounts;
    const statuses: number[] = [];
    for (let i = 0; i < 51; i++) {
      const response = await post(
        i % 2 === 0 ? '/saved-accounts/use' : '/verifications',
        i % 2 === 0 ? { linkToken, savedAccountId: offered!.id } : { linkToken },
      );
      statuses.push(response.status);
      if (response.status === 429) {
        const problem = (await response.json()) as Problem;
        assert.equal(problem.type, 'urn:obv-link:problem:link-token-exhausted');
        assert.deepEqual(
          problem.errors?.map((e) => e.path),
          ['linkToken'],
        );
      } else {
        await response.body?.cancel();
      }
    }
    assert.deepEqual(
      statuses.slice(0, 50).filter((status) => status === 429),
      [],
      'fifty uses are allowed',
    );
    assert.equal(statuses[50], 429);
  });

  test('the browser routes refuse an unknown link token, a bad id and unknown fields (4xx naming the field)', async () => {
    const unknown = await post('/saved-accounts/offer', { linkToken: `lt_${'B'.repeat(32)}` });
    assert.equal(unknown.status, 404);
    const { linkToken } = await linkSession();
    const bad = await post('/saved-accounts/use', { linkToken, savedAccountId: 'x', extra: 1 });
    assert.equal(bad.status, 400);
    assert.deepEqual(((await bad.json()) as Problem).errors?.map((e) => e.path).sort(), ['extra', 'savedAccountId']);
    const consentWithoutToken = await post('/verifications', { language: 'en', consent: CONSENT_VERSION });
    assert.equal(consentWithoutToken.status, 400);
    assert.deepEqual(
      ((await consentWithoutToken.json()) as Problem).errors?.map((e) => e.path),
      ['consent'],
    );
  });

  test('a stale account: /transactions answers reauthorization-required naming the account; re-authorizing sends its token upstream and returns a fresh saved account', async () => {
    const { saved } = await linkAndSave();
    const accountToken = [...pair.provider.state.accounts.values()].at(-1)!.accountToken;
    assert.ok(pair.provider.markAccountStale(accountToken));

    const { linkToken, purchase } = await linkSession({ savedAccounts: [saved.sealed] });
    const [offered] = (await offerOf(linkToken)).accounts;
    const { linkRef } = (await (
      await post('/saved-accounts/use', { linkToken, savedAccountId: offered!.id })
    ).json()) as { linkRef: string };
    assert.equal((await post('/saved-accounts/confirm', { linkRef })).status, 204);
    const refused = await pay(linkRef, purchase);
    assert.equal(refused.status, 422);
    const problem = (await refused.json()) as Problem & { providerCode: string };
    assert.equal(problem.type, 'urn:obv-link:problem:reauthorization-required');
    assert.equal(problem.account?.accountId, saved.accountId);
    assert.equal(problem.account?.fiName, 'Sandbox Federal Bank');
    assert.equal(problem.providerCode, 'REAUTHORIZATION_REQUIRED');

    // The merchant makes a link session that re-authorizes it, for the same order.
    const again = await linkSession({
      reauthorize: saved.sealed,
      merchantTransactionId: purchase.merchantTransactionId,
    });
    const offer = await offerOf(again.linkToken);
    assert.equal(offer.reconnect?.fiName, 'Sandbox Federal Bank');
    assert.equal(
      offer.reconnect?.displayLabel,
      'Reconnect Sandbox Federal Bank Checking ••••4321',
      'the type with the masked number, as in the list',
    );
    assert.equal(
      (offer.reconnect as { spokenLabel?: string }).spokenLabel,
      'Reconnect Sandbox Federal Bank, Checking ending in 4321',
    );
    assert.ok(!JSON.stringify(offer).includes(saved.sealed));
    const started = (await (await post('/verifications', { linkToken: again.linkToken })).json()) as {
      sessionId: string;
      consumerUrl: string;
    };
    const request = pair.provider.state.verifications.get(
      new URL(started.consumerUrl).pathname.split('/').pop()!,
    )?.request;
    assert.equal(request?.accountToken, accountToken, 'the verification request carries the saved token');
    await completeConsumerStep(started.consumerUrl, 'good');
    await pair.provider.notificationsSettled();
    const view = (await (await lookup(pair.baseUrl, started.sessionId)).json()) as { outcome: { linkRef: string } };
    const linked = (await (
      await fetch(`${pair.baseUrl}/links/${view.outcome.linkRef}`, { headers: { authorization: AUTH } })
    ).json()) as { savedAccount: SavedAccount };
    assert.equal(linked.savedAccount.accountId, saved.accountId, 'the same saved account, renewed');
    assert.equal(linked.savedAccount.reauthorized, true);
    assert.notEqual(linked.savedAccount.sealed, saved.sealed);
    const paid = await pay(view.outcome.linkRef, again.purchase);
    assert.equal(paid.status, 201, await paid.clone().text());
  });

  /** A stale saved account, and a link session (with saving allowed) that re-authorizes it. */
  async function staleAndReconnect(who: 'good' | 'savings', extra: Record<string, unknown> = { allowSaving: true }) {
    const { saved } = await linkAndSave(who);
    const staleToken = [...pair.provider.state.accounts.values()].at(-1)!.accountToken;
    assert.ok(pair.provider.markAccountStale(staleToken));
    return { saved, staleToken, ...(await linkSession({ reauthorize: saved.sealed, ...extra })) };
  }
  async function finish(started: Response, who: 'good' | 'savings') {
    assert.equal(started.status, 201, await started.clone().text());
    const { sessionId, consumerUrl } = (await started.json()) as { sessionId: string; consumerUrl: string };
    await completeConsumerStep(consumerUrl, who);
    await pair.provider.notificationsSettled();
    const view = (await (await lookup(pair.baseUrl, sessionId)).json()) as {
      outcome: { linkRef: string; note?: string; displayLabel: string };
    };
    const linked = (await (
      await fetch(`${pair.baseUrl}/links/${view.outcome.linkRef}`, { headers: { authorization: AUTH } })
    ).json()) as {
      savedAccount?: SavedAccount;
      reconnect?: { accountId: string; differentAccount: boolean };
      accountLabel: string;
    };
    return { outcome: view.outcome, linked, sessionId, consumerUrl };
  }
  /** Whether `sealed` still needs re-authorizing: chosen in a new link session, its payment is refused so. */
  async function stillStale(sealed: string) {
    const { linkToken, purchase } = await linkSession({ savedAccounts: [sealed] });
    const [offered] = (await offerOf(linkToken)).accounts;
    const { linkRef } = (await (
      await post('/saved-accounts/use', { linkToken, savedAccountId: offered!.id })
    ).json()) as { linkRef: string };
    assert.equal((await post('/saved-accounts/confirm', { linkRef })).status, 204);
    const paid = await pay(linkRef, purchase);
    return (
      paid.status === 422 && ((await paid.json()) as Problem).type === 'urn:obv-link:problem:reauthorization-required'
    );
  }

  test('a reconnect that links a different account: the stale saved account is not relabelled; a new one with its own id and the consent of that start, and the shopper is told', async () => {
    const { saved, linkToken } = await staleAndReconnect('savings');
    assert.equal(saved.fiAccountType, 'SAVINGS');
    const { outcome, linked } = await finish(
      await post('/verifications', { linkToken, consent: CONSENT_VERSION }),
      'good',
    );
    assert.equal(linked.accountLabel, 'Checking ••••4321');
    assert.deepEqual(linked.reconnect, { accountId: saved.accountId, differentAccount: true });
    assert.ok(linked.savedAccount, 'the consent given on the re-authorizing start is kept');
    assert.notEqual(linked.savedAccount.accountId, saved.accountId, "never the stale account's id");
    assert.match(linked.savedAccount.accountId, /^sa_/);
    assert.equal(linked.savedAccount.reauthorized, undefined);
    assert.equal(linked.savedAccount.fiAccountType, 'CHECKING');
    assert.equal(linked.savedAccount.consent?.version, CONSENT_VERSION);
    assert.match(outcome.note ?? '', /isn’t the account you were reconnecting: it will be saved as a new account/);
    assert.ok(
      await stillStale(saved.sealed),
      'the savings account still needs reconnecting (its token was not re-linked)',
    );
    // The new saved account pays.
    assert.equal(await stillStale(linked.savedAccount.sealed), false);
  });

  test('a reconnect that links a different account without the box ticked saves nothing; the same account is renewed, with a consent given again', async () => {
    const different = await staleAndReconnect('savings');
    const none = await finish(await post('/verifications', { linkToken: different.linkToken }), 'good');
    assert.equal(none.linked.savedAccount, undefined);
    assert.deepEqual(none.linked.reconnect, { accountId: different.saved.accountId, differentAccount: true });
    assert.match(none.outcome.note ?? '', /for this purchase only/);

    const same = await staleAndReconnect('good');
    const renewed = await finish(
      await post('/verifications', { linkToken: same.linkToken, consent: CONSENT_VERSION }),
      'good',
    );
    assert.deepEqual(renewed.linked.reconnect, { accountId: same.saved.accountId, differentAccount: false });
    assert.equal(renewed.linked.savedAccount?.accountId, same.saved.accountId);
    assert.equal(renewed.linked.savedAccount?.reauthorized, true);
    assert.equal(renewed.linked.savedAccount?.consent?.version, CONSENT_VERSION);
    assert.equal(renewed.outcome.note, 'Your saved account is reconnected.');
    assert.equal(await stillStale(same.saved.sealed), false, 'the same token works again');
  });

  test('as an attacker: a reconnect never rebinds another user\'s saved account, a consent is refused where saving is not allowed, and "another" sends no stale token', async () => {
    const { saved, linkToken, staleToken } = await staleAndReconnect('good', {});
    // Another user's link session cannot name this saved account to reconnect, nor to offer.
    for (const field of ['reauthorize', 'savedAccounts']) {
      const refused = await server(
        '/link-sessions',
        checkout({ merchantUserId: 'mallory', [field]: field === 'reauthorize' ? saved.sealed : [saved.sealed] }),
      );
      assert.equal(refused.status, 422, field);
    }
    // The re-authorizing link session does not allow saving: a consent sent anyway is refused, naming it.
    const refused = await post('/verifications', { linkToken, consent: CONSENT_VERSION });
    assert.equal(refused.status, 400);
    assert.equal(((await refused.json()) as Problem).errors?.[0]?.path, 'consent');
    // "Use another account": a plain link, the stale token not sent upstream, nothing renewed.
    const started = await post('/verifications', { linkToken, another: true });
    assert.equal(started.status, 201, await started.clone().text());
    const { consumerUrl } = (await started.clone().json()) as { consumerUrl: string };
    const request = pair.provider.state.verifications.get(new URL(consumerUrl).pathname.split('/').pop()!)?.request;
    assert.equal(request?.accountToken, undefined);
    assert.notEqual(request?.accountToken, staleToken);
    const { linked } = await finish(started, 'good');
    assert.equal(linked.savedAccount, undefined);
    assert.equal(linked.reconnect, undefined);
    assert.ok(await stillStale(saved.sealed));
    // `another` only with a link token.
    const bare = await post('/verifications', { another: true });
    assert.equal(bare.status, 400);
  });

  test("the reauthorization codes are configurable: a code not listed passes through as the provider's refusal", async (t) => {
    const other = await startProxyPair({ proxy: { reauthorizationCodes: ['ACCOUNT_STALE'] } });
    t.after(() => other.close());
    const purchase = checkout({ allowSaving: true });
    const { linkToken } = (await (
      await fetch(`${other.baseUrl}/link-sessions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: AUTH },
        body: JSON.stringify(purchase),
      })
    ).json()) as { linkToken: string };
    const started = (await (
      await fetch(`${other.baseUrl}/verifications`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', origin: other.origin },
        body: JSON.stringify({ linkToken }),
      })
    ).json()) as { sessionId: string; consumerUrl: string };
    await completeConsumerStep(started.consumerUrl, 'good');
    await other.provider.notificationsSettled();
    other.provider.markAccountStale();
    const view = (await (await lookup(other.baseUrl, started.sessionId)).json()) as { outcome: { linkRef: string } };
    const paid = await fetch(`${other.baseUrl}/transactions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: AUTH },
      body: JSON.stringify({
        linkRef: view.outcome.linkRef,
        merchantUserId: purchase.merchantUserId,
        merchantTransactionId: purchase.merchantTransactionId,
        amount: purchase.amount,
        currency: 'USD',
      }),
    });
    assert.equal(paid.status, 422);
    const body = (await paid.json()) as { type?: string; errorCode?: string };
    assert.notEqual(body.type, 'urn:obv-link:problem:reauthorization-required');
    assert.equal(body.errorCode, 'REAUTHORIZATION_REQUIRED');
  });
});

describe('saved accounts in merchant events', () => {
  test("link.succeeded carries the saved account and consent (or the chosen account's id); removal and a stale account are events too", async (t) => {
    const endpoint = await startMerchantEndpoint();
    const pair = await startProxyPair({
      proxy: {
        eventsUrl: endpoint.url,
        eventsSecrets: [EVENTS_SECRET],
        eventTimings: {
          retryDelaysMs: [50],
          attemptTimeoutMs: 500,
          pollIntervalMs: 25,
          leaseMs: 2_000,
          sessionCheckDelayMs: 20,
        },
      },
    });
    t.after(async () => {
      await pair.close();
      await endpoint.close();
    });
    const call = (path: string, body: unknown, auth = false) =>
      fetch(`${pair.baseUrl}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', origin: pair.origin, ...(auth ? { authorization: AUTH } : {}) },
        body: JSON.stringify(body),
      });
    const events = async () =>
      (
        (await (await fetch(`${pair.baseUrl}/events?limit=100`, { headers: { authorization: AUTH } })).json()) as {
          events: { type: string; data: Record<string, unknown> }[];
        }
      ).events;

    const first = checkout({ allowSaving: true });
    const { linkToken } = (await (await call('/link-sessions', first, true)).json()) as { linkToken: string };
    const { sessionId, consumerUrl } = (await (
      await call('/verifications', { linkToken, consent: CONSENT_VERSION })
    ).json()) as { sessionId: string; consumerUrl: string };
    await completeConsumerStep(consumerUrl, 'good');
    await pair.provider.notificationsSettled();
    await lookup(pair.baseUrl, sessionId);
    const linked = (await events()).find(
      (e) => e.type === 'link.succeeded' && e.data.merchantTransactionId === first.merchantTransactionId,
    );
    const saved = linked?.data.savedAccount as SavedAccount | undefined;
    assert.match(saved?.sealed ?? '', /^obv1\./);
    assert.equal(saved?.consent?.version, CONSENT_VERSION);

    const next = checkout({ savedAccounts: [saved!.sealed] });
    const again = (await (await call('/link-sessions', next, true)).json()) as { linkToken: string };
    const [offered] = ((await (await call('/saved-accounts/offer', { linkToken: again.linkToken })).json()) as Offer)
      .accounts;
    const { linkRef } = (await (
      await call('/saved-accounts/use', { linkToken: again.linkToken, savedAccountId: offered!.id })
    ).json()) as { linkRef: string };
    // Chosen, not confirmed: no event recorded (an event is recorded before the choice's answer, when there is one).
    assert.equal(
      (await events()).find((e) => e.data.linkRef === linkRef),
      undefined,
      'no event before the confirmation',
    );
    assert.equal((await call('/saved-accounts/confirm', { linkRef })).status, 204);
    const chosen = (await events()).find((e) => e.type === 'link.succeeded' && e.data.linkRef === linkRef);
    assert.equal(chosen?.data.savedAccountId, saved!.accountId);
    assert.equal(chosen?.data.savedAccount, undefined);

    pair.provider.markAccountStale();
    const paid = await call(
      '/transactions',
      {
        linkRef,
        merchantUserId: USER,
        merchantTransactionId: next.merchantTransactionId,
        amount: next.amount,
        currency: 'USD',
      },
      true,
    );
    assert.equal(paid.status, 422);
    const stale = (await events()).find((e) => e.type === 'reauthorization.required');
    assert.deepEqual(
      [stale?.data.accountId, stale?.data.code, stale?.data.merchantTransactionId],
      [saved!.accountId, 'REAUTHORIZATION_REQUIRED', next.merchantTransactionId],
    );

    assert.equal(
      (await call('/saved-accounts/remove', { linkToken: again.linkToken, savedAccountId: offered!.id })).status,
      204,
    );
    const removed = (await events()).filter((e) => e.type === 'saved_account.removed');
    assert.equal(removed.length, 1);
    assert.deepEqual([removed[0]!.data.accountId, removed[0]!.data.merchantUserId], [saved!.accountId, USER]);
    assert.ok(!JSON.stringify(removed[0]).includes(saved!.sealed), 'the removal event names the account, not its seal');
  });
});

describe('saved-account choices and the rate limits', () => {
  let pair: ProxyPair;
  // The starts' limit, as low as a test can make it: choices must not count against it.
  before(async () => {
    pair = await startProxyPair({ proxy: { rateLimit: 3 } });
  });
  after(() => pair.close());

  const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${pair.baseUrl}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: pair.origin, ...headers },
      body: JSON.stringify(body),
    });
  const linkSession = async (extra: Record<string, unknown> = {}) =>
    ((await (await post('/link-sessions', checkout(extra), { authorization: AUTH })).json()) as { linkToken: string })
      .linkToken;

  test("a shopper toggling between saved accounts never meets a limit: choices have their own, and the starts' still holds", async () => {
    const first = await linkSession({ allowSaving: true });
    const started = (await (await post('/verifications', { linkToken: first, consent: CONSENT_VERSION })).json()) as {
      sessionId: string;
      consumerUrl: string;
    };
    await completeConsumerStep(started.consumerUrl, 'good');
    await pair.provider.notificationsSettled();
    const view = (await (await lookup(pair.baseUrl, started.sessionId)).json()) as { outcome: { linkRef: string } };
    const { savedAccount } = (await (
      await fetch(`${pair.baseUrl}/links/${view.outcome.linkRef}`, { headers: { authorization: AUTH } })
    ).json()) as { savedAccount: SavedAccount };
    const linkToken = await linkSession({ savedAccounts: [savedAccount.sealed, savedAccount.sealed] });
    const { accounts } = (await (await post('/saved-accounts/offer', { linkToken })).json()) as Offer;
    const statuses: number[] = [];
    for (let i = 0; i < 40; i++) {
      const response = await post('/saved-accounts/use', {
        linkToken,
        savedAccountId: accounts[i % accounts.length]!.id,
      });
      statuses.push(response.status);
      await response.body?.cancel();
    }
    assert.deepEqual([...new Set(statuses)], [201], 'forty choices within a minute, all made');
    // The starts' own limit (3 a minute from this address, one used above) is untouched by the choices, and still applies.
    const starts: number[] = [];
    for (let i = 0; i < 3; i++) {
      const response = await post('/verifications', { linkToken: await linkSession() });
      starts.push(response.status);
      await response.body?.cancel();
    }
    assert.deepEqual(starts, [201, 201, 429]);
  });
});
