// The sandbox controls: what a merchant turns to try the unhappy paths without writing code — an account
// gone stale, a verification failing with a chosen code, endpoint 2 or 4 slow or timing out, a notification
// late or sent twice. One set of rules behind the HTTP routes (control-routes.ts), the CLI's subcommands
// (control-cli.ts) and the provider object (`provider.controls`).
import { z } from 'zod';
import type { ProviderContext } from './context.ts';
import { releaseHeld } from './endpoint-faults.ts';
import type { ControlledEndpoint } from './faults.ts';
import { createFaults } from './faults.ts';
import { CONSUMER_CANCELLED, TEST_CONSUMERS } from './sandbox-data.ts';

/** Longest delay a control accepts: ten minutes, beyond any caller's patience. */
export const MAX_CONTROL_DELAY_MS = 600_000;
/** Most events one control may cover at once. */
export const MAX_CONTROL_COUNT = 100;

/** The failures the sandbox's bank reports (CONTRACTS §1), each code with its message. */
export const KNOWN_FAILURES: Readonly<Record<string, string>> = Object.fromEntries([
  ...TEST_CONSUMERS.flatMap((consumer) =>
    consumer.outcome.kind === 'failure'
      ? [[consumer.outcome.failure.errorCode, consumer.outcome.failure.errorMessage]]
      : [],
  ),
  [CONSUMER_CANCELLED.errorCode, CONSUMER_CANCELLED.errorMessage],
]);

const count = z.number().int().min(1).max(MAX_CONTROL_COUNT).default(1);
const endpoint = z.enum(['verification', 'transaction'], {
  error: 'must be "verification" (endpoint 2) or "transaction" (endpoint 4)',
});
const delayMs = z.number().int().min(0).max(MAX_CONTROL_DELAY_MS);

export const StaleInput = z.strictObject({
  consumer: z.string().min(1).max(200).optional(),
  accountToken: z.string().min(1).max(200).optional(),
});
export const FailNextInput = z.strictObject({
  errorCode: z
    .string({ error: 'errorCode is required' })
    .regex(/^[A-Z][A-Z0-9_]{0,63}$/, 'must be an upper-case code such as ACCOUNT_LOCKED'),
  errorMessage: z.string().min(1).max(300).optional(),
  count,
});
export const DelayInput = z.strictObject({ endpoint, ms: delayMs });
export const TimeoutInput = z.strictObject({ endpoint, count });
export const NotifyLateInput = z.strictObject({ ms: delayMs.min(1), count });
export const NotifyTwiceInput = z.strictObject({ count });
export const ResetInput = z.strictObject({});

/** What the controls are set to now (GET /sandbox/controls, and the answer of every control). */
export interface ControlsStatus {
  /** Linked accounts marked stale (of the asking client over HTTP; of every client in code). */
  staleAccounts: number;
  /** Verifications still to fail, and with what. */
  failNext: { count: number; errorCode: string; errorMessage: string } | null;
  /** Milliseconds endpoints 2 and 4 wait before each answer. */
  delayMs: Record<ControlledEndpoint, number>;
  /** Requests to endpoints 2 and 4 still to leave unanswered. */
  timeouts: Record<ControlledEndpoint, number>;
  /** Notifications still to send late, and how late. */
  notifyLate: { count: number; ms: number };
  /** Notifications still to send twice. */
  notifyTwice: number;
}

/** The controls in code: each validates its input as the HTTP route does and throws a TypeError naming the field. */
export interface SandboxControls {
  /**
   * Marks linked accounts stale: endpoint 4 answers `422 REAUTHORIZATION_REQUIRED` for them until a
   * verification carrying the accountToken succeeds. Filters: the test consumer (`user_good`) and/or the
   * accountToken; none marks every account. Returns how many were marked.
   */
  markStale(filter?: z.input<typeof StaleInput>): number;
  /** The next `count` (1) verifications fail at the bank with `errorCode`, whoever signs in. */
  failNext(input: z.input<typeof FailNextInput>): ControlsStatus;
  /** Every request to the endpoint waits `ms` before it is answered (0 turns it off). */
  delay(input: z.input<typeof DelayInput>): ControlsStatus;
  /** The next `count` (1) requests to the endpoint are never answered; nothing is recorded. */
  timeout(input: z.input<typeof TimeoutInput>): ControlsStatus;
  /** The next `count` (1) notifications are sent `ms` late. */
  notifyLate(input: z.input<typeof NotifyLateInput>): ControlsStatus;
  /** The next `count` (1) notifications are delivered twice, with the same `webhook-id`. */
  notifyTwice(input?: z.input<typeof NotifyTwiceInput>): ControlsStatus;
  /** Every fault off (those set by options and env too), stale marks cleared, held requests ended. */
  reset(): ControlsStatus;
  status(): ControlsStatus;
}

