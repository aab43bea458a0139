/**
 * Observability as the rest of the gateway sees it: the analytics database named by
 * GATEWAY_ANALYTICS_DB_URL (ClickHouse or Postgres) with one port per capability it serves,
 * or nothing when the variable is unset: then nothing is stored, and reads answer 503.
 * Writes go through the write queue (src/analytics/writeQueue.ts).
 */
import * as Context from "effect/Context"
import type { BatchStore } from "../batch/store.ts"
import type { CacheStore } from "../cache/store.ts"
import type { DatasetStore } from "../datasets/store.ts"
import type { DiclExampleStore } from "../dicl/store.ts"
import type { EvaluationStore } from "../evaluations/store.ts"
import { InternalError, ServiceUnavailable } from "../errors.ts"
import type { ExperimentationStore } from "../experimentation/store.ts"
import type { FeedbackStore } from "../feedback/store.ts"
import type { InferenceStore } from "../storedInferences/store.ts"
import type { OverviewStore } from "../overview/store.ts"
import type { StoreError } from "../storeError.ts"
import type { WorkflowEvaluationStore } from "../workflowEvaluations/store.ts"
import type { Backend, ObservabilityDatabase } from "./database.ts"

/** The ports of one analytics database, all on its backend. */
export interface ObservabilityStores {
  /** migrations, the health probe, and the write queue's writes */
  readonly database: ObservabilityDatabase
  readonly inferences: InferenceStore
  readonly feedback: FeedbackStore
  readonly cache: CacheStore
  readonly datasets: DatasetStore
  readonly evaluations: EvaluationStore
  readonly workflowEvaluations: WorkflowEvaluationStore
  readonly batches: BatchStore
  readonly experimentation: ExperimentationStore,
  /** the examples of dynamic in-context learning variants */
  readonly dicl: DiclExampleStore
  /** the aggregates of the UI's Overview */
  readonly overview: OverviewStore
}

export class Observability extends Context.Service<Observability, {
  /** undefined when observability is off */
  readonly stores: ObservabilityStores | undefined
}>()("gateway/Observability") {}

export const analyticsUrlVariable = "GATEWAY_ANALYTICS_DB_URL"

export const backendOf = (url: string): Backend | undefined =>
  /^https?:\/\//i.test(url) ? "clickhouse" : /^postgres(ql)?:\/\//i.test(url) ? "postgres" : undefined

/** The 503 of a read while observability is off, naming the variable that would turn it on. */
export const observabilityDisabled = () =>
  new ServiceUnavailable({
    message:
      `observability is disabled: set ${analyticsUrlVariable} (and leave [gateway.observability] enabled) to store and read inferences and feedback`
  })

/** The 503 of a read the database failed. */
export const storeUnavailable = (backend: Backend, message: string) =>
  new ServiceUnavailable({ message: `the ${backend} database is unavailable: ${message}` })

/** How a read of the analytics database fails: a 503 (off, or out), or a 500 (this read failed on a working database). */
export type StoreFailure = ServiceUnavailable | InternalError

/**
 * A failure of one of `stores`' ports, naming their backend: a 503 when the database is out
 * (`StoreError.outage`), a 500 when a working database failed this request (a stored row too
 * large to read, a query refused), which waiting would not mend.
 */
export const storeFailure = (stores: ObservabilityStores) => (error: StoreError): StoreFailure =>
  error.outage === true
    ? storeUnavailable(stores.database.backend, error.message)
    : new InternalError({ message: `the ${stores.database.backend} database failed this request: ${error.message}` })
