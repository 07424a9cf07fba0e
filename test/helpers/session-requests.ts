// The browser's session requests (CONTRACTS §2), as the element sends them: the id in a JSON body, never in
// the URL. `base` is the proxy's mount URL (…/obv).

/** POST {base}/sessions/lookup: what the proxy says about the session. */
export function lookupSession(
  base: string,
  sessionId: string,
  headers: Record<string, string> = {},
): Promise<Response> {
  return fetch(`${base}/sessions/lookup`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ sessionId }),
  });
}

/** POST {base}/sessions/cancel: the element's Cancel. */
export function cancelSession(
  base: string,
  sessionId: string,
  headers: Record<string, string> = {},
): Promise<Response> {
  return fetch(`${base}/sessions/cancel`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ sessionId }),
  });
}
