// The client address of a raw request (the WebSocket upgrade, which Express never sees), decided as
// Express decides `req.ip`: the app's `trust proxy` setting compiled the way Express compiles it, then
// proxy-addr (what Express uses) walks X-Forwarded-For from the nearest hop to the first untrusted one.
import type { IncomingMessage } from 'node:http';
import proxyAddr from 'proxy-addr';

/** A compiled `trust proxy`: is the hop at distance `hop` (0 = the socket's peer) a trusted proxy? */
export type TrustFunction = (address: string, hop: number) => boolean;

/**
 * Express's `trust proxy` value (`app.get('trust proxy')`) as a function, as Express compiles it:
 * `true` trusts every hop, a number that many hops, a string or list the addresses/subnets proxy-addr
 * knows, a function is used as it is; `false` or unset trusts nothing.
 */
export function compileTrust(setting: unknown): TrustFunction {
  if (typeof setting === 'function') return setting as TrustFunction;
  if (setting === true) return () => true;
  if (typeof setting === 'number') return (_address, hop) => hop < setting;
  if (typeof setting === 'string') return proxyAddr.compile(setting.split(',').map((entry) => entry.trim()));
  return proxyAddr.compile((setting as string[] | false | undefined) || []);
}

/** `::ffff:1.2.3.4` → `1.2.3.4`. */
export function plainAddress(address: string): string {
  return address.startsWith('::ffff:') && address.includes('.') ? address.slice(7) : address;
}

/**
 * The client address of `req` under `trust`. Read at each upgrade from the app the router is mounted
 * in (it inherits the parent's `trust proxy` only once mounted); the last compiled setting is reused.
 */
export function createClientAddress(trustSetting: () => unknown): (req: IncomingMessage) => string {
  let compiledFor: unknown;
  let trust: TrustFunction | undefined;
  return (req) => {
    const setting = trustSetting();
    if (trust === undefined || setting !== compiledFor) {
      trust = compileTrust(setting);
      compiledFor = setting;
    }
    // A socket whose peer has already gone has no address (proxy-addr then answers undefined).
    return plainAddress((proxyAddr(req, trust) as string | undefined) ?? '');
  };
}
