// The delay and time-out controls of endpoints 2 and 4, applied before a request is handled: a slow
// gateway answers late; a timed-out one never answers (the request is held open until the caller gives
// up, and nothing is recorded), as the proxy must survive both.
import type { Response } from 'express';
import type { ProviderContext } from './context.ts';
import type { ControlledEndpoint } from './faults.ts';

/** Holds `res` open without answering; close() and the reset control end it. */
export function holdOpen(context: ProviderContext, res: Response): void {
  context.hanging.add(res);
  res.on('close', () => context.hanging.delete(res));
}

/** Ends every response held open by a time-out fault. */
export function releaseHeld(context: ProviderContext): void {
  for (const res of context.hanging) res.destroy();
  context.hanging.clear();
}

/** Applies `endpoint`'s time-out, then its delay: true when the request was left hanging (the handler stops). */
export async function applyEndpointFaults(
  context: ProviderContext,
  endpoint: ControlledEndpoint,
  res: Response,
): Promise<boolean> {
  const { faults } = context;
  if (faults.endpointTimeouts[endpoint] > 0) {
    faults.endpointTimeouts[endpoint] -= 1;
    context.config.logger.info({ endpoint }, 'request held open (time-out control)');
    holdOpen(context, res);
    return true;
  }
  const delayMs = endpoint === 'verification' ? faults.verificationDelayMs : faults.transactionDelayMs;
  if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs).unref());
  return false;
}
