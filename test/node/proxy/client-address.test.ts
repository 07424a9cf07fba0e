// The WebSocket upgrade's client address is decided as Express decides `req.ip`: the same `trust proxy`
// forms compile to the same answers, and the address walk is proxy-addr's.
import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { describe, test } from 'node:test';
import express from 'express';
import { compileTrust, createClientAddress } from '../../../proxy/http/client-address.ts';

const SETTINGS: unknown[] = [
  false,
  true,
  0,
  1,
  2,
  'loopback',
  'loopback, 10.0.0.0/8',
  ['127.0.0.1', '192.168.0.0/255.255.0.0', 'uniquelocal'],
  (address: string) => address.startsWith('10.'),
];
const ADDRESSES = ['127.0.0.1', '::1', '10.1.2.3', '192.168.4.5', 'fd00::1', '203.0.113.9', '::ffff:127.0.0.1'];

function upgrade(peer: string, forwardedFor?: string): IncomingMessage {
  const headers = forwardedFor === undefined ? {} : { 'x-forwarded-for': forwardedFor };
  const socket = { remoteAddress: peer };
  return { headers, socket, connection: socket } as unknown as IncomingMessage;
}

describe('client address of an upgrade', () => {
  for (const setting of SETTINGS) {
    test(`trust proxy ${typeof setting === 'function' ? 'function' : JSON.stringify(setting)} trusts what Express trusts`, () => {
      const app = express();
      app.set('trust proxy', setting);
      const expressTrust = app.get('trust proxy fn') as (address: string, hop: number) => boolean;
      const ours = compileTrust(app.get('trust proxy'));
      for (const address of ADDRESSES) {
        for (const hop of [0, 1, 2, 3])
          assert.equal(ours(address, hop), expressTrust(address, hop), `${address} at hop ${hop}`);
      }
    });
  }

  test('walks X-Forwarded-For to the first untrusted hop, and strips ::ffff:', () => {
    let setting: unknown = 1;
    const addressOf = createClientAddress(() => setting);
    assert.equal(addressOf(upgrade('::ffff:127.0.0.1', '6.6.6.6, 203.0.113.7')), '203.0.113.7');
    assert.equal(addressOf(upgrade('::ffff:127.0.0.1')), '127.0.0.1');
    setting = 2;
    assert.equal(addressOf(upgrade('127.0.0.1', '6.6.6.6, 203.0.113.7')), '6.6.6.6');
    setting = 'loopback';
    assert.equal(addressOf(upgrade('127.0.0.1', '6.6.6.6, 203.0.113.7')), '203.0.113.7');
    setting = false;
    assert.equal(addressOf(upgrade('127.0.0.1', '6.6.6.6')), '127.0.0.1');
  });

  test('is empty, not a crash, when the peer has already gone (no socket address)', () => {
    const gone = (forwardedFor?: string) => upgrade(undefined as unknown as string, forwardedFor);
    // Expected: the walk as proxy-addr makes it, with no peer address to start from.
    const cases: Array<[unknown, string, string]> = [
      [false, '', ''],
      [1, '', '6.6.6.6'],
      ['loopback', '', ''],
    ];
    for (const [setting, alone, forwarded] of cases) {
      const addressOf = createClientAddress(() => setting);
      assert.equal(addressOf(gone()), alone, `trust proxy ${String(setting)}`);
      assert.equal(addressOf(gone('6.6.6.6')), forwarded, `trust proxy ${String(setting)} with X-Forwarded-For`);
    }
  });
});
