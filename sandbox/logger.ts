// A logger shape that pino satisfies, so the CLI can pass pino while tests stay silent by default.
// Callers log ids and outcomes only: never client secrets, bearer tokens, one-time tokens or passwords.

/** Structured logger the provider writes to. pino's `Logger` fits it. */
export interface ProviderLogger {
  info(fields: object, message: string): void;
  warn(fields: object, message: string): void;
  error(fields: object, message: string): void;
}

/** The default: tests and library users get no output unless they pass a logger. */
export const silentLogger: ProviderLogger = {
  info: () => {},
  warn: () => {},
  error: () => {},
};
