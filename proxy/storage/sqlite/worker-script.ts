// The start of every worker thread's script that uses SQLite (backup.ts, checkpointer.ts): plain
// CommonJS loading node:sqlite, with the experimental warning Node 22 prints dropped as driver.ts drops
// it in the main thread. The scripts are strings of their own (no import of this package's modules), so
// they run the same from the TypeScript sources and from the built package.

/** Defines `sqlite` (node:sqlite), `parentPort` and `workerData` for the script that follows. */
export const SQLITE_WORKER_PROLOGUE = `
const { parentPort, workerData } = require('node:worker_threads');
const emitWarning = process.emitWarning;
process.emitWarning = function (warning, ...rest) {
  if (/^SQLite is an experimental feature/.test(typeof warning === 'string' ? warning : warning && warning.message)) return;
  return emitWarning.call(process, warning, ...rest);
};
let sqlite;
try {
  sqlite = require('node:sqlite');
} finally {
  process.emitWarning = emitWarning;
}
`;
