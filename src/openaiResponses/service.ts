/**
 * Stored responses as the Responses routes read them (issue 37, design 4): first this process's
 * recent ones (src/openaiResponses/recent.ts), then the store, asked again over about a second
 * and a half (src/analytics/lookUp.ts) since the write queue writes after the answer. A response
 * is seen only when stored, not deleted, in the caller's workspace, and, with authentication
 * on, the caller's own.
 */
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { lookUp } from "../analytics/lookUp.ts"
import { storeFailure, type StoreFailure } from "../analytics/stores.ts"
import { isUuidV7 } from "../inference/prepare.ts"
import { InferenceStoreService } from "../storedInferences/store.ts"
import { makeRecentResponses } from "./recent.ts"
import { ResponseDeletionStoreService } from "./store.ts"
import { isVisible, recordOfStored, type ResponseRecord } from "./stored.ts"
import type { Caller } from "../workspace.ts"

export class StoredResponses extends Context.Service<StoredResponses, {
  /** an analytics database is configured and observability on: responses can be stored */
  readonly available: boolean
  /** a response stored a moment ago, for the reads that come before its rows are written */
  readonly remember: (record: ResponseRecord) => void
  /** the response, when `caller` may see it */
  readonly find: (id: string, caller: Caller) => Effect.Effect<ResponseRecord | undefined, StoreFailure>
  /** marks a response `caller` may see deleted; false when it may not */
  readonly remove: (id: string, caller: Caller) => Effect.Effect<boolean, StoreFailure>
}>()("gateway/StoredResponses") {
  static readonly layer = Layer.effect(
    StoredResponses,
    Effect.gen(function*() {
      const { store: inferences } = yield* InferenceStoreService
      const { store: deletions } = yield* ResponseDeletionStoreService
      const recent = makeRecentResponses()
      const clock = yield* Clock.Clock

      const fromStore = (workspace: string, id: string) =>
        inferences === undefined ? Effect.succeed(undefined) : Effect.gen(function*() {
          const [inference] = yield* inferences.getInferences(workspace, [id])
          if (inference === undefined) return undefined
          return recordOfStored(inference, yield* inferences.getModelInferences(workspace, [id]))
        })

      const isDeleted = (workspace: string, id: string) =>
        deletions === undefined
          ? Effect.succeed(false)
          : Effect.map(Effect.mapError(deletions.deleted(workspace, [id]), storeFailure(deletions)), (deleted) => deleted.has(id))

      /** this process's recent response, when it is of `workspace` (another workspace's is not found, as in the store) */
      const recentOf = (workspace: string, id: string) => {
        const record = recent.get(id, clock.currentTimeMillisUnsafe())
        return record?.workspace === workspace ? record : undefined
      }

      const find = (id: string, caller: Caller) =>
        Effect.gen(function*() {
          if (inferences === undefined || !isUuidV7(id)) return undefined
          const key = id.toLowerCase()
          const record = yield* lookUp(inferences, () => recentOf(caller.workspace, key), fromStore(caller.workspace, key))
          if (record === undefined || !isVisible(record.tags, caller.publicId)) return undefined
          return (yield* isDeleted(caller.workspace, key)) ? undefined : record
        })

      return StoredResponses.of({
        available: inferences !== undefined && deletions !== undefined,
        remember: (record) => recent.remember(record, clock.currentTimeMillisUnsafe()),
        find,
        remove: (id, caller) =>
          Effect.gen(function*() {
            const record = yield* find(id, caller)
            if (record === undefined || deletions === undefined) return false
            yield* Effect.mapError(deletions.markDeleted(record.workspace, record.id, yield* Clock.currentTimeMillis), storeFailure(deletions))
            recent.forget(record.id)
            return true
          })
      })
    })
  )
}
