// Endpoint 1: POST /exp/auth/mint/v1/oauth2/token — OAuth 2.0 client credentials (RFC 6749 §4.4) with
// Basic client authentication. The provider puts grant_type and scope in the QUERY (docs/UPSTREAM.md#d2-token-parameters); the form body is also
// read, as RFC 6749 expects, and a parameter given twice (or differently in both places) is refused.
import { randomBytes } from 'node:crypto';
import type { Request, Response } from 'express';
import express, { Router } from 'express';
import type { ProviderContext } from './context.ts';
import { holdOpen } from './endpoint-faults.ts';
import { methodNotAllowed } from './error-handlers.ts';
import type { SandboxClient } from './sandbox-data.ts';
import { SANDBOX_REALM, TOKEN_SCOPE } from './sandbox-data.ts';
import { secretsMatch } from './secrets.ts';
import { TOKEN_FORM_LIMITS } from './limits.ts';

export const TOKEN_PATH = '/exp/auth/mint/v1/oauth2/token';

/** The error codes the provider lists (RFC 6749 §5.2; docs/UPSTREAM.md#d3-token-errors). */
export type TokenErrorCode =
  'invalid_request' | 'invalid_client' | 'invalid_grant' | 'unauthorized_client' | 'unsupported_grant_type';

class TokenError extends Error {
  readonly code: TokenErrorCode;
  constructor(code: TokenErrorCode, description: string) {
    super(description);
    this.code = code;
  }
}

function sendTokenError(res: Response, error: TokenError): void {
  res.set('Cache-Control', 'no-store').set('Pragma', 'no-cache');
  if (error.code === 'invalid_client') {
    // RFC 6749 §5.2: a client that authenticated with the Authorization header gets a 401 and a challenge.
    res.status(401).set('WWW-Authenticate', `Basic realm="${SANDBOX_REALM}", charset="UTF-8"`);
  } else {
    res.status(400);
  }
  res.json({ error: error.code, error_description: error.message });
}

/**
 * Reads a parameter from the query and the form body; absent → undefined. RFC 6749 §3.2 forbids a
 * parameter more than once; the same value in both places is tolerated (a client may send both).
 */
function readParameter(req: Request, name: string): string | undefined {
  const values: unknown[] = [];
  for (const source of [req.query, req.body as Record<string, unknown> | undefined]) {
    const value = source?.[name];
    if (value !== undefined) values.push(value);
  }
  if (values.length === 0) return undefined;
  const [first] = values;
  if (typeof first !== 'string' || values.some((value) => value !== first)) {
    throw new TokenError('invalid_request', `The ${name} parameter must be given once.`);
  }
  return first;
}

/** Parses `Authorization: Basic base64(urlencoded id ":" urlencoded secret)` (RFC 6749 §2.3.1). */
function readBasicCredentials(header: string | undefined): { clientId: string; clientSecret: string } {
  // RFC 7617 §2: "Basic" 1*SP token68, the scheme name case-insensitive.
  const match = /^Basic +([A-Za-z0-9+/=_-]+)$/i.exec(header?.trim() ?? '');
  if (!match?.[1])
    throw new TokenError('invalid_request', 'Client authentication with an Authorization: Basic header is required.');
  const decoded = Buffer.from(match[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 1) throw new TokenError('invalid_request', 'The Basic credentials must be client_id:client_secret.');
  try {
    return {
      clientId: decodeURIComponent(decoded.slice(0, colon).replace(/\+/g, ' ')),
      clientSecret: decodeURIComponent(decoded.slice(colon + 1).replace(/\+/g, ' ')),
    };
  } catch {
    throw new TokenError('invalid_request', 'The Basic credentials are not correctly encoded.');
  }
}

function authenticateClient(clients: readonly SandboxClient[], clientId: string, clientSecret: string): SandboxClient {
  const client = clients.find((candidate) => candidate.clientId === clientId);
  if (!client || !secretsMatch(clientSecret, client.clientSecret)) {
    throw new TokenError(
      'invalid_client',
      'Client authentication failed: no authorization exists for this client identifier and secret.',
    );
  }
  return client;
}

/** Answers a token request with a token, or throws the RFC 6749 error the provider lists for the case. */
function grantToken(context: ProviderContext, req: Request): { token: string; client: SandboxClient } {
  if (!req.is('application/x-www-form-urlencoded')) {
    throw new TokenError('invalid_request', 'Content-Type must be application/x-www-form-urlencoded.');
  }
  const { clientId, clientSecret } = readBasicCredentials(req.get('authorization'));
  const client = authenticateClient(context.config.clients, clientId, clientSecret);

  const grantType = readParameter(req, 'grant_type');
  if (grantType === undefined || grantType === '')
    throw new TokenError('invalid_request', 'The grant_type parameter is required.');
  if (grantType !== 'client_credentials') {
    throw new TokenError('unsupported_grant_type', 'Only grant_type=client_credentials is supported.');
  }
  const scope = readParameter(req, 'scope');
  if (scope === undefined || scope === '') throw new TokenError('invalid_request', 'The scope parameter is required.');
  if (scope !== TOKEN_SCOPE) throw new TokenError('invalid_request', `The scope must be ${TOKEN_SCOPE}.`);

  if (client.standing === 'revoked')
    throw new TokenError('invalid_grant', 'The authorization of this client has been revoked.');
  if (client.standing === 'unauthorized') {
    throw new TokenError('unauthorized_client', 'This client may not obtain an access token for this service.');
  }

  const token = randomBytes(32).toString('base64url');
  context.state.tokens.set(token, {
    clientId: client.clientId,
    scope,
    expiresAt: context.config.now() + context.config.tokenTtlSeconds * 1000,
    revoked: false,
  });
  return { token, client };
}

/** Applies the `tokenFailures` fault: true when this request has been answered (or left hanging). */
function applyTokenFault(context: ProviderContext, res: Response): boolean {
  const fault = context.faults.tokenFailures;
  if (fault.count <= 0) return false;
  fault.count -= 1;
  if (fault.kind === 'timeout') {
    // Never answer: the caller's timeout must fire. close() ends these responses.
    holdOpen(context, res);
    return true;
  }
  res.status(503).set('Cache-Control', 'no-store').set('Retry-After', '1').json({
    error: 'temporarily_unavailable',
    error_description: 'The authorization server is temporarily unavailable (sandbox fault).',
  });
  return true;
}

/** The token endpoint. */
export function tokenRouter(context: ProviderContext): Router {
  const router = Router();
  router.post(TOKEN_PATH, express.urlencoded({ extended: false, ...TOKEN_FORM_LIMITS }), (req, res) => {
    context.stats.tokenRequests += 1;
    if (applyTokenFault(context, res)) return;
    try {
      const { token, client } = grantToken(context, req);
      context.stats.tokensIssued += 1;
      context.config.logger.info({ clientId: client.clientId }, 'token issued');
      res.set('Cache-Control', 'no-store').set('Pragma', 'no-cache').json({
        access_token: token,
        expires_in: context.config.tokenTtlSeconds,
        token_type: 'Bearer',
      });
    } catch (error) {
      if (!(error instanceof TokenError)) throw error;
      context.config.logger.info({ error: error.code }, 'token refused');
      sendTokenError(res, error);
    }
  });
  router.all(TOKEN_PATH, methodNotAllowed('POST'));
  return router;
}
