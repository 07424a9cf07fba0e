// Adopted as a constructable stylesheet by Lit: no <style> element, so a strict CSP needs no 'unsafe-inline'.
// unsafeCSS over a constant rather than the css tag: the same CSSResult, without the tag's validation code
// (≈100 gzip bytes of the size budget). Nothing here is interpolated, so nothing is unsafe.
import { unsafeCSS } from 'lit';

export const styles = unsafeCSS(`
  /* The defaults follow the page's colour scheme (light-dark() reads the color-scheme the element
     inherits): dark on a page that declares color-scheme: light dark in dark mode, as the hosted page
     does; light on a page that declares none. */
  :host {
    --_accent: var(--obv-accent, light-dark(#2554d8, #93b4ff));
    --_radius: var(--obv-radius, 12px);
    --_text: var(--obv-text, light-dark(#1c2434, #eef0f3));
    --_muted: var(--obv-muted, light-dark(#5b6474, #b7bfcc));
    --_surface: var(--obv-surface, light-dark(#fff, #1f242b));
    --_border: var(--obv-border, light-dark(#dde2ea, #3a414c));
    --_danger: var(--obv-danger, light-dark(#b42318, #ff8a80));
    display: block;
    max-width: 32rem;
    font: 0.9375rem/1.45 var(--obv-font, system-ui, sans-serif);
    color: var(--_text);
    /* A narrow column (a 320 px phone): less padding (after .card), so labels and an account beside its Remove fit one line. */
    container-type: inline-size;
  }
  :host([hidden]) {
    display: none;
  }
  /* Icon and text side by side, the actions on a line of their own below: full width for long (Spanish)
     labels on a 320 px phone. */
  .card {
    --_tone: var(--_accent);
    display: flex;
    flex-wrap: wrap;
    gap: 0.875rem;
    padding: 1rem 1.125rem;
    background: var(--_surface);
    border: 1px solid var(--_border);
    border-radius: var(--_radius);
    box-shadow: 0 1px 2px #1018280f;
  }
  .success {
    --_tone: var(--obv-success, light-dark(#13795b, #6fd3a8));
  }
  .danger {
    --_tone: var(--_danger);
  }
  /* Remove's confirming button: destructive, in the danger colour (a failure's retry keeps the accent). */
  .ask .primary {
    --_accent: var(--_danger);
  }
  /* Narrow: after .card, which it overrides. */
  @container (width < 20rem) {
    .card {
      gap: 0.75rem;
      padding: 0.875rem 0.75rem;
    }
  }
  .icon {
    flex: none;
    display: grid;
    place-items: center;
    width: 2.5rem;
    height: 2.5rem;
    border-radius: 50%;
    color: var(--_tone);
    background: color-mix(in srgb, var(--_tone) 11%, var(--_surface));
  }
  svg {
    width: 1.375rem;
    fill: none;
    stroke: currentColor;
    stroke-width: 1.8;
    stroke-linecap: round;
  }
  .spinner {
    width: 1.25rem;
    height: 1.25rem;
    border: 2.5px solid color-mix(in srgb, var(--_accent) 25%, transparent);
    border-top-color: var(--_accent);
    border-radius: 50%;
    animation: spin 0.8s linear infinite;
  }
  @keyframes spin {
    to {
      rotate: 1turn;
    }
  }
  /* A ring with one coloured side still says "busy", without moving. */
  @media (prefers-reduced-motion: reduce) {
    .spinner {
      animation: none;
    }
  }
  /* Forced colours paint every side in one colour (a plain circle, however it turns): only the top side
     is drawn then, an arc. */
  @media (forced-colors: active) {
    .spinner {
      border-style: solid none none;
    }
  }
  .body {
    flex: 1;
    min-width: 0;
  }
  p {
    margin: 0.25rem 0 0;
    color: var(--_muted);
  }
  .title {
    margin: 0;
    padding-top: 0.45rem;
    font-weight: 600;
    font-size: 1rem;
    color: var(--_text);
  }
  /* The default red darkened on a light surface, lightened on a dark one (it follows the text colour). */
  .error {
    color: var(--obv-danger, color-mix(in srgb, #b42318 55%, var(--_text)));
  }
  .account {
    padding: 0.625rem 0.75rem;
    border-radius: calc(var(--_radius) - 4px);
    color: var(--_text);
    background: color-mix(in srgb, var(--_text) 4%, var(--_surface));
  }
  .fi {
    display: block;
    font-weight: 600;
  }
  /* Read by screen readers, not shown: the spoken form of the masked account number. */
  .sr {
    position: absolute;
    width: 1px;
    height: 1px;
    overflow: hidden;
    clip-path: inset(50%);
  }
  /* Buttons grow to fill their line: side by side they share it, stacked they have one width. */
  .actions {
    display: flex;
    flex-wrap: wrap;
    flex-basis: 100%;
    gap: 0.5rem;
  }
  /* One line each (max-content basis): side by side while both fit, else stacked; a label longer than the
     whole line still wraps, centred like a button's. */
  button,
  a {
    flex: 1 1 max-content;
    display: inline-flex;
    align-items: center;
    justify-content: center;
    text-align: center;
    /* At least 44 px tall (one 21.75 px line, padding, border), whatever the box-sizing: <a> and <button> differ. */
    padding: 0.7rem 0.5rem;
    font: inherit;
    font-weight: 600;
    text-decoration: none;
    color: var(--_text);
    background: var(--_surface);
    border: 1px solid var(--_border);
    border-radius: calc(var(--_radius) - 4px);
    cursor: pointer;
  }
  .primary {
    color: var(--obv-accent-contrast, light-dark(#fff, #0b1020));
    background: var(--_accent);
    border-color: var(--_accent);
  }
  /* The buttons and the link only: a filter on a hovered row would dim its Remove too. */
  :is(button, a):hover {
    filter: brightness(0.94);
  }
  /* Returning shoppers (views.ts): the saved accounts, one per row, and the consent box, full width;
     so is a paragraph in a row (the Remove question's). */
  .list,
  .consent,
  /* Each account a row of its own, ruled off from the next, Remove beside its account, even on a phone. */
  .row {
    display: flex;
    flex-wrap: wrap;
    align-items: center;
    gap: 0 0.375rem;
    padding: 0.25rem 0;
  }
  .row+.row {
    border-top: 1px solid var(--_border);
  }
  /* Remove's question: the actions' layout (class "actions ask"), the words in the text colour. */
  .ask p {
    margin: 0;
    color: var(--_text);
  }
  /* A 24 px target. */
  summary {
    min-height: 1.5rem;
  }
  /* The radio's (and the checkbox's) label is the 44 px target. */
  /* Never narrower than its longest word: Remove never overlaps it. On a 320 px phone "Corriente ••••4321"
     may break after the type word, under the bank's name: Remove stays beside its account. */
  label {
    flex: 1 1 0;
    min-width: min-content;
    display: flex;
    gap: 0.5rem;
    align-items: center;
    min-height: 2.75rem;
  }
  /* Remove beside an account: lighter than the account it removes (no border, regular weight). */
  .row > button {
    flex: none;
    font-weight: 400;
    border-color: transparent;
  }

  :focus-visible {
    outline: 2px solid var(--_accent);
    outline-offset: 2px;
  }
  :disabled {
    cursor: not-allowed;
    opacity: 0.55;
  }
`);
