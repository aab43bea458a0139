/**
 * Helpers of the observability conformance suites (test/integration/observability-*.test.ts):
 * the backends to run against, the `[gateway.observability]` table, and polling for the rows
 * the gateway writes asynchronously.
 */
import { expect } from "vitest"
import type { TestBackend } from "./databases.ts"
import type { RunningGateway } from "./gateway.ts"

export const backends: ReadonlyArray<TestBackend> = ["clickhouse", "postgres"]

/** the `[gateway.observability]` table; a short flush interval unless a test is about batching */
export const observabilityToml = (options: {
  readonly flushIntervalMs?: number
  readonly maxRows?: number
  readonly maxQueued?: number
  readonly disableMigrations?: boolean
} = {}) =>
  `
[gateway.observability]
batch_writes = { flush_interval_ms = ${options.flushIntervalMs ?? 20}${options.maxRows === undefined ? "" : `, max_rows = ${options.maxRows}`} }
${options.maxQueued === undefined ? "" : `max_queued_writes = ${options.maxQueued}`}
${options.disableMigrations === undefined ? "" : `disable_automatic_migrations = ${options.disableMigrations}`}
`

/**
 * Calls `attempt` every `intervalMs` until it returns something other than undefined, for up
 * to `timeoutMs`; then fails with `what` and the last value seen by `describe`.
 */
export const poll = async <A>(
  what: string,
  attempt: () => Promise<A | undefined>,
  options: { readonly timeoutMs?: number; readonly intervalMs?: number; readonly last?: () => unknown } = {}
): Promise<A> => {
  const deadline = Date.now() + (options.timeoutMs ?? 10_000)
  for (;;) {
    const result = await attempt()
    if (result !== undefined) return result
    if (Date.now() > deadline) {
      throw new Error(`timed out waiting for ${what}${options.last === undefined ? "" : `: last seen ${JSON.stringify(options.last())}`}`)
    }
    await new Promise((resolve) => setTimeout(resolve, options.intervalMs ?? 50))
  }
}

export interface ReadOptions {
  readonly include_feedback?: boolean
  readonly include_model_inferences?: boolean
}

/** get_inferences, expecting a 200 */
export const getInferences = async (gateway: RunningGateway, ids: ReadonlyArray<string>, options: ReadOptions = {}) => {
  const response = await gateway.post("/v1/inferences/get_inferences", { ids, ...options })
  expect(response.status, JSON.stringify(response.body)).toBe(200)
  return response.body.inferences as Array<any>
}

/** list_inferences, expecting a 200 */
export const listInferences = async (gateway: RunningGateway, query: Record<string, unknown>) => {
  const response = await gateway.post("/v1/inferences/list_inferences", query)
  expect(response.status, JSON.stringify(response.body)).toBe(200)
  return response.body.inferences as Array<any>
}

/** the stored inferences `ids`, once every one of them is stored (in the order of `ids`) */
export const waitForInferences = (
  gateway: RunningGateway,
  ids: ReadonlyArray<string>,
  options: ReadOptions & { readonly timeoutMs?: number } = {}
): Promise<Array<any>> => {
  let last: unknown
  const { timeoutMs, ...read } = options
  return poll(`inferences ${ids.join(", ")} to be stored`, async () => {
    const found = await getInferences(gateway, ids, read)
    last = found.map((inference) => inference.inference_id)
    return found.length === ids.length ? found : undefined
  }, { timeoutMs, last: () => last })
}

export const waitForInference = async (gateway: RunningGateway, id: string, options: ReadOptions = {}) =>
  (await waitForInferences(gateway, [id], options))[0]

/** the stored feedback of inference `id` (its own and its episode's), once `done` says it is complete */
export const waitForFeedback = (
  gateway: RunningGateway,
  id: string,
  done: (feedback: Array<any>) => boolean
): Promise<Array<any>> => {
  let last: unknown
  return poll(`feedback on inference ${id}`, async () => {
    const [inference] = await getInferences(gateway, [id], { include_feedback: true })
    last = inference?.feedback
    return inference !== undefined && done(inference.feedback) ? inference.feedback as Array<any> : undefined
  }, { last: () => last })
}

/** the /status counters of the write queue */
export const queueStats = async (gateway: RunningGateway) => {
  const response = await gateway.get("/status")
  expect(response.status).toBe(200)
  return response.body.observability as {
    backend: string
    queued: number
    queuedBytes: number
    written: number
    dropped: number
    rejected: number
    failedAttempts: number
  }
}

export const uuidV7Pattern = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

export const userInput = (text: string) => ({ messages: [{ role: "user", content: text }] })
