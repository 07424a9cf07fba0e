// The demo checkout's event panel: not a live region (a screen reader would read the JSON aloud), and a
// keyboard stop with a name once it scrolls, so keyboard users can scroll it too.
import { expect, fixture, html, nextFrame } from '@open-wc/testing';
import { EventLog } from '../../demo/checkout/page/event-log.ts';

describe('demo event panel', () => {
  async function panel(): Promise<{ list: HTMLOListElement; log: EventLog }> {
    const root = await fixture<HTMLElement>(html`<aside>
      <h2 id="events-title">Element events</h2>
      <ol id="event-log" aria-labelledby="events-title" style="height: 120px; overflow-y: auto; margin: 0"></ol>
      <p id="events-empty">No events yet.</p>
    </aside>`);
    const list = root.querySelector('ol')!;
    return { list, log: new EventLog(list, root.querySelector('p')!) };
  }
  const event = (n: number) =>
    new CustomEvent('obv-state-change', { detail: { state: 'waiting', previous: `step-${n}` } });

  it('is no tab stop while everything fits, and one once it scrolls; Clear takes it back', async () => {
    const { list, log } = await panel();
    log.add(event(0));
    await nextFrame();
    expect(list.hasAttribute('tabindex')).to.equal(false);
    for (let n = 1; n < 20 && list.scrollHeight <= list.clientHeight; n++) log.add(event(n));
    expect(list.scrollHeight).to.be.greaterThan(list.clientHeight);
    // Measured and scrolled in the next frame (see EventLog), once for the whole batch.
    expect(list.hasAttribute('tabindex')).to.equal(false);
    await nextFrame();
    expect(list.tabIndex).to.equal(0);
    expect(list.scrollTop, 'the newest entry is scrolled into view').to.be.greaterThan(0);
    await expect(list.parentElement).to.be.accessible();
    log.clear();
    await nextFrame();
    expect(list.hasAttribute('tabindex')).to.equal(false);
  });

  it('announces nothing itself', async () => {
    const { list, log } = await panel();
    log.add(new CustomEvent('obv-error', { detail: { kind: 'network', message: 'x' } }));
    expect(list.closest('[aria-live], [role="log"], [role="status"], [role="alert"]')).to.equal(null);
  });
});
