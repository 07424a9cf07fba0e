// Keep-alive HTTP for the bench's own requests. Latency measurements use one connection driven one
// request at a time: they want the server's time, not the client's connection set-up or queueing.
import http from 'node:http';

export interface JsonResponse {
  status: number;
  body: string;
}

/** An HTTP client for one origin: `maxSockets` 1 (the default) makes it sequential. */
export class SequentialClient {
  readonly #agent: http.Agent;

  constructor(
    readonly origin: string,
    maxSockets = 1,
  ) {
    this.#agent = new http.Agent({ keepAlive: true, maxSockets });
  }

  /** Sends `body` as JSON and resolves with the whole response; rejects after `timeoutMs`. */
  request(
    method: string,
    path: string,
    body: unknown,
    headers: Record<string, string> = {},
    timeoutMs = 10_000,
  ): Promise<JsonResponse> {
    const payload = typeof body === 'string' ? body : body === undefined ? '' : JSON.stringify(body);
    return new Promise((resolve, reject) => {
      const request = http.request(
        `${this.origin}${path}`,
        {
          method,
          agent: this.#agent,
          timeout: timeoutMs,
          headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload), ...headers },
        },
        (response) => {
          const chunks: Buffer[] = [];
          response.on('data', (chunk: Buffer) => chunks.push(chunk));
          response.on('end', () =>
            resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }),
          );
          response.on('error', reject);
        },
      );
      request.on('timeout', () => request.destroy(new Error(`${method} ${path} timed out after ${timeoutMs} ms`)));
      request.on('error', reject);
      request.end(payload);
    });
  }

  close(): void {
    this.#agent.destroy();
  }
}

/** Throws unless `response` has `expected` status, quoting the body (the first thing to read when a bench breaks). */
export function expectStatus(response: JsonResponse, expected: number, what: string): void {
  if (response.status !== expected) {
    throw new Error(`${what}: expected HTTP ${expected}, got ${response.status}: ${response.body.slice(0, 500)}`);
  }
}
