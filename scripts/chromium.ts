// One place for how every test launches Chromium: Debian's binary, headless, with the flags that keep
// it from dialling out (these machines have no internet, and refused connections slow it down).
import { existsSync } from 'node:fs';

export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  '--disable-quic',
];

/** Path to the Chromium binary: `CHROMIUM_PATH` if set, else Debian's `/usr/bin/chromium`. */
export function chromiumPath(): string {
  const path = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
  if (!existsSync(path)) {
    throw new Error(
      `Chromium not found at ${path}: install Debian's chromium (apt-get install chromium) or set CHROMIUM_PATH`,
    );
  }
  return path;
}
