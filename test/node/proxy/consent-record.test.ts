// The consent record's `ip` and `userAgent` come from the request that started the linking: attacker
// text until checked. The record carries the address in its canonical form (or nothing) and a bounded,
// printable user agent, whatever the headers held.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { CONSENT_USER_AGENT_MAX } from '../../../proxy/accounts/consent.ts';
import { CONSENT_VERSION } from '../../../proxy/words/consent.ts';
import { savingFor } from '../../../proxy/accounts/saving.ts';
import type { LinkSession } from '../../../proxy/link-sessions/link-sessions.ts';
import { openSavingConsent } from '../../../proxy/sealing/sealed-outcome.ts';
import { createSealer } from '../../../proxy/sealing/sealer.ts';

const sealer = createSealer([{ id: 'k1', key: Buffer.alloc(32, 7) }]);
const deps = { now: () => Date.UTC(2026, 10, 24), config: { merchantName: undefined }, sealer };
const session = { allowSaving: true, language: 'en', merchantUserId: 'user-1' } as unknown as LinkSession;

/** The consent record a start with these request values makes. */
function consentFrom(ip: string | undefined, userAgent: string | undefined) {
  const consent = savingFor(deps, { address: ip, userAgent }, session, CONSENT_VERSION)?.consent;
  assert.ok(consent);
  // Personal data at rest: the record keeps the address and user agent sealed, for this user only.
  assert.deepEqual(
    Object.keys(consent).filter((key) => key === 'ip' || key === 'userAgent'),
    [],
  );
  assert.ok('sealedClient' in consent);
  assert.ok(!consent.sealedClient.includes(ip ?? '\u0000'));
  assert.throws(() => openSavingConsent(sealer, 'user-2', consent), /tampered|altered/);
  return openSavingConsent(sealer, 'user-1', consent);
}

describe("the consent record's origin", () => {
  test("the address is what node:net parses, in its canonical form; anything else (a forwarded header's text) is left out", () => {
    assert.equal(consentFrom('203.0.113.7', 'UA').ip, '203.0.113.7');
    assert.equal(consentFrom('::ffff:203.0.113.7', 'UA').ip, '203.0.113.7');
    assert.equal(consentFrom('::FFFF:cb00:7107', 'UA').ip, '203.0.113.7');
    assert.equal(consentFrom('2001:DB8:0:0:0:0:0:1', 'UA').ip, '2001:db8::1');
    assert.equal(consentFrom('fe80::1%eth0', 'UA').ip, 'fe80::1');
    for (const junk of [
      '<script>alert(1)</script>',
      'x'.repeat(512),
      '203.0.113.7, 10.0.0.1',
      ' 203.0.113.7',
      '010.0.0.1',
      undefined,
    ]) {
      assert.equal(consentFrom(junk, 'UA').ip, '', String(junk));
    }
  });

  test(`the user agent is cut to ${CONSENT_USER_AGENT_MAX} characters, without control or format characters`, () => {
    assert.equal(
      consentFrom('203.0.113.7', 'Mozilla/5.0 (X11; Linux x86_64) Firefox/140.0').userAgent,
      'Mozilla/5.0 (X11; Linux x86_64) Firefox/140.0',
    );
    const long = consentFrom('203.0.113.7', 'A'.repeat(512)).userAgent;
    assert.equal(long.length, CONSENT_USER_AGENT_MAX);
    assert.equal(
      consentFrom('203.0.113.7', 'Evil\u0000\u001b[31m\u0085Agent\u202e\u2028  /1\t2 ').userAgent,
      'Evil[31mAgent /1 2',
    );
    assert.equal(consentFrom('203.0.113.7', undefined).userAgent, '');
    // A character outside the BMP is never cut in half.
    const emoji = consentFrom('203.0.113.7', `${'a'.repeat(CONSENT_USER_AGENT_MAX - 1)}😀😀`).userAgent;
    assert.ok(!/[\uD800-\uDBFF]$/.test(emoji), 'no lone surrogate at the end');
  });
});
