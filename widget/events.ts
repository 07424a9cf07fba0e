// The element's events, typed once: listeners get a typed `detail` through GlobalEventHandlersEventMap.

/** Where the element stands in the linking flow (`saved`: the returning shopper's saved accounts are listed). */
export type ObvState = 'idle' | 'saved' | 'starting' | 'waiting' | 'success' | 'failure' | 'expired' | 'error';

/**
 * The linked account as the page may see it: display fields and `linkRef`, an opaque reference only the
 * merchant's server can redeem (the account's token never reaches the browser).
 */
export interface ObvAccount {
  linkRef: string;
  accountLabel: string;
  fiName: string;
  fiAccountType: string;
}

export type ObvErrorKind = 'network' | 'configuration' | 'popup-blocked' | 'expired';

export interface ObvEventDetails {
  'obv-start': { idempotencyKey: string };
  'obv-open': { sessionId: string; consumerUrl: string };
  /** The account, with its line as shown (`displayLabel`) and as a screen reader should say it (`spokenLabel`). */
  'obv-success': ObvAccount & { displayLabel: string; spokenLabel: string };
  'obv-failure': { code: string; message: string };
  'obv-cancel': { sessionId?: string };
  'obv-error': { kind: ObvErrorKind; message: string };
  'obv-state-change': { state: ObvState; previous: ObvState };
}

export type ObvEventName = keyof ObvEventDetails;

declare global {
  interface GlobalEventHandlersEventMap {
    'obv-start': CustomEvent<ObvEventDetails['obv-start']>;
    'obv-open': CustomEvent<ObvEventDetails['obv-open']>;
    'obv-success': CustomEvent<ObvEventDetails['obv-success']>;
    'obv-failure': CustomEvent<ObvEventDetails['obv-failure']>;
    'obv-cancel': CustomEvent<ObvEventDetails['obv-cancel']>;
    'obv-error': CustomEvent<ObvEventDetails['obv-error']>;
    'obv-state-change': CustomEvent<ObvEventDetails['obv-state-change']>;
  }
}

/** Dispatches an `obv-*` event that bubbles and crosses shadow roots, so a page can listen on `document`. */
export function emit<K extends ObvEventName>(target: EventTarget, name: K, detail: ObvEventDetails[K]): void {
  target.dispatchEvent(new CustomEvent(name, { detail, bubbles: true, composed: true }));
}

/** `obv-success` for a linked account (session-client.ts's LinkedAccount): its fields and its line as shown and spoken. */
export function emitSuccess(
  target: EventTarget,
  { account, label: [displayLabel, spokenLabel] }: { account: ObvAccount; label: [string, string] },
): void {
  emit(target, 'obv-success', { ...account, displayLabel, spokenLabel: spokenLabel || displayLabel });
}
