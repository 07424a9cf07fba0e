// Bearer authentication of endpoints 2 and 4 (RFC 6750). Every failure is a 401 problem with a
// `WWW-Authenticate: Bearer … error="invalid_token"` challenge, so a client knows to fetch a new token.
import type { RequestHandler } from 'express';
import type { ProviderContext } from './context.ts';
import { HttpProblem } from './problem.ts';
import { SANDBOX_REALM } from './sandbox-data.ts';

function unauthorized(detail: string): HttpProblem {
  return new HttpProblem(401, detail, {
    headers: {
      'WWW-Authenticate': `Bearer realm="${SANDBOX_REALM}", error="invalid_token", error_description="${detail}"`,
    },
  });
}

/** Express middleware: sets `res.locals.clientId` for a live token, else answers 401. */
export function requireBearer(context: ProviderContext): RequestHandler {
  return (req, res, next) => {
    // RFC 6750 §2.1: "Bearer" 1*SP b64token, the scheme name case-insensitive.
    const match = /^Bearer +([A-Za-z0-9\-._~+/]+=*)$/i.exec(req.get('authorization')?.trim() ?? '');
    if (!match?.[1]) throw unauthorized('An Authorization: Bearer access token is required.');
    const issued = context.state.tokens.get(match[1]);
    if (!issued) throw unauthorized('The access token is unknown.');
    if (issued.revoked) throw unauthorized('The access token has been revoked.');
    if (issued.expiresAt <= context.config.now()) throw unauthorized('The access token has expired.');
    res.locals.clientId = issued.clientId;
    next();
  };
}
