// The custom-elements.json that `npm run build` generates from the JSDoc (built here by the test runner
// into test-results/bundle/), and the element guide (docs/ELEMENT.md), checked against what the element really
// has: its observed attributes, the parts it renders, the custom properties its stylesheet reads, the
// events it fires. A part, property or event added without its documentation fails here.
import { expect, fixture, html } from '@open-wc/testing';
import '../../widget/obv-link-account.ts';
import { ObvLinkAccountElement } from '../../widget/obv-link-account-element.ts';
import { ACCOUNT, FakeSocket, SESSION, until, useWorld } from './helpers.ts';

interface Named {
  name: string;
  type?: { text: string };
}
interface Declaration {
  tagName?: string;
  customElement?: boolean;
  attributes: Named[];
  events: Named[];
  cssParts: Named[];
  cssProperties: Named[];
  slots: Named[];
  members: Named[];
}

// Taken before the tests stub fetch for the fake proxy.
const realFetch = window.fetch.bind(window);
const names = (list: Named[]) => list.map((item) => item.name).sort();

async function manifestDeclaration(): Promise<Declaration> {
  const manifest = (await (await realFetch('/test-results/bundle/custom-elements.json')).json()) as {
    modules: Array<{ declarations?: Declaration[] }>;
  };
  const found = manifest.modules.flatMap((mod) => mod.declarations ?? []).filter((d) => d.customElement);
  expect(found.map((d) => d.tagName)).to.deep.equal(['obv-link-account']);
  return found[0]!;
}

async function elementGuide(): Promise<string> {
  const guide = await realFetch('/docs/ELEMENT.md');
  if (!guide.ok) throw new Error(`docs/ELEMENT.md: ${guide.status}`);
  return guide.text();
}

/** Every `part` the element renders on the way through its screens (both kinds of waiting, a failed change). */
async function renderedParts(world: ReturnType<ReturnType<typeof useWorld>>): Promise<string[]> {
  const parts = new Set<string>();
  const collect = async (el: ObvLinkAccountElement) => {
    await el.updateComplete;
    for (const node of el.shadowRoot!.querySelectorAll('[part]'))
      for (const part of node.getAttribute('part')!.split(/\s+/)) parts.add(part);
  };
  const el = await fixture<ObvLinkAccountElement>(html`<obv-link-account></obv-link-account>`);
  await collect(el);
  const wait = async () => {
    el.start();
    await until(() => el.state === 'waiting', 'waiting');
    await collect(el);
    FakeSocket.last.accept();
  };
  await wait();
  FakeSocket.last.receive({ type: 'result', sessionId: SESSION.sessionId, outcome: { status: 'success', ...ACCOUNT } });
  await collect(el);
  world.open.returns(null);
  await wait();
  FakeSocket.last.receive({
    type: 'result',
    sessionId: SESSION.sessionId,
    outcome: { status: 'failure', code: 'X', message: 'No.' },
  });
  await collect(el);
  return [...parts].sort();
}

describe('custom-elements.json and the element guide (docs/ELEMENT.md)', () => {
  const world = useWorld();

  it('lists every attribute the element observes, and no internal state', async () => {
    const declaration = await manifestDeclaration();
    const observed = [...ObvLinkAccountElement.observedAttributes, 'state'].sort();
    expect(names(declaration.attributes)).to.deep.equal(observed);
    expect(declaration.members.filter((member) => /^[_#]/.test(member.name))).to.deep.equal([]);
  });

  it('lists every part the element renders', async () => {
    const declaration = await manifestDeclaration();
    expect(names(declaration.cssParts)).to.deep.equal(await renderedParts(world()));
  });

  it('lists every custom property the stylesheet reads', async () => {
    const declaration = await manifestDeclaration();
    const el = await fixture<ObvLinkAccountElement>(html`<obv-link-account></obv-link-account>`);
    const css = [...el.shadowRoot!.adoptedStyleSheets[0]!.cssRules].map((rule) => rule.cssText).join('\n');
    const read = [...new Set([...css.matchAll(/var\((--obv-[a-z-]+)/g)].map((match) => match[1]!))].sort();
    expect(read.length).to.be.greaterThan(0);
    expect(names(declaration.cssProperties)).to.deep.equal(read);
  });

  it("lists the seven obv- events, each with its detail type, and the form control's change", async () => {
    const declaration = await manifestDeclaration();
    expect(names(declaration.events)).to.deep.equal([
      'change',
      'obv-cancel',
      'obv-error',
      'obv-failure',
      'obv-open',
      'obv-start',
      'obv-state-change',
      'obv-success',
    ]);
    for (const event of declaration.events)
      expect(event.type?.text, event.name).to.match(event.name === 'change' ? /^Event$/ : /^CustomEvent<.+>$/);
  });

  it('documents in docs/ELEMENT.md every attribute, event, part, custom property and slot of the manifest', async () => {
    const declaration = await manifestDeclaration();
    const section = await elementGuide();
    const documented = [
      declaration.attributes,
      declaration.events,
      declaration.cssParts,
      declaration.cssProperties,
      declaration.slots,
    ].flatMap(names);
    const missing = documented.filter((name) => !section.includes(`\`${name}\``) && !section.includes(`"${name}"`));
    expect(missing).to.deep.equal([]);
  });
});
