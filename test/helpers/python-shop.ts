// Runs examples/python-shop/shop.py (python3, standard library only) on a free loopback port.
import path from 'node:path';
import { cleanEnv, ROOT, startChild, type Child } from '../package/temp-apps.ts';

export const PYTHON_SHOP = path.join(ROOT, 'examples/python-shop/shop.py');

export interface RunningPythonShop {
  /** `http://127.0.0.1:PORT` */
  url: string;
  child: Child;
  close(): Promise<void>;
}

export interface PythonShopEnv {
  /** The proxy as the shop's server and the page reach it, mount path included. */
  OBV_PROXY_URL: string;
  OBV_MERCHANT_API_KEY: string;
  /** The proxy's OBV_EVENTS_SECRETS: the `whsec_…` secrets it signs its merchant events with, comma-separated. */
  OBV_EVENTS_SECRETS: string;
  /** The element's file, served by the shop at /assets/obv-link-account.js (default: from node_modules/obv-link). */
  OBV_ELEMENT_FILE?: string;
  /** Default 0 (a free port, printed at boot). */
  PORT?: string;
}

/**
 * `script`: the shop to run (default: this checkout's); `cwd`: where relative paths (the script, the
 * default OBV_ELEMENT_FILE) resolve.
 */
export async function startPythonShop(
  env: PythonShopEnv,
  { cwd = ROOT, script = PYTHON_SHOP } = {},
): Promise<RunningPythonShop> {
  const child = startChild('python3', [script], {
    cwd,
    env: cleanEnv({ PORT: '0', PYTHONUNBUFFERED: '1', PYTHONDONTWRITEBYTECODE: '1', ...env }),
  });
  let url: string;
  try {
    [, url] = (await child.waitFor(/python shop listening on (http:\/\/\S+)/)) as unknown as [string, string];
  } catch (error) {
    child.kill();
    throw error;
  }
  return {
    url,
    child,
    async close() {
      child.process.kill('SIGTERM');
      await child.exited();
    },
  };
}
