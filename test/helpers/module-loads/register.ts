// `node --import tsx --import ./test/helpers/module-loads/register.ts …`: records every module the
// process loads (see hooks.mjs), so a test can tell which parts of the proxy a configuration pulls in.
import { register } from 'node:module';

register('./hooks.mjs', import.meta.url);
