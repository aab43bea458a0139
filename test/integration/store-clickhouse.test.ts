/**
 * What only the ClickHouse store does (the behaviour both stores share is checked by
 * store-conformance.test.ts): the database created from the URL, strings sent as hex literals
 * (18.16 has no query parameters), NUL bytes and lone surrogates inside JSON kept exactly,
 * re-inserted rows deduplicated on read across unmerged parts, values refused before they
 * reach SQL, and the URLs it cannot use.
 */
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Scope from "effect/Scope"
import { readFileSync } from "node:fs"
import { beforeAll, describe, expect, it } from "vitest"
import { migrationStatements } from "../../layers/clickhouse/migrator.ts"
import { makeClickHouseStores } from "../../layers/clickhouse/stores.ts"
import { uuidv7 } from "../../src/ids.ts"
import { clickHouseCommand, freshDatabase, queryDatabase, tablesOf } from "../support/databases.ts"
import { batch, cacheEntry, cachedCall, chatInference, everyKindBatch, failure, feedback, idAt, modelInference, openStore, run, serverOf, storeForSuite, withCutOffStore, write } from "../support/storeFixtures.ts"
import { startTcpProxy } from "../support/tcpProxy.ts"

const hex = (value: string) => Buffer.from(value, "utf8").toString("hex")

