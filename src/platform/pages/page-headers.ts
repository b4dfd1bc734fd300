/**
 * Headers of the pages this server serves to browsers (the API reference, the console): no
 * sniffing, no framing (clickjacking), no referrer, and a window of their own.
 */
export const PAGE_HEADERS = {
  "x-content-type-options": "nosniff",
  "x-frame-options": "DENY",
  "referrer-policy": "no-referrer",
  "cross-origin-opener-policy": "same-origin",
} as const;
