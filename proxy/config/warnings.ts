// Protections a valid configuration may switch off: each is said once at boot, in one line naming the
// variable, so an operator reading the log learns what is off without reading the settings. Strings
// only: the proxy (createObvProxy) and npm start (server.ts) log them.
import { BlockList, isIP } from 'node:net';
import type { ProxyConfig } from './schema.ts';
import { merchantApiKeys } from './merchant-api-keys.ts';
import { envName } from './env.ts';
import { SANE_LIMITS } from './limits.ts';

/** Where a listener is reachable from this machine only. */
const LOOPBACK = new BlockList();
LOOPBACK.addSubnet('127.0.0.0', 8, 'ipv4');
LOOPBACK.addAddress('::1', 'ipv6');
LOOPBACK.addSubnet('::ffff:127.0.0.0', 104, 'ipv6');

/** Whether `host` (an address or a name) is this machine's loopback. */
export function isLoopbackHost(host: string): boolean {
  if (host === 'localhost') return true;
  const family = isIP(host);
  return family !== 0 && LOOPBACK.check(host, family === 4 ? 'ipv4' : 'ipv6');
}

/** What each limit counts, for its line. */
const LIMIT_UNITS: Record<keyof typeof SANE_LIMITS, string> = {
  rateLimit: 'verification starts a minute per client address',
  authFailureLimit: 'wrong API keys per client address in 15 minutes',
  maxSocketsPerSession: 'WebSockets per session',
  maxSocketsPerClient: 'WebSockets per client address',
  maxSockets: 'WebSockets on this instance',
};

/**
 * A limit set so high it limits nothing (above SANE_LIMITS; the total of sockets also above the open-file
 * limit `fileLimit`), one line each: the operator meant to raise it, not to switch it off unsaid.
 */
export function limitWarnings(config: Pick<ProxyConfig, keyof typeof SANE_LIMITS>, fileLimit?: number): string[] {
  const warnings: string[] = [];
  for (const key of Object.keys(SANE_LIMITS) as (keyof typeof SANE_LIMITS)[]) {
    const value = config[key];
    if (value === undefined || value <= SANE_LIMITS[key]) continue;
    warnings.push(
      `${envName(key)}=${value}: ${value.toLocaleString('en-US')} ${LIMIT_UNITS[key]} limits nothing (at most ` +
        `${SANE_LIMITS[key].toLocaleString('en-US')} still protects the proxy); lower it${key === 'rateLimit' || key === 'authFailureLimit' ? ', or set 0 to say it is off' : ''}`,
    );
  }
  if (
    config.maxSockets !== undefined &&
    config.maxSockets <= SANE_LIMITS.maxSockets &&
    fileLimit !== undefined &&
    config.maxSockets > fileLimit
  ) {
    warnings.push(
      `${envName('maxSockets')}=${config.maxSockets}: more WebSockets than this process may open files (${fileLimit}); ` +
        'when they run out nothing else works (starts, notifications, /healthz): lower it, or raise the file limit (ulimit -n)',
    );
  }
  return warnings;
}

/**
 * The proxy's protections that `config` switches off, one line each (createObvProxy logs them at warn):
 * the bank step's binding outside sandbox mode (sandbox mode's own line says it), the start limit, the
 * failed API-key limit (when there is a key), trace logging, a Redis URL without a password, and limits
 * set so high they limit nothing (limitWarnings).
 */
export function protectionWarnings(config: ProxyConfig, fileLimit?: number): string[] {
  const warnings: string[] = [];
  if (!config.bindBankStep && !config.sandbox) {
    warnings.push(
      'OBV_BIND_BANK_STEP=false: bank steps are not bound to the browser that started them ' +
        '(a consumerUrl sent to someone else can link their account for the sender; docs/PROXY.md "Security notes")',
    );
  }
  if (config.rateLimit === 0) warnings.push('OBV_RATE_LIMIT=0: verification starts are not limited per client address');
  if (config.authFailureLimit === 0 && merchantApiKeys(config).length > 0) {
    warnings.push(
      'OBV_AUTH_FAILURE_LIMIT=0: wrong API keys on /transactions and /links are not limited per client address',
    );
  }
  if (config.logLevel === 'trace')
    warnings.push(
      'OBV_LOG_LEVEL=trace: troubleshooting verbosity (every debug line, and what libraries log at trace); use info in production',
    );
  if (config.redisUrl && URL.canParse(config.redisUrl) && new URL(config.redisUrl).password === '') {
    warnings.push(
      'OBV_REDIS_URL has no password: anyone who reaches that Redis reads and changes sessions, outcomes and payments ' +
        '(redis://:password@host or an ACL user:password@)',
    );
  }
  warnings.push(...limitWarnings(config, fileLimit));
  return warnings;
}

/** npm start's listeners that `config` opens beyond this machine without protection (server.ts logs them). */
export function listenerWarnings(config: ProxyConfig): string[] {
  if (config.metricsPort === undefined || isLoopbackHost(config.metricsHost)) return [];
  return [
    `OBV_METRICS_HOST=${config.metricsHost}: /metrics (no authentication) is served beyond this machine on port ${config.metricsPort}; ` +
      "bind it to 127.0.0.1 or reach it through your network's own access control",
  ];
}