describe("ClickHouse store: what ClickHouse alone does", () => {
  const suite = storeForSuite("clickhouse")

  it("creates the database named in the URL when it does not exist", async () => {
    const name = `gw_test_missing_${uuidv7(Date.now()).slice(-12)}`
    const url = new URL(suite.database.url)
    url.pathname = `/${name}`
    const other = await openStore("clickhouse", url.toString())
    try {
      expect((await failure(other.store.database.ping)).message).toMatch(new RegExp(`^clickhouse ping failed: .*${name}`))
      expect(await run(other.store.database.migrate)).toEqual(["0001_observability_tables", "0002_cache_from_model_inference", "0003_model_inference_cost", "0004_embedding_inference", "0005_datapoints", "0006_evaluation_runs", "0007_workflow_evaluation_runs", "0008_batches", "0009_dicl_examples", "0010_variant_sampling", "0011_datapoint_first_version", "0012_model_inference_stream_chunking", "0013_response_deletions", "0014_workspaces", "0015_tensorzero_import"])
      await run(other.store.database.ping)
      expect(await tablesOf({ ...suite.database, url: url.toString(), name })).toContain("ChatInference")
    } finally {
      await other.close()
      await clickHouseCommand(`DROP DATABASE IF EXISTS ${name}`)
    }
  })

  it("applies a migration another gateway applied but did not record yet (ADD COLUMN included), keeping the rows", async () => {
    const { store, database } = suite
    const entry = cacheEntry(`before ${uuidv7(Date.now())}`, Date.now())
    const row = chatInference()
    await run(write(store, batch({ inferences: [row], modelInferences: [cachedCall(entry, row.id)] })))
    // as if every migration ran while their records were lost: 18.16 has no ADD COLUMN IF NOT EXISTS
    await clickHouseCommand(`DROP TABLE ${database.name}.GatewayMigration`)
    expect(await run(store.database.migrate)).toEqual(["0001_observability_tables", "0002_cache_from_model_inference", "0003_model_inference_cost", "0004_embedding_inference", "0005_datapoints", "0006_evaluation_runs", "0007_workflow_evaluation_runs", "0008_batches", "0009_dicl_examples", "0010_variant_sampling", "0011_datapoint_first_version", "0012_model_inference_stream_chunking", "0013_response_deletions", "0014_workspaces", "0015_tensorzero_import"])
    expect(await run(store.database.migrate)).toEqual([])
    expect(await run(store.inferences.getInferences("default", [row.id]))).toStrictEqual([row])
    expect(await run(store.cache.lookup(entry.key, undefined))).toStrictEqual(entry)
  })

  it("migrates a database of the first schema: model inferences kept and readable, the former cache table gone", async () => {
    const database = await freshDatabase("clickhouse")
    const opened = await openStore("clickhouse", database.url)
    try {
      // the schema as the first release left it, with one model inference in it
      const first = migrationStatements(readFileSync(new URL("../../migrations/clickhouse/0001_observability_tables.sql", import.meta.url), "utf8"))
      for (const statement of first) await clickHouseCommand(statement.replace(/(TABLE|VIEW) IF NOT EXISTS /, `$1 IF NOT EXISTS ${database.name}.`).replace(/ (TO|FROM) (\w+)/g, ` $1 ${database.name}.$2`))
      await clickHouseCommand(`CREATE TABLE ${database.name}.GatewayMigration (version UInt32, name String, applied_at DateTime) ENGINE = ReplacingMergeTree ORDER BY version`)
      await clickHouseCommand(`INSERT INTO ${database.name}.GatewayMigration VALUES (1, '0001_observability_tables', now())`)
      const call = modelInference(uuidv7(Date.now()))
      await clickHouseCommand(`INSERT INTO ${database.name}.ModelInference FORMAT JSONEachRow ${JSON.stringify({
        id: call.id, inference_id: call.inferenceId, model_name: call.modelName, model_provider_name: call.modelProviderName,
        raw_request: call.rawRequest, raw_response: call.rawResponse, system: call.system, input_messages: JSON.stringify(call.inputMessages),
        output: JSON.stringify(call.output), input_tokens: call.inputTokens, output_tokens: call.outputTokens, response_time_ms: call.responseTimeMs,
        ttft_ms: call.ttftMs, finish_reason: call.finishReason, cached: 0, timestamp_ms: call.timestamp
      })}`)

      expect(await run(opened.store.database.migrate)).toEqual(["0002_cache_from_model_inference", "0003_model_inference_cost", "0004_embedding_inference", "0005_datapoints", "0006_evaluation_runs", "0007_workflow_evaluation_runs", "0008_batches", "0009_dicl_examples", "0010_variant_sampling", "0011_datapoint_first_version", "0012_model_inference_stream_chunking", "0013_response_deletions", "0014_workspaces", "0015_tensorzero_import"])
      expect(await run(opened.store.inferences.getModelInferences("default", [call.inferenceId]))).toStrictEqual([call])
      const tables = await tablesOf(database)
      expect(tables).toContain("ModelInferenceCacheKey")
      expect(tables).not.toContain("ModelInferenceCache")
    } finally {
      await opened.close()
      await database.drop()
    }
  })

  it("sends the strings of a query as hex literals, never as SQL text", async () => {
    const marker = "gw 'marker' \"quoted\" \\ -- ;"
    const row = chatInference({ functionName: `fn ${marker}`, variantName: `variant ${marker}`, tags: { [`key ${marker}`]: `value ${marker}` } })
    const entry = cacheEntry(`cache ${marker}`, Date.now())
    await run(write(suite.store, batch({ inferences: [row], modelInferences: [cachedCall(entry, row.id)] })))

    const recording = await startTcpProxy(serverOf(suite.database), { record: true })
    const reader = await openStore("clickhouse", recording.urlFor(suite.database.url))
    try {
      const { store } = reader
      const filter = { type: "tag", key: `key ${marker}`, value: `value ${marker}`, comparison_operator: "=" } as const
      expect(await run(store.inferences.listInferences("default", { functionName: row.functionName, variantName: row.variantName, filter, limit: 10, offset: 0 }))).toStrictEqual([row])
      expect(await run(store.cache.lookup(entry.key, 60))).toStrictEqual(entry)
      const sent = recording.sent()
      for (const value of [row.functionName, row.variantName, filter.key, filter.value, entry.key]) expect(sent).toContain(`unhex('${hex(value)}')`)
      expect(sent).not.toContain("marker")
    } finally {
      await reader.close()
      await recording.close()
    }
  })

  it("keeps NUL bytes and control characters exactly, also as filters", async () => {
    const { store } = suite
    const awkward = "nul\u0000byte \u0001\u001f\u007f"
    const row = chatInference({
      functionName: `fn ${awkward}`,
      variantName: awkward,
      input: { text: awkward },
      output: [{ type: "text", text: awkward }],
      tags: { [`key ${awkward}`]: awkward }
    })
    const comment = feedback("comment", row.id, awkward, { metricName: awkward })
    const entry = cacheEntry(`key ${awkward}`, Date.now(), { rawRequest: awkward })
    await run(write(store, batch({ inferences: [row], feedback: [comment], modelInferences: [cachedCall(entry, row.id)] })))

    const filter = { type: "tag", key: `key ${awkward}`, value: awkward, comparison_operator: "=" } as const
    expect(await run(store.inferences.listInferences("default", { functionName: row.functionName, variantName: awkward, filter, limit: 10, offset: 0 }))).toStrictEqual([row])
    expect(await run(store.feedback.getFeedback("default", [row.id]))).toStrictEqual([comment])
    expect(await run(store.cache.lookup(entry.key, undefined))).toStrictEqual(entry)
  })

  it("keeps lone UTF-16 surrogates inside JSON values exactly (JSON escapes them)", async () => {
    const row = chatInference({ input: { text: "kept \udc00 exactly", "\ud800": ["\udfff"] }, output: [{ type: "text", text: "lone \ud800" }] })
    await run(write(suite.store, batch({ inferences: [row] })))
    expect(await run(suite.store.inferences.getInferences("default", [row.id]))).toStrictEqual([row])
  })

  it("refuses a batch holding an id that is not a UUID before sending any of it", async () => {
    // the server is cut off: a write that reached it would fail otherwise
    await withCutOffStore("clickhouse", suite.database, async (store) => {
      const error = await failure(write(store, batch({ inferences: [chatInference(), chatInference({ episodeId: "nope' --" })] })))
      expect(error.message).toBe("clickhouse refused a value: not a UUID: \"nope' --\"")
      const badFeedback = await failure(write(store, batch({ feedback: [feedback("comment", "1; DROP TABLE x", "hi")] })))
      expect(badFeedback.message).toBe("clickhouse refused a value: not a UUID: \"1; DROP TABLE x\"")
    })
  })

  it("refuses a filter or an age it does not know instead of pasting it into SQL", async () => {
    await withCutOffStore("clickhouse", suite.database, async (store) => {
      const operator = await failure(store.inferences.listInferences("default", {
        filter: { type: "time", time: 1, comparison_operator: "> 0 OR 1 =" as never },
        limit: 1,
        offset: 0
      }))
      expect(operator.message).toMatch(/^clickhouse refused a value: not a comparison operator/)
      const unknown = await failure(store.inferences.listInferences("default", { filter: { type: "sql" } as never, limit: 1, offset: 0 }))
      expect(unknown.message).toMatch(/^clickhouse refused a value: not a filter/)
      const age = await failure(store.cache.lookup("k", Number.NaN))
      expect(age.message).toMatch(/^clickhouse refused a value: not an age/)
    })
  })

  it("rounds a fractional time bound the way that keeps the comparison exact", async () => {
    const base = Date.UTC(2025, 0, 2)
    const rows = [0, 1, 2, 3].map((offset) => chatInference({ id: idAt(base + offset), functionName: "fractional" }))
    await run(write(suite.store, batch({ inferences: rows })))
    const at = async (comparison_operator: "<" | "<=" | ">" | ">=") =>
      (await run(suite.store.inferences.listInferences("default", { functionName: "fractional", filter: { type: "time", time: base + 1.5, comparison_operator }, limit: 10, offset: 0 })))
        .map((row) => row.timestamp - base)
    expect(await at("<")).toEqual([1, 0])
    expect(await at("<=")).toEqual([1, 0])
    expect(await at(">")).toEqual([3, 2])
    expect(await at(">=")).toEqual([3, 2])
  })

  it("refuses URLs it cannot use", async () => {
    const scope = Effect.runSync(Scope.make())
    try {
      const notUrl = await Effect.runPromise(Effect.flip(Scope.provide(scope)(makeClickHouseStores("http://"))))
      expect(notUrl.message).toMatch(/not a valid URL/)
      const badName = await Effect.runPromise(Effect.flip(Scope.provide(scope)(makeClickHouseStores("http://127.0.0.1:8123/a;b"))))
      expect(badName.message).toMatch(/database name/)
    } finally {
      await Effect.runPromise(Scope.close(scope, Exit.void))
    }
  })
})

