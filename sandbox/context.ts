// What every route module of the provider is built from. One object, so the modules share state
// without reaching into each other.
import type { Response } from 'express';
import type { ProviderFaults } from './faults.ts';
import type { Notifier } from './notifier.ts';
import type { ProviderConfig } from './options.ts';
import type { ProviderState } from './state.ts';
import type { ProviderStats } from './stats.ts';

export interface ProviderContext {
  config: ProviderConfig;
  state: ProviderState;
  faults: ProviderFaults;
  stats: ProviderStats;
  notifier: Notifier;
  /** Responses held open by a time-out fault (token, verification, transaction): close() and reset end them. */
  hanging: Set<Response>;
}
