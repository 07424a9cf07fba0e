// A certificate authority of a test's own and a server certificate for 127.0.0.1 it signed (openssl), as
// docs/GOING-TO-PRODUCTION.md's staging rehearsal makes them: Node trusts them only with NODE_EXTRA_CA_CERTS.
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

export interface PrivateCa {
  /** The CA's certificate (PEM file), for NODE_EXTRA_CA_CERTS. */
  caFile: string;
  key: Buffer;
  cert: Buffer;
}

export function makePrivateCa(dir: string): PrivateCa {
  const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
  openssl(
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    'ca-key.pem',
    '-out',
    'test-ca.pem',
    '-days',
    '1',
    '-subj',
    '/CN=obv-link test CA',
  );
  openssl(
    'req',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    'server-key.pem',
    '-out',
    'server.csr',
    '-subj',
    '/CN=127.0.0.1',
  );
  writeFileSync(path.join(dir, 'san.cnf'), 'subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\n');
  openssl(
    'x509',
    '-req',
    '-in',
    'server.csr',
    '-CA',
    'test-ca.pem',
    '-CAkey',
    'ca-key.pem',
    '-CAcreateserial',
    '-out',
    'server-cert.pem',
    '-days',
    '1',
    '-extfile',
    'san.cnf',
  );
  return {
    caFile: path.join(dir, 'test-ca.pem'),
    key: readFileSync(path.join(dir, 'server-key.pem')),
    cert: readFileSync(path.join(dir, 'server-cert.pem')),
  };
}