describe("ClickHouse store: rows inserted again stay in separate parts until a merge, and are read once", () => {
  const suite = storeForSuite("clickhouse")
  // a batch of every kind, written three times: three copies of each row, six where it holds two
  // (the materialized views by id and by episode get one row per inference)
  const copies: Record<string, number> = {
    ChatInference: 3,
    JsonInference: 3,
    InferenceById: 6,
    InferenceByEpisodeId: 6,
    ModelInference: 6,
    BooleanMetricFeedback: 3,
    FloatMetricFeedback: 3,
    CommentFeedback: 3,
    DemonstrationFeedback: 3,
    ModelInferenceCacheKey: 3
  }
  const tables = Object.keys(copies)
  beforeAll(async () => {
    for (const table of tables) await clickHouseCommand(`SYSTEM STOP MERGES ${suite.database.name}.${table}`)
  })

  it("every read path deduplicates by id", async () => {
    const { store, database } = suite
    const once = everyKindBatch()
    const { chat, json } = once
    for (let attempt = 0; attempt < 3; attempt++) await run(write(store, once))

    // the copies on disk that the reads below have to deduplicate
    const counts = await Promise.all(tables.map(async (table) =>
      [table, (await queryDatabase(database, `SELECT toUInt32(count()) AS rows FROM ${table}`))[0].rows] as const
    ))
    expect(Object.fromEntries(counts)).toEqual(copies)
    expect(await run(store.inferences.getInferences("default", [chat.id, json.id]))).toStrictEqual([json, chat])
    expect(await run(store.inferences.listInferences("default", { limit: 100, offset: 0 }))).toStrictEqual([json, chat])
    expect(await run(store.inferences.listInferences("default", { episodeId: chat.episodeId, limit: 1, offset: 1 }))).toStrictEqual([chat])
    expect(await run(store.inferences.getModelInferences("default", [chat.id, json.id]))).toStrictEqual(once.modelInferences)
    expect(await run(store.feedback.getFeedback("default", [chat.id, json.id, chat.episodeId]))).toStrictEqual(once.feedback)
    expect(await run(store.cache.lookup(once.cached.key, undefined))).toStrictEqual(once.cached)
    expect(await run(store.inferences.findInference("default", json.id))).toStrictEqual({ workspace: "default", functionName: json.functionName, functionType: "json", episodeId: json.episodeId, outputSchema: json.outputSchema })
    expect(await run(store.inferences.episodeExists("default", chat.episodeId))).toBe(true)
  })
})
