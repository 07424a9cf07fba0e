// A TCP forwarder on a loopback port standing in for the name a managed database's failover moves (a
// DNS name, a cloud "endpoint"): clients connect to it, it pipes each connection to the current target,
// and `repoint` moves it to another server as the name would move. Connections open at the move are cut,
// as a failover cuts them (the old server is gone); new ones reach the new target. Between a primary and
// its standby it stands for the network, and `hold` for a standby falling behind: what the primary sends
// stops arriving (and never will: `cut` drops it with the connections). Loopback only.
import { connect, createServer, type AddressInfo, type Socket } from 'node:net';

export interface TcpForwarder {
  readonly port: number;
  /** Where new connections go now. */
  readonly targetPort: number;
  /** New connections go to `port` from now on; open ones are cut. */
  repoint(port: number): void;
  /**
   * What the targets send stops reaching the clients (the clients' own bytes still go through); call
   * `cut` after it, never resume: the held bytes are dropped.
   */
  hold(): void;
  /** Cuts every open connection (held bytes are lost); new connections go through, unheld. */
  cut(): void;
  /** Connections accepted since the start. */
  readonly connections: number;
  close(): Promise<void>;
}

export async function startTcpForwarder(targetPort: number): Promise<TcpForwarder> {
  let target = targetPort;
  let accepted = 0;
  const open = new Set<Socket>();
  let held = false;
  const server = createServer((client) => {
    accepted++;
    const upstream = connect(target, '127.0.0.1');
    open.add(client);
    open.add(upstream);
    client.pipe(upstream);
    // By hand rather than piped, so that `hold` can stop it mid-stream.
    upstream.on('data', (chunk: Buffer) => {
      if (!held) client.write(chunk);
    });
    const drop = () => {
      client.destroy();
      upstream.destroy();
      open.delete(client);
      open.delete(upstream);
    };
    for (const socket of [client, upstream]) {
      socket.on('error', drop);
      socket.on('close', drop);
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  const cutAll = () => {
    for (const socket of [...open]) socket.destroy();
    open.clear();
    held = false;
  };
  return {
    port,
    get targetPort() {
      return target;
    },
    get connections() {
      return accepted;
    },
    hold() {
      held = true;
    },
    cut: cutAll,
    repoint(next) {
      target = next;
      cutAll();
    },
    async close() {
      cutAll();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
