/**
 * The key cache policy: a key (or its absence) is trusted for `ttlMs` before the key store is
 * asked again, which bounds how long a disabled key keeps working in a process that served it
 * a moment before. Keys found and ids that name none are cached apart, each bounded, so that
 * guessed ids can only push out other guessed ids. Concurrent asks for one id share one query.
 *
 * While the key store is out (a Postgres restart or failover: a StoreError marked `outage`), a
 * key this process verified in the last `outageGraceMs` keeps working as it was then, trusted
 * again for `ttlMs` before the store is asked again, so that requests keep flowing without each
 * waiting on the dead store; a key never verified here gets the 503. The trade-off: a key
 * disabled during the outage works until the store answers again (or the grace ends).
 */
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import type { StoreError } from "../storeError.ts"
import type { KeyLookup } from "./authenticate.ts"
import type { ApiKeyStore, StoredApiKey } from "./store.ts"

/** keys found, cached at most: real keys only, so a flood of unknown ids never pushes them out */
const maxCachedKeys = 10_000
/** ids found to name no key, cached at most (apart from the keys found) */
const maxCachedMissingIds = 10_000

/** how long after it was last verified a key still works while the store is out */
export const outageGraceMs = 10 * 60_000

/** `map` without its oldest entry once it holds `max` (Maps keep insertion order) */
const makeRoom = (map: Map<string, unknown>, max: number) => {
  if (map.size >= max) map.delete(map.keys().next().value as string)
}

/** `keys` behind a cache whose entries last `ttlMs` on the clock `now` (epoch ms) */
export const cachedKeyLookup = (keys: ApiKeyStore, ttlMs: number, now: () => number): KeyLookup => {
  const found = new Map<string, { readonly key: StoredApiKey; readonly until: number; readonly verifiedAt: number }>()
  const missing = new Map<string, number>()
  const pending = new Map<string, Deferred.Deferred<StoredApiKey | undefined, StoreError>>()
  const none = { key: undefined }

  const remember = (publicId: string, key: StoredApiKey | undefined, verifiedAt = now()) => {
    if (ttlMs <= 0) return
    const until = now() + ttlMs
    // deleted first: a refreshed entry becomes the newest
    found.delete(publicId)
    missing.delete(publicId)
    if (key === undefined) {
      makeRoom(missing, maxCachedMissingIds)
      missing.set(publicId, until)
    } else {
      makeRoom(found, maxCachedKeys)
      found.set(publicId, { key, until, verifiedAt })
    }
  }

  /** the key verified for `publicId` within the grace, for when the store is out */
  const stale = (publicId: string) => {
    const entry = found.get(publicId)
    return entry !== undefined && now() - entry.verifiedAt <= outageGraceMs ? entry : undefined
  }

  return {
    cached: (publicId) => {
      const hit = found.get(publicId)
      if (hit !== undefined) return hit.until > now() ? hit : undefined
      const until = missing.get(publicId)
      return until !== undefined && until > now() ? none : undefined
    },
    known: (publicId) => found.get(publicId)?.key,
    asking: (publicId) => pending.has(publicId),
    find: (publicId) =>
      Effect.suspend(() => {
        const waiting = pending.get(publicId)
        if (waiting !== undefined) return Deferred.await(waiting)
        const answer = Deferred.makeUnsafe<StoredApiKey | undefined, StoreError>()
        pending.set(publicId, answer)
        const ask = keys.find(publicId).pipe(
          Effect.tap((key) => Effect.sync(() => remember(publicId, key))),
          Effect.catchIf(
            (error) => error.outage === true && stale(publicId) !== undefined,
            () =>
              Effect.sync(() => {
                const { key, verifiedAt } = stale(publicId)!
                remember(publicId, key, verifiedAt)
                return key
              })
          ),
          Effect.onExit((exit) =>
            Effect.sync(() => {
              pending.delete(publicId)
              Deferred.doneUnsafe(answer, exit)
            })
          )
        )
        // detached: a caller whose client hung up does not cancel the query others wait for
        return Effect.andThen(Effect.forkDetach(ask), Deferred.await(answer))
      })
  }
}
