// A pino logger whose every line is kept in memory, so a test can assert on log lines (and scan them
// for secrets). Uses the proxy's own logger factory, so the redaction under test is the real one.
import { Writable } from 'node:stream';
import type { Logger } from 'pino';
import { createLogger } from '../../proxy/common/logger.ts';

export interface LogCapture {
  logger: Logger;
  /** Raw JSON lines, in order. */
  lines: string[];
  /** Parsed lines. */
  records(): Record<string, unknown>[];
  /** Lines whose `msg` contains `text`. */
  find(text: string): Record<string, unknown>[];
}

export function captureLogs(level: 'debug' | 'info' | 'trace' = 'debug'): LogCapture {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      for (const line of chunk.toString('utf8').split('\n')) if (line.trim() !== '') lines.push(line);
      callback();
    },
  });
  const logger = createLogger(level, sink);
  const records = () => lines.map((line) => JSON.parse(line) as Record<string, unknown>);
  return {
    logger,
    lines,
    records,
    find: (text) => records().filter((record) => String(record.msg ?? '').includes(text)),
  };
}
