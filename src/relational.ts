/**
 * The relational database (Postgres, GATEWAY_RELATIONAL_DB_URL): API keys and rate limit
 * buckets, shared by every gateway process. It applies the same migration sequence as the
 * Postgres observability store, so both may live in one database.
 */
import type * as Effect from "effect/Effect"
import type { KeyStore } from "./auth/store.ts"
import type { StoreError } from "./observability/store.ts"
import type { BucketStore } from "./ratelimit/store.ts"

export interface RelationalStore {
  /** applies pending migrations; the names of those applied */
  readonly migrate: Effect.Effect<ReadonlyArray<string>, StoreError>
  /** a cheap query, for /health and start-up checks */
  readonly ping: Effect.Effect<void, StoreError>
  readonly keys: KeyStore
  readonly buckets: BucketStore
}
