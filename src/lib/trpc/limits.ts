/**
 * Request limits of the tRPC endpoint, shared by the server (which refuses what exceeds them) and
 * the browser client (which never batches more calls than the server accepts).
 */

/** Largest request body: the biggest input (an issue body of 20,000 characters) fits many times. */
export const TRPC_MAX_BODY_BYTES = 512 * 1024;
/** Most procedure calls in one batched request. */
export const TRPC_MAX_BATCH_SIZE = 20;
/** Deepest JSON nesting accepted in an input (no procedure needs more than a few levels). */
export const TRPC_MAX_JSON_DEPTH = 32;
