// A provider's test environment served with a certificate of its own CA: Node refuses the handshake with
// one of these codes, and the fix is NODE_EXTRA_CA_CERTS (never NODE_TLS_REJECT_UNAUTHORIZED=0, which
// would send the client secret to anyone). Named in the boot's log line and by `npx obv-link-proxy doctor`.

/** Node's codes for a certificate it does not trust: a private CA in the chain, or a certificate of its own. */
const UNTRUSTED_CERTIFICATE = new Set([
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'UNABLE_TO_GET_ISSUER_CERT',
  'CERT_UNTRUSTED',
]);

/** The untrusted-certificate code anywhere in `error`'s causes, if any. */
export function untrustedCertificateCode(error: unknown): string | undefined {
  const seen = new Set<unknown>();
  const queue: unknown[] = [error];
  while (queue.length > 0) {
    const current = queue.shift();
    if (!(current instanceof Error) || seen.has(current)) continue;
    seen.add(current);
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && UNTRUSTED_CERTIFICATE.has(code)) return code;
    queue.push((current as { cause?: unknown }).cause, ...(current instanceof AggregateError ? current.errors : []));
  }
  return undefined;
}

/** What to do about it, naming the variable whose URL was called. */
export function privateCaAdvice(code: string, variable: string): string {
  return (
    `${variable}'s certificate is signed by a CA this Node does not trust (${code}): start the process with ` +
    "NODE_EXTRA_CA_CERTS=<that CA's PEM file> (read once at start; never NODE_TLS_REJECT_UNAUTHORIZED=0)"
  );
}
