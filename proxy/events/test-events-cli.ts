// `npx obv-link-proxy send-test-event [type]`: the proxy's configuration from the environment (as `npm
// start` reads it), one signed sample of `type` — or of every type — to OBV_EVENTS_URL, one line each.
// Exit code 0 when every sample was answered 2xx, 1 otherwise, 2 for a bad type or configuration.
import { ConfigError, configFromEnv } from '../config/schema.ts';
import { EVENT_TYPES, type EventType } from '../storage/events.ts';
import { sendTestEvents } from './test-events.ts';

export async function sendTestEventsFromCli(
  type: string | undefined,
  write: (line: string) => void = (line) => process.stdout.write(`${line}\n`),
): Promise<number> {
  if (type !== undefined && !(EVENT_TYPES as string[]).includes(type)) {
    write(
      `send-test-event: unknown event type ${JSON.stringify(type)}; one of ${EVENT_TYPES.join(', ')} (or none for all)`,
    );
    return 2;
  }
  let config;
  try {
    config = configFromEnv();
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    write(error.message);
    return 2;
  }
  if (!config.eventsUrl || !config.eventsSecrets?.length) {
    write(
      'send-test-event: set OBV_EVENTS_URL and OBV_EVENTS_SECRETS (where merchant events go, and the secrets that sign them)',
    );
    return 2;
  }
  const results = await sendTestEvents(
    { eventsUrl: config.eventsUrl, eventsSecrets: config.eventsSecrets },
    type as EventType | undefined,
  );
  for (const { event, status, error } of results)
    write(`${event.type} ${event.id} → ${status ?? 'no answer'}${error ? ` (${error})` : ''}`);
  return results.every((result) => result.error === undefined) ? 0 : 1;
}
