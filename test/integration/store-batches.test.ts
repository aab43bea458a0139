/**
 * The conformance suite of the batch store (`BatchStore` of src/batch/store.ts): the same tests
 * against the ClickHouse adapter and the Postgres adapter, each on a real server in a database
 * of its own: exact round trips of batches and their inferences (JSON values of every shape,
 * optional fields absent when absent), input order kept for ten thousand inferences, one
 * inference looked up by id, status changes where the newest `updatedAt` wins (and, within one
 * millisecond, the later write), pages of inferences after a position, the pending batches oldest first, ids that name nothing or are
 * not UUIDs, odd and large text, and StoreErrors (not crashes) when the server is cut off.
 * The Postgres adapter runs twice: on the Postgres server and on the embedded database (PGlite).
 */
import type * as Effect from "effect/Effect"
import { describe, expect, it } from "vitest"
import type { StoredBatch, StoredBatchInference } from "../../src/batch/store.ts"
import { uuidv7, uuidv7Timestamp } from "../../src/ids.ts"
import { StoreError } from "../../src/storeError.ts"
import { engineOf } from "../support/databases.ts"
import { failure, idAt, oddStrings, run, storeForSuite, withCutOffStore } from "../support/storeFixtures.ts"

// ---- records

/** `record` without the fields whose value is undefined: optional fields are absent when read back */
const withoutUndefined = <A extends object>(record: A): A =>
  Object.fromEntries(Object.entries(record).filter(([, value]) => value !== undefined)) as A

/** a pending batch submitted now, every field present unless `fields` gives it as undefined */
const batchRecord = (fields: Partial<StoredBatch> = {}): StoredBatch => {
  const id = fields.id ?? uuidv7(Date.now())
  return withoutUndefined({
    id,
    workspace: "default",
    functionName: "write_haiku",
    functionType: "chat" as const,
    variantName: "gpt",
    modelName: "gpt-4o-mini",
    modelProviderName: "openai",
    providerBatchId: "batch_6789abcdef",
    providerBatchData: { input_file_id: "file-abc", endpoint: "/v1/chat/completions", attempts: [1, 2.5, null, true, "x"], nested: { deep: {} } },
    batchParams: { params: { chat_completion: { temperature: [0.1 + 0.2, null, 1e300] } }, tags: [{ user: "u1" }, null, {}] },
    status: "pending" as const,
    errorMessage: undefined,
    failures: undefined,
    timestamp: uuidv7Timestamp(id),
    updatedAt: uuidv7Timestamp(id),
    ...fields
  })
}

/** inference `index` of `batch`, every optional field present unless `fields` gives it as undefined */
const inferenceRecord = (batch: StoredBatch, index: number, fields: Partial<StoredBatchInference> = {}): StoredBatchInference => {
  const inferenceId = fields.inferenceId ?? uuidv7(Date.now())
  return withoutUndefined({
    batchId: batch.id,
    workspace: batch.workspace,
    inferenceId,
    episodeId: uuidv7(Date.now()),
    index,
    functionName: batch.functionName,
    variantName: batch.variantName,
    input: { system: { name: "Ann" }, messages: [{ role: "user", content: [{ type: "text", text: `haiku number ${index}` }] }] },
    system: "You are terse. Ann asks.",
    inputMessages: [{ role: "user", content: [{ type: "text", text: `haiku number ${index}` }] }],
    toolParams: { tools_available: [{ name: "get_weather", description: "weather", parameters: { type: "object" }, strict: false }], tool_choice: "auto", parallel_tool_calls: null },
    outputSchema: { type: "object", properties: { haiku: { type: "string" } }, required: ["haiku"] },
    inferenceParams: { chat_completion: { temperature: 0.7, max_tokens: 100, seed: null, json_mode: "off" } },
    rawRequest: JSON.stringify({ custom_id: inferenceId, method: "POST", url: "/v1/chat/completions", body: { model: batch.modelName, messages: [] } }),
    modelName: batch.modelName,
    modelProviderName: batch.modelProviderName,
    tags: { user: "u1", position: String(index) },
    timestamp: uuidv7Timestamp(inferenceId),
    ...fields
  })
}

