// Which browser origins may use the proxy: the proxy's own public origin, the origin the request was
// addressed to (same-origin pages, whatever host name they used), and OBV_ALLOWED_ORIGINS. Shared by the
// HTTP CORS middleware and the WebSocket upgrade check so both enforce the same list.

export interface OriginPolicy {
  /**
   * True when a browser on `origin` may call us. `host` is the request's Host header and `protocol`
   * the scheme it arrived with: an Origin equal to them is same-origin.
   */
  allows(origin: string, host: string | undefined, protocol: string): boolean;
}

export function createOriginPolicy(publicUrl: string, allowedOrigins: readonly string[]): OriginPolicy {
  const allowed = new Set([new URL(publicUrl).origin, ...allowedOrigins]);
  return {
    allows(origin, host, protocol) {
      if (allowed.has(origin)) return true;
      return host !== undefined && origin === `${protocol}://${host}`;
    },
  };
}
