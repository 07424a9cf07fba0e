// A child process that opens the SQLite storage on the data directory named in argv[2], says `ready`
// on stdout, and holds it until killed: another process for the tests of one proxy per directory.
import { createLogger } from '../../proxy/index.ts';
import { createStorage } from '../../proxy/storage/create-storage.ts';

createStorage({ kind: 'sqlite', dataDir: process.argv[2]!, logger: createLogger('silent') });
process.stdout.write('ready\n');
setInterval(() => undefined, 60_000);
