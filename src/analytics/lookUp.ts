/**
 * Asking for a row written a moment ago: it may still be in this gateway's write queue (or
 * another process's memory), or in another gateway's queue when several share a database, so
 * the store is asked again over about a second and a half (`lookupRetries`) before the answer
 * is no. Feedback's targets and stored responses read this way.
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Schedule from "effect/Schedule"
import type { StoreError } from "../storeError.ts"
import { type AnalyticsStore, storeFailure, type StoreFailure } from "./stores.ts"

/** three more asks, 250, 500 and 750 ms apart */
export const lookupRetries = Schedule.recurs(3).pipe(
  Schedule.modifyDelay(({ attempt }) => Effect.succeed(Duration.millis(250 * attempt)))
)

/** what memory (`inMemory`), then the store, knows, asked until it is found or the retries are spent */
export const lookUp = <A>(
  store: AnalyticsStore,
  inMemory: () => A | undefined,
  inStore: Effect.Effect<A | undefined, StoreError>
): Effect.Effect<A | undefined, StoreFailure> =>
  Effect.suspend(() => {
    const found = inMemory()
    return found !== undefined
      ? Effect.succeed(found)
      : Effect.mapError(inStore, storeFailure(store))
  }).pipe(Effect.repeat({ schedule: lookupRetries, until: (found) => found !== undefined }))
