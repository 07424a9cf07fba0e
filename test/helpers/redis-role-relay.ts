// A TCP relay between one proxy instance and redis-server that can cut ONE of the instance's Redis
// connections while the others keep working. It tells the connections apart by the name each one sets
// on connect (`CLIENT SETNAME obv-link:commands|publisher|subscriber`, see
// proxy/storage/redis/connection.ts), which is the first command ioredis sends. Loopback only.
import { connect, createServer, type AddressInfo, type Socket } from 'node:net';

export type RedisRole = 'commands' | 'publisher' | 'subscriber';

const ROLE_PATTERN = /obv-link:(commands|publisher|subscriber)/;
/** The name arrives in the first command; stop looking after this many bytes. */
const SNIFF_LIMIT = 1024;

interface Link {
  client: Socket;
  server: Socket;
  role?: RedisRole;
}

export interface RedisRoleRelay {
  /** `redis://127.0.0.1:{port}`: give it to the instance instead of Redis's own URL. */
  readonly url: string;
  /** Drops every open connection of `role` and refuses new ones (they are closed once they name themselves). */
  cut(role: RedisRole): void;
  /** Lets `role` connect again. */
  restore(role: RedisRole): void;
  /** How many connections of `role` named themselves since the relay started (reconnects included). */
  connectionsSeen(role: RedisRole): number;
  close(): Promise<void>;
}

export async function startRedisRoleRelay(redisPort: number): Promise<RedisRoleRelay> {
  const links = new Set<Link>();
  const blocked = new Set<RedisRole>();
  const seen: Record<RedisRole, number> = { commands: 0, publisher: 0, subscriber: 0 };

  const drop = (link: Link): void => {
    link.client.destroy();
    link.server.destroy();
    links.delete(link);
  };

  const server = createServer((client) => {
    const upstream = connect(redisPort, '127.0.0.1');
    const link: Link = { client, server: upstream };
    links.add(link);
    let sniffed = '';
    client.on('data', (chunk: Buffer) => {
      if (!link.role && sniffed.length < SNIFF_LIMIT) {
        sniffed += chunk.toString('latin1');
        const match = ROLE_PATTERN.exec(sniffed);
        if (match) {
          link.role = match[1] as RedisRole;
          seen[link.role]++;
        }
      }
      if (link.role && blocked.has(link.role)) return drop(link);
      upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => client.write(chunk));
    for (const socket of [client, upstream]) {
      socket.on('error', () => drop(link));
      socket.on('close', () => drop(link));
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;

  return {
    url: `redis://127.0.0.1:${port}`,
    cut(role) {
      blocked.add(role);
      for (const link of [...links]) if (link.role === role) drop(link);
    },
    restore(role) {
      blocked.delete(role);
    },
    connectionsSeen: (role) => seen[role],
    async close() {
      for (const link of [...links]) drop(link);
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
