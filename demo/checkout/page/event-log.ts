// The checkout's side panel: every event the element fires, with its time and detail. References, session
// ids and idempotency keys are masked for display: a screen share or a screenshot of the demo must not
// leak a value someone could use.

/** Keeps the first and last four characters: enough to tell two tokens apart, not enough to use one. */
export function maskToken(token: string): string {
  if (token.length <= 10) return '•'.repeat(token.length);
  return `${token.slice(0, 4)}••••${token.slice(-4)}`;
}

/** A URL with every query value masked: the bank link's one-time token is as private as an account token. */
function maskQuery(url: string): string {
  try {
    const parsed = new URL(url);
    for (const [name, value] of [...parsed.searchParams]) parsed.searchParams.set(name, maskToken(value));
    return decodeURIComponent(parsed.href);
  } catch {
    return maskToken(url);
  }
}

/** Detail fields that are capabilities or secrets, whatever their length. */
const MASKED_KEYS = new Set(['accountToken', 'linkRef', 'sessionId', 'idempotencyKey']);

/** JSON of an event detail with every reference, id and key (and the bank link's token) masked. */
export function describeDetail(detail: unknown): string {
  if (detail === undefined || detail === null) return '';
  return JSON.stringify(
    detail,
    (key, value: unknown) => {
      if (MASKED_KEYS.has(key) && typeof value === 'string') return maskToken(value);
      if (key === 'consumerUrl' && typeof value === 'string') return maskQuery(value);
      if (value instanceof Error) return { name: value.name, message: value.message };
      return value;
    },
    2,
  );
}

/** `{state, previous}` details read better as one line: `starting → waiting`. */
function transition(detail: unknown): string | undefined {
  if (typeof detail !== 'object' || detail === null) return undefined;
  const { state, previous, ...rest } = detail as Record<string, unknown>;
  if (typeof state !== 'string' || typeof previous !== 'string' || Object.keys(rest).length > 0) return undefined;
  return `${previous} → ${state}`;
}

function clockTime(date: Date): string {
  const pad = (n: number, width = 2) => String(n).padStart(width, '0');
  return `${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}.${pad(date.getMilliseconds(), 3)}`;
}

/** Tone of an event in the panel, from its name. */
function toneOf(name: string): string {
  if (/success/.test(name)) return 'good';
  if (/fail|error|expired|blocked/.test(name)) return 'bad';
  if (/cancel/.test(name)) return 'warn';
  if (/state-change/.test(name)) return 'quiet';
  return 'info';
}

/** Renders event entries into an `<ol>` and toggles the empty-state paragraph. */
export class EventLog {
  #newest: HTMLElement | undefined;
  #frameRequested = false;

  constructor(
    private readonly list: HTMLOListElement,
    private readonly empty: HTMLElement,
  ) {}

  add(event: Event): void {
    const item = document.createElement('li');
    item.className = `event tone-${toneOf(event.type)}`;
    item.dataset.event = event.type;

    const head = document.createElement('div');
    head.className = 'event-head';
    const name = document.createElement('span');
    name.className = 'event-name';
    name.textContent = event.type;
    const time = document.createElement('time');
    time.className = 'event-time';
    const now = new Date();
    time.dateTime = now.toISOString();
    time.textContent = clockTime(now);
    head.append(name, time);
    item.append(head);

    const raw = (event as CustomEvent<unknown>).detail;
    const change = transition(raw);
    const detail = change ?? describeDetail(raw);
    if (detail && detail !== '{}') {
      const pre = document.createElement('pre');
      pre.className = 'event-detail';
      pre.textContent = detail;
      item.append(pre);
    }
    this.list.append(item);
    this.empty.hidden = true;
    this.#newest = item;
    this.#inNextFrame();
  }

  clear(): void {
    this.list.replaceChildren();
    this.empty.hidden = false;
    this.#newest = undefined;
    this.#inNextFrame();
  }

  /**
   * Scrolling to the newest entry and measuring the list read the layout. Done in an event handler, that
   * read lays out the whole page before the element's own update, at the moment the shopper waits for it
   * (a linked account's obv-state-change and obv-success: 5–10 ms each in Chromium, measured). In the
   * next frame, once for all the events of a task, it costs only the layout that frame does anyway.
   */
  #inNextFrame(): void {
    if (this.#frameRequested) return;
    this.#frameRequested = true;
    requestAnimationFrame(() => {
      this.#frameRequested = false;
      this.#newest?.scrollIntoView({ block: 'nearest' });
      this.#focusableWhenScrolling();
    });
  }

  /** A list that scrolls must be reachable by keyboard to be scrolled (WCAG 2.1.1); one that does not is no tab stop. */
  #focusableWhenScrolling(): void {
    if (this.list.scrollHeight > this.list.clientHeight) this.list.tabIndex = 0;
    else this.list.removeAttribute('tabindex');
  }
}
