// The element's gzip budget, read by the size check (`npm run size`, which fails the build over it) and
// by the benchmark's element-size section (which reports the figure against it).

/**
 * Hard limit: `npm run size` fails above it (14 KB since the returning-shopper states; 14.25 KB since a
 * saved account is confirmed at the form's submit, issue 39 §4: +272 bytes with 26 left under 14 KB).
 */
export const ELEMENT_GZIP_BUDGET_BYTES = 14.25 * 1024;
/** What we aim for; over it is reported, not failed. */
export const ELEMENT_GZIP_AIM_BYTES = 12 * 1024;
