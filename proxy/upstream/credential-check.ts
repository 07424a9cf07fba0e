// Whether the provider accepts OBV_CLIENT_ID / OBV_CLIENT_SECRET: checked with one token request at boot
// (`proxy.checkCredentials()`, which `npm start` calls), then kept current by every later token request,
// so /readyz can say "not ready" for wrong credentials without asking the provider on each probe.
import type { Logger } from 'pino';
import { TokenError } from './errors.ts';
import { privateCaAdvice, untrustedCertificateCode } from './tls-trust.ts';

/**
 * `unchecked`: nothing asked yet. `checking`: the first request is in flight. `accepted`: the last token
 * request got a token. `refused`: the token endpoint refused the credentials (an RFC 6749 error).
 * `unreachable`: the last request got no answer (network, time-out, 5xx): says nothing about them.
 */
export type CredentialStatus = 'unchecked' | 'checking' | 'accepted' | 'refused' | 'unreachable';

export interface CredentialCheck {
  status: CredentialStatus;
  /** The provider's error code when refused (`invalid_client`, …). */
  code?: string;
}

/** After a refusal, /readyz asks again at most this often (a fix at the provider's side then shows). */
export const REFUSED_RECHECK_MS = 60_000;

export class CredentialState {
  #check: CredentialCheck = { status: 'unchecked' };
  #lastAttemptAt = 0;

  constructor(private readonly now: () => number) {}

  get current(): CredentialCheck {
    return this.#check;
  }

  /** Due for another token request: refused long enough ago that asking once more is cheap. */
  get recheckDue(): boolean {
    return this.#check.status === 'refused' && this.now() - this.#lastAttemptAt >= REFUSED_RECHECK_MS;
  }

  started(): void {
    this.#lastAttemptAt = this.now();
    if (this.#check.status === 'unchecked') this.#check = { status: 'checking' };
  }

  /** The outcome of any token request (the boot check or a shopper's). */
  record(error?: unknown): CredentialCheck {
    this.#lastAttemptAt = this.now();
    if (error === undefined) this.#check = { status: 'accepted' };
    else if (error instanceof TokenError) this.#check = { status: 'refused', code: error.sentCode };
    else this.#check = { status: 'unreachable' };
    return this.#check;
  }
}

/** The one boot log line: what was checked, against which variables, and what to do. */
export function logCredentialCheck(logger: Logger, check: CredentialCheck, error: unknown, baseUrl: string): void {
  const variables = 'OBV_CLIENT_ID / OBV_CLIENT_SECRET';
  if (check.status === 'accepted') {
    logger.info({ baseUrl }, `credentials accepted: the provider at OBV_BASE_URL issued a token for ${variables}`);
  } else if (check.status === 'refused') {
    logger.error(
      { baseUrl, code: check.code, reason: (error as Error).message },
      `credentials refused: the provider at OBV_BASE_URL would not issue a token for ${variables} (${check.code}); /readyz answers 503 until it does`,
    );
  } else {
    // A private CA gets its own words: the fix is NODE_EXTRA_CA_CERTS, not the credentials or the network.
    const code = untrustedCertificateCode(error);
    logger.warn(
      { baseUrl, reason: error instanceof Error ? error.message : String(error) },
      code
        ? `credentials not checked: ${privateCaAdvice(code, 'OBV_BASE_URL')}`
        : `credentials not checked: the token endpoint at OBV_BASE_URL did not answer; ${variables} are checked again with the first verification`,
    );
  }
}
