/**
 * What every fake provider batch API offers the tests (test/support/fakeBatch<Provider>.ts):
 * a local HTTP server speaking the provider's real batch wire format (uploads, batch objects
 * and their statuses, JSON Lines results keyed by each request's id), steered by these knobs.
 * Batch-level tests over HTTP (test/integration/batch-http.test.ts) run the same scenarios on
 * every provider through this interface.
 */

/** How a batch created from now on ends once its polls are used up. */
export type FakeBatchEnding =
  /** every request answered */
  | "complete"
  /** the batch fails as a whole (refused input): no results at all */
  | "fail"
  /** it expires after answering the requests whose index is even; the others carry the provider's expiry error */
  | "expire"
  /** it completes, but the requests whose index is odd carry a per-request error of the provider */
  | "partial"
  /** it is cancelled on the provider's side after answering the requests whose index is even */
  | "cancel"

export interface FakeBatchProvider {
  /** the base URL to configure as the provider's `api_base` (or endpoint) */
  readonly url: string
  ending: FakeBatchEnding
  /** how many status requests answer "still running" before the batch ends (default 1) */
  pollsUntilDone: number
  /** while true, every status or result request answers 503 (a provider outage); creation still works */
  outage: boolean
  /** while true, creating a batch answers 500 */
  refuseCreation: boolean
  /**
   * The text the model answers to one request of a batch (default: `answer to <first user text>`),
   * from the request's id within the batch and its body as the provider received it
   */
  answer: (id: string, body: any) => string
  /** batches created so far: their provider ids, and the bodies of their requests in order (with their ids) */
  readonly batches: ReadonlyArray<{ readonly id: string; readonly requests: ReadonlyArray<{ readonly id: string; readonly body: any }> }>
  /** every HTTP request received, in order (method and path, with its query) */
  readonly requests: ReadonlyArray<{ readonly method: string; readonly path: string; readonly headers: Readonly<Record<string, string | Array<string> | undefined>> }>
  /** the most status requests one batch had in flight at the same time (a test of exclusive polling) */
  readonly maxConcurrentPolls: number
  /** delays every status request by this many milliseconds (default 0) */
  pollDelayMs: number
  reset(): void
  close(): Promise<void>
}

/** the first user text of a Chat Completions-like body, for the default answers */
export const defaultAnswer = (firstUserText: string | undefined): string => `answer to ${firstUserText ?? "(no text)"}`
