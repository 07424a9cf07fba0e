// The bank page's stylesheet, served as a file so the page's CSP can forbid inline styles and scripts.

export const BANK_CSS_PATH = '/consumer-assets/bank.css';

export const BANK_CSS = `
:root {
  --bank-ink: #13233a;
  --bank-muted: #4a5a70;
  --bank-brand: #0b4f8a;
  --bank-brand-dark: #083a66;
  --bank-line: #c9d3e0;
  --bank-error: #a4161a;
  color-scheme: light;
  font-family: system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif;
  color: var(--bank-ink);
  background: #eef2f7;
}
* { box-sizing: border-box; }
body { margin: 0; min-height: 100vh; display: flex; flex-direction: column; }
.bank-bar { background: var(--bank-brand); color: #fff; padding: 14px 24px; display: flex; align-items: center; gap: 12px; }
.bank-logo { width: 36px; height: 36px; border-radius: 50%; background: #fff; color: var(--bank-brand);
  display: grid; place-items: center; font-weight: 800; font-size: 14px; letter-spacing: .5px; }
.bank-name { font-size: 18px; font-weight: 700; letter-spacing: .2px; }
main { flex: 1; display: flex; justify-content: center; align-items: flex-start; padding: 48px 16px; }
.card { width: 100%; max-width: 440px; background: #fff; border: 1px solid var(--bank-line); border-radius: 12px;
  box-shadow: 0 8px 24px rgba(19, 35, 58, .08); padding: 32px; }
h1 { font-size: 22px; margin: 0 0 8px; text-wrap: balance; }
.lead { margin: 0 0 24px; color: var(--bank-muted); line-height: 1.45; }
.field { display: flex; flex-direction: column; gap: 6px; margin-bottom: 16px; }
label { font-weight: 600; font-size: 14px; }
/* Field borders ≥ 3:1 against the card (#6b7a90 on white is 4.4:1). */
input[type="text"], input[type="password"] { font: inherit; padding: 10px 12px; border: 1px solid #6b7a90; border-radius: 8px; }
/* The focus ring ≥ 3:1 against the white card around it (the brand blue is 8.4:1). */
input:focus-visible, button:focus-visible, .error:focus { outline: 3px solid var(--bank-brand); outline-offset: 2px; }
input[aria-invalid="true"] { border-color: var(--bank-error); }
.error { margin: 0 0 16px; padding: 10px 12px; border-radius: 8px; background: #fdecec; color: var(--bank-error);
  border: 1px solid #f3b6b6; font-weight: 600; }
/* Side by side while they fit, stacked (one width) on a 320 px phone in Spanish. */
.actions { display: flex; flex-wrap: wrap; gap: 12px; margin-top: 8px; }
.actions button { flex: 1 1 auto; }
button { white-space: nowrap; font: inherit; font-weight: 600; padding: 10px 14px; border-radius: 8px; cursor: pointer; border: 1px solid var(--bank-brand); }
.primary { background: var(--bank-brand); color: #fff; flex: 1; }
.primary:hover { background: var(--bank-brand-dark); }
.secondary { background: #fff; color: var(--bank-brand); }
.secondary:hover { background: #eef4fb; }
.sandbox-note { margin: 24px 0 0; padding-top: 16px; border-top: 1px dashed var(--bank-line); font-size: 13px; line-height: 1.9; color: var(--bank-muted); }
.sandbox-note code { background: #eef2f7; padding: 2px 5px; border-radius: 4px; white-space: nowrap; font-size: 12px; }
footer { text-align: center; font-size: 12px; color: var(--bank-muted); padding: 16px; }
`;