/** `inference` with none of its optional fields */
const bare = (inference: StoredBatchInference): StoredBatchInference => {
  const { system: _system, toolParams: _toolParams, outputSchema: _outputSchema, ...rest } = inference
  return { ...rest, tags: {} }
}

const later = (batch: StoredBatch, ms: number, fields: Partial<StoredBatch>): StoredBatch => withoutUndefined({ ...batch, updatedAt: batch.updatedAt + ms, ...fields })

describe.each(["clickhouse", "postgres", "pglite"] as const)("%s batch store", (backend) => {
  /** the adapters' backend, which the errors name: PGlite is reached with the Postgres ones */
  const engine = engineOf(backend)

  describe("batches and their inferences", () => {
    const suite = storeForSuite(backend)
    const store = () => suite.store.batches

    it("reads a batch and its inferences back as inserted, every field; optional fields absent when not given", async () => {
      const batch = batchRecord()
      const inferences = [
        inferenceRecord(batch, 0),
        bare(inferenceRecord(batch, 1)),
        inferenceRecord(batch, 2, { toolParams: undefined, tags: { "": "", "a.b": "c=d" } })
      ]
      await run(store().insertBatch(batch, inferences))
      expect(await run(store().getBatch("default", batch.id))).toStrictEqual(batch)
      const read = await run(store().getBatchInferences("default", batch.id))
      expect(read).toStrictEqual(inferences)
      for (const field of ["system", "toolParams", "outputSchema"]) expect(field in read[1]).toBe(false)
      expect("toolParams" in read[2]).toBe(false)
      const stored = (await run(store().getBatch("default", batch.id)))!
      for (const field of ["errorMessage", "failures"]) expect(field in stored).toBe(false)
      // ids in capitals name the same batch
      expect(await run(store().getBatch("default", batch.id.toUpperCase()))).toStrictEqual(batch)
      expect(await run(store().getBatchInferences("default", batch.id.toUpperCase(), inferences[2].inferenceId.toUpperCase()))).toStrictEqual([inferences[2]])
    })

    it("JSON values of every shape round-trip exactly: null, strings, numbers, arrays, objects; a JSON null tool parameter stays present", async () => {
      const shapes: ReadonlyArray<unknown> = [null, "batch-data as a string", 42, 0.1 + 0.2, -1e-300, [], {}, [null, { a: [true, false] }], { "": null, "日本": "語" }]
      for (const shape of shapes) {
        const batch = batchRecord({ functionType: "json", providerBatchData: shape, batchParams: shape })
        const inference = inferenceRecord(batch, 0, { input: shape, inputMessages: shape, toolParams: null, outputSchema: shape, inferenceParams: shape })
        await run(store().insertBatch(batch, [inference]))
        expect(await run(store().getBatch("default", batch.id))).toStrictEqual(batch)
        const [read] = await run(store().getBatchInferences("default", batch.id))
        expect(read).toStrictEqual(inference)
        expect("toolParams" in read && read.toolParams === null).toBe(true)
      }
      // a batch without inferences is still a batch
      const empty = batchRecord()
      await run(store().insertBatch(empty, []))
      expect(await run(store().getBatch("default", empty.id))).toStrictEqual(empty)
      expect(await run(store().getBatchInferences("default", empty.id))).toEqual([])
    })

    it("keeps the input order of ten thousand inferences, whatever the order of their ids, and finds any one of them", async () => {
      const batch = batchRecord()
      const base = Date.now() - 60_000
      // ids run backwards in time: an order by id would reverse the batch
      const inferences = Array.from({ length: 10_000 }, (_, index) =>
        inferenceRecord(batch, index, { inferenceId: idAt(base + 10_000 - index), rawRequest: `{"custom_id":"${index}","body":"${"x".repeat(300)}"}` })
      )
      await run(store().insertBatch(batch, inferences))
      const read = await run(store().getBatchInferences("default", batch.id))
      expect(read.length).toBe(10_000)
      expect(read.map((inference) => inference.index)).toEqual(inferences.map((inference) => inference.index))
      expect(read).toStrictEqual(inferences)
      for (const index of [0, 4321, 9999]) {
        expect(await run(store().getBatchInferences("default", batch.id, inferences[index].inferenceId))).toStrictEqual([inferences[index]])
      }
      // pages after a position, in input order, cover every inference once
      const paged: Array<StoredBatchInference> = []
      for (let after = -1;;) {
        const page = await run(store().getBatchInferencePage("default", batch.id, after, 3333))
        if (page.length === 0) break
        expect(page.length).toBeLessThanOrEqual(3333)
        paged.push(...page)
        after = page[page.length - 1].index
      }
      expect(paged).toStrictEqual(inferences)
      expect(await run(store().getBatchInferencePage("default", batch.id, 9998, 10))).toStrictEqual([inferences[9999]])
      expect(await run(store().getBatchInferencePage("default", batch.id, 9999, 10))).toEqual([])
      expect(await run(store().getBatchInferencePage("default", batch.id, -1, 2))).toStrictEqual(inferences.slice(0, 2))
    })

    it("an inference id gives that inference only, and nothing when it is not in the batch", async () => {
      const batch = batchRecord()
      const other = batchRecord()
      const inferences = [0, 1, 2].map((index) => inferenceRecord(batch, index))
      const elsewhere = inferenceRecord(other, 0)
      await run(store().insertBatch(batch, inferences))
      await run(store().insertBatch(other, [elsewhere]))
      expect(await run(store().getBatchInferences("default", batch.id, inferences[1].inferenceId))).toStrictEqual([inferences[1]])
      expect(await run(store().getBatchInferences("default", batch.id, elsewhere.inferenceId))).toEqual([])
      expect(await run(store().getBatchInferences("default", batch.id, uuidv7(Date.now())))).toEqual([])
      expect(await run(store().getBatchInferences("default", other.id))).toStrictEqual([elsewhere])
    })

    it("an insert made again (a retry) stores each row once", async () => {
      const batch = batchRecord()
      const inferences = [0, 1, 2].map((index) => inferenceRecord(batch, index))
      await run(store().insertBatch(batch, inferences))
      await run(store().insertBatch(batch, inferences))
      expect(await run(store().getBatch("default", batch.id))).toStrictEqual(batch)
      expect(await run(store().getBatchInferences("default", batch.id))).toStrictEqual(inferences)
    })

    it("updates to completed with failures, or to failed with an error: the newest updatedAt wins, whatever the order of the writes", async () => {
      const completedBatch = batchRecord()
      const failedBatch = batchRecord()
      await run(store().insertBatch(completedBatch, [inferenceRecord(completedBatch, 0)]))
      await run(store().insertBatch(failedBatch, [inferenceRecord(failedBatch, 0)]))

      const completed = later(completedBatch, 5_000, { status: "completed", failures: { [uuidv7(Date.now())]: "no answer in the output file", "odd \"key\"": "日本語 🎉" } })
      await run(store().updateBatch(completed))
      expect(await run(store().getBatch("default", completedBatch.id))).toStrictEqual(completed)
      const failed = later(failedBatch, 5_000, { status: "failed", errorMessage: "the provider says: batch expired" })
      await run(store().updateBatch(failed))
      const read = (await run(store().getBatch("default", failedBatch.id)))!
      expect(read).toStrictEqual(failed)
      expect("failures" in read).toBe(false)

      // an older version written afterwards (a stale poller) changes nothing
      await run(store().updateBatch(later(completedBatch, 1_000, { providerBatchData: { stale: true } })))
      await run(store().updateBatch(completedBatch))
      expect(await run(store().getBatch("default", completedBatch.id))).toStrictEqual(completed)

      // a completion without failures has none
      const clean = batchRecord()
      await run(store().insertBatch(clean, []))
      const done = later(clean, 1, { status: "completed", failures: {} })
      await run(store().updateBatch(done))
      expect(await run(store().getBatch("default", clean.id))).toStrictEqual(done)
    })

    it("of two writes with the same updatedAt, the later one wins (within one process)", async () => {
      for (const [first, second] of [["completed", "failed"], ["failed", "completed"], ["pending", "completed"], ["completed", "pending"]] as const) {
        const batch = batchRecord()
        await run(store().insertBatch(batch, []))
        const at = batch.updatedAt + 10
        const one = later(batch, 10, { status: first, errorMessage: first === "failed" ? "first" : undefined })
        const two = later(batch, 10, { status: second, errorMessage: second === "failed" ? "second" : undefined, providerBatchData: { second: true } })
        expect(one.updatedAt).toBe(at)
        await run(store().updateBatch(one))
        await run(store().updateBatch(two))
        expect(await run(store().getBatch("default", batch.id))).toStrictEqual(two)
      }
      // many in one millisecond, the last given is read
      const busy = batchRecord()
      await run(store().insertBatch(busy, []))
      for (let round = 0; round < 20; round++) await run(store().updateBatch(later(busy, 1, { providerBatchData: { round } })))
      expect((await run(store().getBatch("default", busy.id)))!.providerBatchData).toEqual({ round: 19 })
    })

    it("names, tags, messages, failures and raw requests keep quotes, control characters and unicode; large raw requests are whole", async () => {
      for (const value of oddStrings) {
        const batch = batchRecord({
          functionName: value,
          variantName: value,
          modelName: value,
          modelProviderName: value,
          providerBatchId: value,
          providerBatchData: { [value]: value }
        })
        const inference = inferenceRecord(batch, 0, { system: value, rawRequest: value, tags: { [value]: value }, input: { text: value } })
        await run(store().insertBatch(batch, [inference]))
        expect(await run(store().getBatch("default", batch.id))).toStrictEqual(batch)
        expect(await run(store().getBatchInferences("default", batch.id))).toStrictEqual([inference])
        const failed = later(batch, 1, { status: "failed", errorMessage: value })
        await run(store().updateBatch(failed))
        expect(await run(store().getBatch("default", batch.id))).toStrictEqual(failed)
        const completed = later(batch, 2, { status: "completed", failures: { [value]: value } })
        await run(store().updateBatch(completed))
        expect(await run(store().getBatch("default", batch.id))).toStrictEqual(completed)
      }

      // three raw requests of ~3.5 MB each (multi-byte characters and astral ones): more than Postgres takes in one statement
      const batch = batchRecord()
      const large = (index: number) => `{"custom_id":"${index}","text":"${"日本語 é 🎉 ".repeat(250_000)}${index}"}`
      const inferences = [0, 1, 2].map((index) => inferenceRecord(batch, index, { rawRequest: large(index) }))
      await run(store().insertBatch(batch, inferences))
      const read = await run(store().getBatchInferences("default", batch.id))
      expect(read.map((inference) => inference.rawRequest.length)).toEqual(inferences.map((inference) => inference.rawRequest.length))
      expect(read).toStrictEqual(inferences)
    })

    it("keeps text holding U+0000 or a lone surrogate, where the database cannot store it as U+FFFD", async () => {
      const batch = batchRecord()
      const inference = inferenceRecord(batch, 0, { rawRequest: "nul \u0000 lone \ud800", input: { text: "nul \u0000 lone \udc00" } })
      await run(store().insertBatch(batch, [inference]))
      // ClickHouse keeps U+0000, and JSON text keeps the escaped surrogates; Postgres holds neither
      const expected = backend === "clickhouse"
        ? { ...inference, rawRequest: "nul \u0000 lone \ufffd" }
        : { ...inference, rawRequest: "nul \ufffd lone \ufffd", input: { text: "nul \ufffd lone \ufffd" } }
      expect(await run(store().getBatchInferences("default", batch.id))).toStrictEqual([expected])
      const failed = later(batch, 1, { status: "failed", errorMessage: "nul \u0000 lone \ud800" })
      await run(store().updateBatch(failed))
      expect((await run(store().getBatch("default", batch.id)))!.errorMessage).toBe(backend === "clickhouse" ? "nul \u0000 lone \ufffd" : "nul \ufffd lone \ufffd")
    })

    it("an unknown batch, or an id that is not a UUID, reads as nothing; a write with an id that is not a UUID is refused whole", async () => {
      const known = batchRecord()
      await run(store().insertBatch(known, [inferenceRecord(known, 0)]))
      for (const id of [uuidv7(Date.now()), "nope", "", "'; DROP TABLE BatchRequest; DROP TABLE batch_requests; --", `${known.id}x`]) {
        expect(await run(store().getBatch("default", id))).toBeUndefined()
        expect(await run(store().getBatchInferences("default", id))).toEqual([])
        expect(await run(store().getBatchInferences("default", id, uuidv7(Date.now())))).toEqual([])
        expect(await run(store().getBatchInferences("default", known.id, id))).toEqual([])
        expect(await run(store().getBatchInferencePage("default", id, -1, 10))).toEqual([])
      }
      // no row is asked for
      expect(await run(store().getBatchInferencePage("default", known.id, -1, 0))).toEqual([])

      const notUuid = await failure(store().insertBatch(batchRecord({ id: "batch-1" }), []))
      expect(notUuid).toBeInstanceOf(StoreError)
      expect(notUuid.message).toMatch(new RegExp(`^${engine} .*uuid`, "i"))
      const batch = batchRecord()
      for (const bad of [{ batchId: "x" }, { inferenceId: "inference' --" }, { episodeId: "" }]) {
        const error = await failure(store().insertBatch(batch, [inferenceRecord(batch, 0), inferenceRecord(batch, 1, bad)]))
        expect(error.message).toMatch(/uuid/i)
      }
      expect(await run(store().getBatch("default", batch.id))).toBeUndefined()
      expect(await run(store().getBatchInferences("default", batch.id))).toEqual([])
      expect((await failure(store().updateBatch({ ...known, id: "nope", updatedAt: known.updatedAt + 1 }))).message).toMatch(/uuid/i)

      const badIndex = await failure(store().insertBatch(batch, [inferenceRecord(batch, -1)]))
      expect(badIndex.message).toMatch(new RegExp(`^${engine} `))
      const badStatus = await failure(store().updateBatch(later(known, 1, { status: "paused" as StoredBatch["status"] })))
      expect(badStatus.message).toMatch(new RegExp(`^${engine} updateBatch failed: `))
      expect(await run(store().getBatch("default", known.id))).toStrictEqual(known)
    })

    it("another workspace's batch and its inferences read as nothing", async () => {
      const theirs = batchRecord({ workspace: "team-a" })
      const rows = [inferenceRecord(theirs, 0), inferenceRecord(theirs, 1)]
      await run(store().insertBatch(theirs, rows))
      expect(await run(store().getBatch("default", theirs.id))).toBeUndefined()
      expect(await run(store().getBatchInferences("default", theirs.id))).toEqual([])
      expect(await run(store().getBatchInferences("default", theirs.id, rows[1].inferenceId))).toEqual([])
      expect(await run(store().getBatchInferencePage("default", theirs.id, -1, 10))).toEqual([])
      expect(await run(store().getBatch("team-a", theirs.id))).toStrictEqual(theirs)
      expect(await run(store().getBatchInferences("team-a", theirs.id))).toStrictEqual(rows)
      expect(await run(store().getBatchInferencePage("team-a", theirs.id, 0, 10))).toStrictEqual([rows[1]])
    })
  })

  describe("pending batches", () => {
    const suite = storeForSuite(backend)
    const store = () => suite.store.batches
    const base = Date.UTC(2025, 0, 1, 12)
    // submitted one millisecond apart, except 2 and 3, which share one (and are ordered by id)
    const batches: ReadonlyArray<StoredBatch> = [
      batchRecord({ id: idAt(base) }),
      batchRecord({ id: idAt(base + 1) }),
      batchRecord({ id: idAt(base + 2, 1) }),
      batchRecord({ id: idAt(base + 2, 2) }),
      batchRecord({ id: idAt(base + 3) }),
      batchRecord({ id: idAt(base + 4) })
    ]

    /** the indexes in `batches` of what listPendingBatches answers */
    const list = async (limit: number) =>
      (await run(store().listPendingBatches(limit))).map((found) => batches.findIndex((batch) => batch.id === found.id))

    it("lists the newest version of each pending batch, oldest first; completed and failed ones are left out", async () => {
      expect(await run(store().listPendingBatches(10))).toEqual([])
      for (const index of [4, 2, 0, 5, 3, 1]) await run(store().insertBatch(batches[index], [inferenceRecord(batches[index], 0)]))
      expect(await run(store().listPendingBatches(100))).toStrictEqual(batches)

      await run(store().updateBatch(later(batches[1], 100, { status: "completed", failures: {} })))
      await run(store().updateBatch(later(batches[4], 100, { status: "failed", errorMessage: "expired" })))
      // still pending, polled: a newer version of its row
      const polled = later(batches[3], 50, { providerBatchData: { polls: 1 } })
      await run(store().updateBatch(polled))
      // a stale pending version of a completed batch does not bring it back
      await run(store().updateBatch(later(batches[1], 10, {})))
      expect(await run(store().listPendingBatches(100))).toStrictEqual([batches[0], batches[2], polled, batches[5]])
    })

    it("honors the limit", async () => {
      expect(await list(2)).toEqual([0, 2])
      expect(await list(1)).toEqual([0])
      expect(await list(4)).toEqual([0, 2, 3, 5])
      expect(await list(0)).toEqual([])
      expect(await list(-3)).toEqual([])
      expect(await list(2.9)).toEqual([0, 2])
    })
  })

  describe("when the server is cut off", () => {
    const suite = storeForSuite(backend)

    it("fails with a one-line StoreError, not a crash; what needs no server is answered without it", async () => {
      const batch = batchRecord()
      await withCutOffStore(backend, suite.database, async ({ batches }) => {
        expect(await run(batches.getBatch("default", "nope"))).toBeUndefined()
        expect(await run(batches.getBatchInferences("default", "nope"))).toEqual([])
        expect(await run(batches.listPendingBatches(0))).toEqual([])

        for (const effect of [
          batches.insertBatch(batch, [inferenceRecord(batch, 0)]),
          batches.updateBatch(later(batch, 1, { status: "failed", errorMessage: "x" })),
          batches.getBatch("default", batch.id),
          batches.getBatchInferences("default", batch.id),
          batches.getBatchInferences("default", batch.id, uuidv7(Date.now())),
          batches.getBatchInferencePage("default", batch.id, -1, 10),
          batches.listPendingBatches(10)
        ]) {
          const error = await failure(effect as Effect.Effect<unknown, StoreError>)
          expect(error).toBeInstanceOf(StoreError)
          expect(error.message).toMatch(new RegExp(`^${engine} \\w+ failed: \\S`))
          expect(error.message).not.toMatch(/\n|    at /)
        }
      })
    })
  })
})
