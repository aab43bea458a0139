/**
 * The write queue (layers/observability/writer.ts) on a real store of each backend: a unit the
 * database refuses is dropped and counted without holding up the units around it, and a
 * queued inference is visible to feedback until it is written.
 */
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Scope from "effect/Scope"
import { describe, expect, it } from "vitest"
import { makeWriter, type Writer } from "../../layers/observability/writer.ts"
import { uuidv7 } from "../../src/ids.ts"
import { emptyBatch, type StoredInference } from "../../src/observability/records.ts"
import type { Store } from "../../src/observability/store.ts"
import { backends, poll } from "../support/observability.ts"
import { chatInference, run, storeForSuite, withCutOffStore } from "../support/storeFixtures.ts"

/** runs `use` with a writer on `store` that flushes every 20 ms, closed (final flush) afterwards */
const withWriter = async <A>(store: Store, use: (writer: Writer) => Promise<A>): Promise<A> => {
  const scope = Effect.runSync(Scope.make())
  const writer = await Effect.runPromise(Scope.provide(scope)(
    makeWriter(store, { maxRows: 100, flushIntervalMs: 20, maxQueued: 1000, shutdownTimeoutMs: 1000 })
  ))
  try {
    return await use(writer)
  } finally {
    await Effect.runPromise(Scope.close(scope, Exit.void))
  }
}

const unitOf = (inference: StoredInference) => ({
  inference: { id: inference.id, target: { functionName: inference.functionName, functionType: inference.functionType, episodeId: inference.episodeId } },
  batch: { ...emptyBatch, inferences: [inference] }
})

/** waits until `condition` holds (poll's attempts answer undefined until then) */
const until = (what: string, condition: () => boolean) => poll(what, async () => (condition() ? true : undefined))

describe.each(backends)("the write queue on %s", (backend) => {
  const suite = storeForSuite(backend)

  it("drops and counts a unit the database refuses, and stores the units around it", async () => {
    const { store } = suite
    const before = chatInference()
    // not a UUID: ClickHouse refuses it when it is queued, Postgres when the batch is written
    const refused = chatInference({ episodeId: "not-a-uuid" })
    const after = chatInference()
    await withWriter(store, async (writer) => {
      for (const inference of [before, refused, after]) writer.submit(unitOf(inference))
      await until("the refused unit to be counted and the others written", () => writer.stats().queued === 0 && writer.stats().rejected === 1)
      expect(writer.stats()).toMatchObject({ queued: 0, written: 2, rejected: 1, dropped: 0 })
    })
    expect(await run(store.getInferences([before.id, refused.id, after.id]))).toStrictEqual([after, before])
  })

  it("shows a queued inference and its episode to feedback until it is written", async () => {
    const inference = chatInference()
    // a store cut off from its server: the unit stays queued
    await withCutOffStore(backend, suite.database, (cutOff) =>
      withWriter(cutOff, async (writer) => {
        writer.submit(unitOf(inference))
        expect(writer.queuedInference(inference.id)).toEqual({ functionName: inference.functionName, functionType: "chat", episodeId: inference.episodeId })
        expect(writer.queuedEpisode(inference.episodeId)).toBe(true)
        expect(writer.queuedInference(uuidv7())).toBeUndefined()
        expect(writer.queuedEpisode(uuidv7())).toBe(false)
        await new Promise((resolve) => setTimeout(resolve, 200))
        expect(writer.stats()).toMatchObject({ queued: 1, written: 0 })
        expect(writer.queuedInference(inference.id)).toBeDefined()
      }))
    // the same unit on the reachable store: written, then no longer queued
    await withWriter(suite.store, async (writer) => {
      writer.submit(unitOf(inference))
      await until("the unit to be written", () => writer.stats().written === 1)
      expect(writer.queuedInference(inference.id)).toBeUndefined()
      expect(writer.queuedEpisode(inference.episodeId)).toBe(false)
    })
    expect(await run(suite.store.getInferences([inference.id]))).toStrictEqual([inference])
  })
})
