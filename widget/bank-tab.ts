// The tab the consumer verifies in. It is opened synchronously inside the click (a pop-up blocker lets
// nothing else through) on the proxy's "Connecting to your bank…" page, and navigated on to the bank once
// the bank's URL is known. It is opened by the element's sandboxed frame, so the frame is the tab's
// opener: the bank's page cannot navigate the checkout (reverse tabnabbing), while the checkout,
// same-origin with the frame, may still bring the tab forward and close it. Never with the checkout as
// its opener: see openBankTab.

/** The start of the tab's name: "Go to the bank tab" finds it with `open('', name)`, which also brings it to the front. */
export const BANK_TAB = 'obv-bank';

/**
 * The current tab's name, new at each opening: a tab left from the last bank step (its return page still
 * closing itself, a moment later under load) is never reused by name, so its closing cannot take the new
 * bank step's tab with it.
 */
let tabName = BANK_TAB;

// Plain functions over the tab (`null` for none: blocked, closed, or left to close itself), not a class:
// the build shortens function names, not method names, and the element's bytes are budgeted.

/** Opens `url` in the bank tab from `opener`; `null` when the browser blocked it. */
export function openBankTab(opener: Window, url: string): Window | null {
  tabName = BANK_TAB + Date.now().toString(36);
  const tab = opener.open(url, tabName);
  // Opened by the page itself (the frame did not exist yet), the tab loses its opener at once: the bank's
  // page then has nothing to navigate. Still at its initial about:blank, same-origin with us, the tab
  // accepts this. Not done for the frame's tabs: Chromium would then refuse to bring them forward or close them.
  if (tab && opener === window) tab.opener = null;
  return tab;
}

/** Sends the tab on to `url`; `null` when there is no tab to send (blocked, closed, or out of reach). */
export function navigateBankTab(tab: Window | null, url: string): Window | null {
  try {
    if (tab && !tab.closed) {
      tab.location.href = url;
      return tab;
    }
  } catch {
    // No longer reachable from here.
  }
  return null;
}

/** Brings the tab to the front; `null` when the consumer closed it. */
export function showBankTab(tab: Window | null): Window | null {
  if (!tab || tab.closed) return null;
  // tab.focus() is refused: only the tab's opener (the frame) may call it. Naming it is allowed. A tab
  // that closed a moment ago may not say so yet: the name then opens a blank tab, closed at once.
  const named = window.open('', tabName);
  if (named === tab) return tab;
  named?.close();
  return null;
}

/** Closes the tab if it is still there; `null`, the tab to hold from then on. */
export function closeBankTab(tab: Window | null): null {
  try {
    tab?.close();
  } catch {
    // Already gone.
  }
  return null;
}
