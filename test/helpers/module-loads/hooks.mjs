// Module hooks that append the URL of every module loaded to the file named by OBV_MODULE_LOAD_LOG.
import { appendFileSync } from 'node:fs';
import process from 'node:process';

export async function load(url, context, nextLoad) {
  appendFileSync(process.env.OBV_MODULE_LOAD_LOG, `${url}\n`);
  return nextLoad(url, context);
}