function parseOrTypeError<Schema extends z.ZodType>(schema: Schema, input: unknown, control: string): z.output<Schema> {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  const fields = result.error.issues.map((issue) => `${issue.path.join('.') || '(input)'}: ${issue.message}`);
  throw new TypeError(`sandbox control ${control}: ${fields.join('; ')}`);
}

/** The accounts `filter` names, of `clientId` only when given. */
export function staleCandidates(context: ProviderContext, filter: z.output<typeof StaleInput>, clientId?: string) {
  return [...context.state.accounts.values()].filter(
    (account) =>
      (clientId === undefined || account.clientId === clientId) &&
      (filter.consumer === undefined || account.username === filter.consumer) &&
      (filter.accountToken === undefined || account.accountToken === filter.accountToken),
  );
}

/** The controls' status; `clientId` counts that client's stale accounts only. */
export function controlsStatus(context: ProviderContext, clientId?: string): ControlsStatus {
  const { faults } = context;
  const failures = faults.verificationFailures;
  return {
    staleAccounts: [...context.state.accounts.values()].filter(
      (account) => account.stale && (clientId === undefined || account.clientId === clientId),
    ).length,
    failNext: failures.count > 0 ? { ...failures } : null,
    delayMs: { verification: faults.verificationDelayMs, transaction: faults.transactionDelayMs },
    timeouts: { ...faults.endpointTimeouts },
    notifyLate: { count: faults.lateNotifications.count, ms: faults.lateNotifications.delayMs },
    notifyTwice: faults.duplicateNotifications,
  };
}

/** Applies a validated control to the live faults (shared by the routes and the provider object). */
export const apply = {
  failNext(context: ProviderContext, input: z.output<typeof FailNextInput>): void {
    const errorMessage =
      input.errorMessage ??
      KNOWN_FAILURES[input.errorCode] ??
      `The sandbox failed this verification with ${input.errorCode} (fail-next control).`;
    context.faults.verificationFailures = { count: input.count, errorCode: input.errorCode, errorMessage };
  },
  delay(context: ProviderContext, input: z.output<typeof DelayInput>): void {
    if (input.endpoint === 'verification') context.faults.verificationDelayMs = input.ms;
    else context.faults.transactionDelayMs = input.ms;
  },
  timeout(context: ProviderContext, input: z.output<typeof TimeoutInput>): void {
    context.faults.endpointTimeouts[input.endpoint] = input.count;
  },
  notifyLate(context: ProviderContext, input: z.output<typeof NotifyLateInput>): void {
    context.faults.lateNotifications = { count: input.count, delayMs: input.ms };
  },
  notifyTwice(context: ProviderContext, input: z.output<typeof NotifyTwiceInput>): void {
    context.faults.duplicateNotifications = input.count;
  },
  reset(context: ProviderContext, clientId?: string): void {
    Object.assign(context.faults, createFaults());
    for (const account of context.state.accounts.values())
      if (clientId === undefined || account.clientId === clientId) account.stale = false;
    releaseHeld(context);
  },
};

/** The provider object's controls (every client's accounts). */
export function createControls(context: ProviderContext): SandboxControls {
  return {
    markStale(filter = {}) {
      const accounts = staleCandidates(context, parseOrTypeError(StaleInput, filter, 'markStale'));
      for (const account of accounts) account.stale = true;
      return accounts.length;
    },
    failNext(input) {
      apply.failNext(context, parseOrTypeError(FailNextInput, input, 'failNext'));
      return controlsStatus(context);
    },
    delay(input) {
      apply.delay(context, parseOrTypeError(DelayInput, input, 'delay'));
      return controlsStatus(context);
    },
    timeout(input) {
      apply.timeout(context, parseOrTypeError(TimeoutInput, input, 'timeout'));
      return controlsStatus(context);
    },
    notifyLate(input) {
      apply.notifyLate(context, parseOrTypeError(NotifyLateInput, input, 'notifyLate'));
      return controlsStatus(context);
    },
    notifyTwice(input = {}) {
      apply.notifyTwice(context, parseOrTypeError(NotifyTwiceInput, input, 'notifyTwice'));
      return controlsStatus(context);
    },
    reset() {
      apply.reset(context);
      return controlsStatus(context);
    },
    status: () => controlsStatus(context),
  };
}
