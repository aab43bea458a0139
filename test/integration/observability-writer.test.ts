/**
 * The write queue (layers/writeQueue.ts) on a real database of each backend: a unit the
 * database refuses is dropped and counted without holding up the units around it, and a
 * queued inference is visible to feedback until it is written. Faults are injected by
 * wrapping the real store: a write that dies or throws, a failure that is not the rows'
 * fault, an encoding that throws; batches and the queue are bounded in bytes.
 */
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Scope from "effect/Scope"
import { describe, expect, it } from "vitest"
import { makeWriteQueue, type WriterOptions } from "../../layers/writeQueue.ts"
import { uuidv7 } from "../../src/ids.ts"
import { emptyBatch, type StoredInference } from "../../src/analytics/records.ts"
import type { ObservabilityDatabase } from "../../src/analytics/database.ts"
import type { AnalyticsStores } from "../../layers/observability/stores.ts"
import type { WriteQueue } from "../../src/analytics/writeQueue.ts"
import { StoreError } from "../../src/storeError.ts"
import { backends, poll } from "../support/observability.ts"
import { chatInference, run, storeForSuite, withCutOffStore } from "../support/storeFixtures.ts"

/** runs `use` with a write queue on `database` that flushes every 20 ms, closed (final flush) afterwards */
const withWriter = async <A>(database: ObservabilityDatabase, use: (writer: WriteQueue["Service"]) => Promise<A>, options: Partial<WriterOptions> = {}): Promise<A> => {
  const scope = Effect.runSync(Scope.make())
  const writer = await Effect.runPromise(Scope.provide(scope)(
    makeWriteQueue(database, {
      maxRows: 100,
      maxBatchBytes: 16 * 1024 * 1024,
      flushIntervalMs: 20,
      maxQueued: 1000,
      maxQueuedBytes: 64 * 1024 * 1024,
      shutdownTimeoutMs: 1000,
      writeTimeoutMs: 10_000,
      ...options
    })
  ))
  try {
    return await use(writer)
  } finally {
    await Effect.runPromise(Scope.close(scope, Exit.void))
  }
}

const unitOf = (inference: StoredInference) => ({
  inference: { id: inference.id, target: { workspace: inference.workspace, functionName: inference.functionName, functionType: inference.functionType, episodeId: inference.episodeId } },
  batch: { ...emptyBatch, inferences: [inference] }
})

/** an inference whose user message is `text` */
const withText = (text: string): Partial<StoredInference> => ({ input: { messages: [{ role: "user", content: [{ type: "text", text }] }] } })

