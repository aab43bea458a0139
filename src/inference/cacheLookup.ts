/**
 * Reading a model call's answer from the cache before calling its provider. A lookup never
 * fails the call: a lookup slower than the request's `lookupTimeoutMs` (a locked table, a slow
 * database) is abandoned, which cancels the query, and a failed one is logged (at most once per
 * 10 s: a slow or failing database would otherwise log on every request); either way the
 * provider is called instead.
 */
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import { cacheKey } from "../cache/policy.ts"
import { CacheStoreService } from "../cache/store.ts"
import type { CacheEntry } from "../analytics/records.ts"
import type { ProviderCall } from "../providers/types.ts"
import { StoreError } from "../storeError.ts"
import { throttledWarning } from "../throttledWarning.ts"
import type { RoutedProvider } from "./models.ts"
import type { PreparedInference } from "./prepare.ts"

/**
 * `lookup`, given up after `ms`: its fiber is interrupted (which cancels the query) but not
 * waited for, so a database that does not even answer the cancellation holds no request.
 */
export const abandonAfter = <A>(lookup: Effect.Effect<A, StoreError>, ms: number | undefined): Effect.Effect<A, StoreError> =>
  ms === undefined ? lookup : Effect.flatMap(Effect.forkDetach(lookup), (fiber) => {
    const abandon = Effect.sync(() => fiber.interruptUnsafe())
    return Effect.timeoutOrElse(Fiber.join(fiber), {
      duration: ms,
      orElse: () => Effect.andThen(abandon, Effect.fail(new StoreError({ message: `no answer within ${ms} ms` })))
    }).pipe(Effect.onInterrupt(() => abandon))
  })

/** The cached answer for a model call, when one exists (for a request that reads the cache); never fails. */
export type CacheLookup = (
  prepared: PreparedInference,
  provider: RoutedProvider,
  call: ProviderCall
) => Effect.Effect<CacheEntry | undefined, never, CacheStoreService>

/** A `CacheLookup` with its own bound on warnings: one per engine (that is, per configuration). */
export const makeCacheLookup = (): CacheLookup => {
  const failedWarning = throttledWarning(10_000)
  const failed = (message: string) =>
    failedWarning.warn((heldBack) =>
      `cache lookup failed, calling the provider: ${message}${heldBack === 0 ? "" : ` (and ${heldBack} more since the last warning)`}`
    )
  return (prepared, provider, call) =>
    Effect.flatMap(CacheStoreService, ({ store }) => {
      if (store === undefined) return Effect.succeed(undefined)
      const { maxAgeS, scope, lookupTimeoutMs } = prepared.cache
      return abandonAfter(store.lookup(cacheKey(provider.config, call, scope), maxAgeS), lookupTimeoutMs).pipe(
        Effect.catch((error) => Effect.as(failed(error.message), undefined))
      )
    })
}
