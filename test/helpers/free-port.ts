// A loopback port nobody listens on right now, for a server a test starts as a child process (which
// cannot be handed a listening socket). Another process could take it in between; on loopback, during a
// test, that is rare enough to accept.
import { createServer, type AddressInfo } from 'node:net';

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}