/** the size of `inference`'s encoded row, as the queue counts it */
const bytesOf = (store: AnalyticsStores, inference: StoredInference): number => {
  const rows = store.database.encode({ ...emptyBatch, inferences: [inference] })
  if (rows._tag !== "Success") throw new Error(rows.failure.message)
  return rows.success.reduce((sum, row) => sum + row.text.length, 0)
}

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
    await withWriter(store.database, async (writer) => {
      for (const inference of [before, refused, after]) writer.submit(unitOf(inference))
      await until("the refused unit to be counted and the others written", () => writer.stats().queued === 0 && writer.stats().rejected === 1)
      expect(writer.stats()).toMatchObject({ queued: 0, written: 2, rejected: 1, dropped: 0 })
    })
    expect(await run(store.inferences.getInferences("default", [before.id, refused.id, after.id]))).toStrictEqual([after, before])
  })

  it("shows a queued inference and its episode to feedback of its workspace until it is written", async () => {
    const inference = chatInference()
    // a store cut off from its server: the unit stays queued
    await withCutOffStore(backend, suite.database, (cutOff) =>
      withWriter(cutOff.database, async (writer) => {
        writer.submit(unitOf(inference))
        expect(writer.queuedInference("default", inference.id)).toEqual({ workspace: "default", functionName: inference.functionName, functionType: "chat", episodeId: inference.episodeId })
        expect(writer.queuedEpisode("default", inference.episodeId)).toBe(true)
        expect(writer.queuedInference("default", uuidv7(Date.now()))).toBeUndefined()
        expect(writer.queuedEpisode("default", uuidv7(Date.now()))).toBe(false)
        // another workspace's queued inference and episode are not found
        expect(writer.queuedInference("team-b", inference.id)).toBeUndefined()
        expect(writer.queuedEpisode("team-b", inference.episodeId)).toBe(false)
        await new Promise((resolve) => setTimeout(resolve, 200))
        expect(writer.stats()).toMatchObject({ queued: 1, written: 0 })
        expect(writer.queuedInference("default", inference.id)).toBeDefined()
      }))
    // the same unit on the reachable store: written, then no longer queued
    await withWriter(suite.store.database, async (writer) => {
      writer.submit(unitOf(inference))
      await until("the unit to be written", () => writer.stats().written === 1)
      expect(writer.queuedInference("default", inference.id)).toBeUndefined()
      expect(writer.queuedEpisode("default", inference.episodeId)).toBe(false)
    })
    expect(await run(suite.store.inferences.getInferences("default", [inference.id]))).toStrictEqual([inference])
  })

  it("a write that throws or dies drops only the unit that sets it off, and the queue goes on", async () => {
    const { store } = suite
    const faulty: ObservabilityDatabase = {
      ...store.database,
      write: (rows) => {
        // thrown outside any effect, as a string too long for V8 once was
        if (rows.some((row) => row.text.includes("unit-that-throws"))) throw new RangeError("Invalid string length")
        return rows.some((row) => row.text.includes("unit-that-dies")) ? Effect.die(new Error("a bug")) : store.database.write(rows)
      }
    }
    const good = Array.from({ length: 5 }, () => chatInference())
    const throws = chatInference({ functionName: "unit-that-throws" })
    const dies = chatInference({ functionName: "unit-that-dies" })
    await withWriter(faulty, async (writer) => {
      // submitted in one go: one batch, split until the two faulty units are alone
      for (const inference of [good[0], throws, good[1], good[2], dies, good[3]]) expect(writer.submit(unitOf(inference))).toBe("queued")
      await until("the batch to be written", () => writer.stats().queued === 0)
      expect(writer.stats()).toMatchObject({ written: 4, rejected: 2, dropped: 0, queuedBytes: 0 })
      // the flusher is still there
      writer.submit(unitOf(good[4]))
      await until("a later write", () => writer.stats().written === 5)
    })
    const stored = await run(store.inferences.getInferences("default", [...good, throws, dies].map((inference) => inference.id)))
    expect(stored.map((inference) => inference.id).sort()).toEqual(good.map((inference) => inference.id).sort())
  })

  it("the final flush on close also isolates a faulty unit and writes the rest", async () => {
    const { store } = suite
    const faulty: ObservabilityDatabase = {
      ...store.database,
      write: (rows) => (rows.some((row) => row.text.includes("unit-that-dies")) ? Effect.die(new Error("a bug")) : store.database.write(rows))
    }
    const good = [chatInference(), chatInference()]
    const dies = chatInference({ functionName: "unit-that-dies" })
    // a flush interval longer than the test: everything is written by the final flush
    await withWriter(faulty, async (writer) => {
      for (const inference of [good[0], dies, good[1]]) writer.submit(unitOf(inference))
      expect(writer.stats()).toMatchObject({ queued: 3, written: 0 })
    }, { flushIntervalMs: 60_000 })
    const stored = await run(store.inferences.getInferences("default", [...good, dies].map((inference) => inference.id)))
    expect(stored.map((inference) => inference.id).sort()).toEqual(good.map((inference) => inference.id).sort())
  })

  it("a failure that is not the rows' fault is retried until it passes, and drops nothing", async () => {
    const { store } = suite
    let failures = 4
    const readOnlyForAWhile: ObservabilityDatabase = {
      ...store.database,
      write: (rows) =>
        failures-- > 0
          ? Effect.fail(new StoreError({ message: "cannot execute INSERT in a read-only transaction", code: "25006", rowsAtFault: false }))
          : store.database.write(rows)
    }
    const inferences = [chatInference(), chatInference(), chatInference()]
    await withWriter(readOnlyForAWhile, async (writer) => {
      for (const inference of inferences) writer.submit(unitOf(inference))
      await until("the batch to be written", () => writer.stats().queued === 0)
      expect(writer.stats()).toMatchObject({ written: 3, rejected: 0, dropped: 0, failedAttempts: 4 })
    })
    expect(await run(store.inferences.getInferences("default", inferences.map((inference) => inference.id)))).toHaveLength(3)
  })

  it("a write that hangs is abandoned after writeTimeoutMs and tried again", async () => {
    const { store } = suite
    let hangs = 1
    const hanging: ObservabilityDatabase = { ...store.database, write: (rows) => (hangs-- > 0 ? Effect.never : store.database.write(rows)) }
    const inference = chatInference()
    await withWriter(hanging, async (writer) => {
      writer.submit(unitOf(inference))
      await until("the unit to be written", () => writer.stats().written === 1)
      expect(writer.stats()).toMatchObject({ queued: 0, rejected: 0, failedAttempts: 1 })
    }, { writeTimeoutMs: 200 })
    expect(await run(store.inferences.getInferences("default", [inference.id]))).toHaveLength(1)
  })

  it("a unit whose encoding throws is refused alone, and submit says so", async () => {
    const { store } = suite
    const throwing: ObservabilityDatabase = {
      ...store.database,
      encode: (batch) => {
        if (batch.inferences.some((inference) => inference.functionName === "unencodable")) throw new RangeError("Invalid string length")
        return store.database.encode(batch)
      }
    }
    const good = chatInference()
    await withWriter(throwing, async (writer) => {
      expect(writer.submit(unitOf(chatInference({ functionName: "unencodable" })))).toBe("refused")
      expect(writer.submit(unitOf(good))).toBe("queued")
      await until("the good unit to be written", () => writer.stats().written === 1)
      expect(writer.stats()).toMatchObject({ queued: 0, rejected: 1, dropped: 0 })
    })
    expect(await run(store.inferences.getInferences("default", [good.id]))).toHaveLength(1)
  })

  it("a batch holds at most max_bytes of rows (a larger unit goes alone)", async () => {
    const { store } = suite
    const writes: Array<{ readonly rows: number; readonly bytes: number }> = []
    const recording: ObservabilityDatabase = {
      ...store.database,
      write: (rows) => {
        writes.push({ rows: rows.length, bytes: rows.reduce((sum, row) => sum + row.text.length, 0) })
        return store.database.write(rows)
      }
    }
    const maxBatchBytes = 10_000
    const small = Array.from({ length: 12 }, () => chatInference())
    const large = [chatInference(withText("l".repeat(30_000))), chatInference(withText("m".repeat(30_000)))]
    const all = [...small.slice(0, 6), large[0], ...small.slice(6), large[1]]
    expect(bytesOf(store, small[0])).toBeLessThan(maxBatchBytes / 4)
    await withWriter(recording, async (writer) => {
      for (const inference of all) writer.submit(unitOf(inference))
      await until("every unit to be written", () => writer.stats().written === all.length)
    }, { maxBatchBytes, flushIntervalMs: 200 })
    for (const write of writes) expect(write.bytes <= maxBatchBytes || write.rows === 1, JSON.stringify(write)).toBe(true)
    expect(writes.some((write) => write.rows > 1)).toBe(true)
    expect(writes.filter((write) => write.bytes > maxBatchBytes)).toHaveLength(2)
    expect(await run(store.inferences.getInferences("default", all.map((inference) => inference.id)))).toHaveLength(all.length)
  })

  it("the queue holds at most max_queued_bytes of rows: past it, units are dropped and counted", async () => {
    const unit = chatInference(withText("q".repeat(10_000)))
    const size = bytesOf(suite.store, unit)
    await withCutOffStore(backend, suite.database, (cutOff) =>
      withWriter(cutOff.database, async (writer) => {
        const submitted = Array.from({ length: 6 }, () => writer.submit(unitOf(chatInference(withText("q".repeat(10_000))))))
        expect(submitted).toEqual(["queued", "queued", "queued", "queued", "full", "full"])
        // a smaller unit still fits in what is left
        expect(writer.submit(unitOf(chatInference()))).toBe("queued")
        const stats = writer.stats()
        expect(stats).toMatchObject({ queued: 5, dropped: 2, written: 0 })
        expect(stats.queuedBytes).toBeGreaterThan(4 * size)
        expect(stats.queuedBytes).toBeLessThanOrEqual(4 * size + size / 2)
      }, { maxQueuedBytes: 4 * size + size / 2, shutdownTimeoutMs: 200 }))
  })
})
