// The sandbox provider (sandbox/) in its own process, as the real one would be: its CPU is not the
// proxy's, and its counters say how many token requests reached it.
import { startProvider } from '../../sandbox/index.ts';
import { WEBHOOK_SECRET } from '../lib/notifications.ts';
import { serveRpc } from '../lib/rpc.ts';

const provider = await startProvider({
  port: 0,
  webhookSecret: WEBHOOK_SECRET,
  // Every start of the run fits without evictions.
  maxEntries: 500_000,
});

serveRpc({
  url: () => provider.url,
  stats: () => ({ ...provider.stats }),
  /** The accountTokens the sandbox issued so far (the payment section's direct baseline spends one). */
  accountTokens: () => [...provider.state.accounts.keys()],
});
