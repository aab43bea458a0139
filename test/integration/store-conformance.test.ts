/**
 * The conformance suite of the analytics database's ports (issue 3; `AnalyticsStores`:
 * the database, inferences, feedback and cache ports): the same tests against the ClickHouse
 * adapters and the Postgres adapters, on real servers (test/support/globalSetup.ts) and on the
 * embedded database (PGlite, reached with the Postgres adapters), in databases of their own:
 * migrations, exact round trips of every record kind, idempotent writes, listing with filters (tags, time, metrics, demonstrations), ordering and pagination
 * (offset and keyset), the cache, awkward strings, ids that
 * are not UUIDs, and StoreErrors (not crashes) when the server cannot be reached.
 * What only one backend does is in store-clickhouse.test.ts and store-postgres.test.ts.
 */
import { beforeAll, describe, expect, it } from "vitest"
import { uuidv7 } from "../../src/ids.ts"
import type { StoredInference } from "../../src/analytics/records.ts"
import type { ComparisonOperator, InferenceQuery, StoreFilter } from "../../src/storedInferences/store.ts"
import { StoreError } from "../../src/storeError.ts"
import { engineOf, queryDatabase, tablesOf } from "../support/databases.ts"
import { batch, cacheEntry, cachedCall, chatInference, everyKindBatch, failure, feedback, idAt, jsonInference, modelInference, oddStrings, openStore, run, storeForSuite, withCutOffStore, write } from "../support/storeFixtures.ts"
import { startTcpProxy } from "../support/tcpProxy.ts"

const expectedTables = {
  clickhouse: [
    "BatchModelInference",
    "BatchRequest",
    "BooleanMetricFeedback",
    "ChatInference",
    "ChatInferenceByEpisodeId",
    "ChatInferenceById",
    "CommentFeedback",
    "Datapoint",
    "DemonstrationFeedback",
    "DiclExample",
    "DiclWrite",
    "EmbeddingInference",
    "EvaluationResult",
    "EvaluationRun",
    "FloatMetricFeedback",
    "GatewayMigration",
    "InferenceByEpisodeId",
    "InferenceById",
    "JsonInference",
    "JsonInferenceByEpisodeId",
    "JsonInferenceById",
    "ModelInference",
    "ModelInferenceCacheKey",
    "ModelInferenceCacheKeyFill",
    "ResponseDeletion",
    "TensorZeroImportPosition",
    "VariantSampling",
    "WorkflowEvaluationRun",
    "WorkflowEvaluationRunEpisode",
    "WorkflowEvaluationRunEpisodeByRunId",
    "WorkflowEvaluationRunEpisodeByRunIdView"
  ],
  // with the relational store's tables: Postgres has one migration sequence
  postgres: [
    "api_keys",
    "audit_log",
    "batch_model_inferences",
    "batch_requests",
    "boolean_metric_feedback",
    "budget_spend",
    "budgets",
    "budgets_version",
    "chat_inference",
    "comment_feedback",
    "datapoint",
    "demonstration_feedback",
    "dicl_example",
    "dicl_write",
    "embedding_inference",
    "evaluation_result",
    "evaluation_run",
    "float_metric_feedback",
    "gateway_migrations",
    "gateway_task_claims",
    "gateway_task_progress",
    "gateway_task_workers",
    "json_inference",
    "model_inference",
    "rate_limit_buckets",
    "response_deletion",
    "tensorzero_import_position",
    "ui_oidc_logins",
    "ui_sessions",
    "variant_sampling",
    "workflow_evaluation_run",
    "workflow_evaluation_run_episode"
  ]
}

const migrationNames = {
  clickhouse: ["0001_observability_tables", "0002_cache_from_model_inference", "0003_model_inference_cost", "0004_embedding_inference", "0005_datapoints", "0006_evaluation_runs", "0007_workflow_evaluation_runs", "0008_batches", "0009_dicl_examples", "0010_variant_sampling", "0011_datapoint_first_version", "0012_model_inference_stream_chunking", "0013_response_deletions", "0014_workspaces", "0015_tensorzero_import"],
  postgres: ["0001_observability_tables", "0002_api_keys_and_rate_limits", "0003_cache_from_model_inference", "0004_rate_limit_bucket_expiry", "0005_model_inference_cost", "0006_embedding_inference", "0007_datapoints", "0008_evaluation_runs", "0009_workflow_evaluation_runs", "0010_batches", "0011_task_progress", "0012_dicl_examples", "0013_variant_sampling", "0014_task_checkpoint", "0015_api_key_roles", "0016_datapoint_first_version", "0017_ui_sessions", "0018_task_claims", "0019_model_inference_stream_chunking", "0020_task_runs", "0021_response_deletions", "0022_key_workspaces", "0023_data_workspaces", "0024_audit_log", "0025_budget_spend", "0026_budgets", "0027_ui_oidc", "0028_imported_keys", "0029_tensorzero_import"]
}

const migrationsTable = { clickhouse: "GatewayMigration", postgres: "gateway_migrations" }

/** how each server says a table or a database is missing */
const missing = { clickhouse: "doesn't exist", postgres: "does not exist" }

describe.each(["clickhouse", "postgres", "pglite"] as const)("%s store", (backend) => {
  /** the adapters' backend, which the errors name: PGlite is reached with the Postgres ones */
  const engine = engineOf(backend)

  describe("migrations", () => {
    const suite = storeForSuite(backend, { migrate: false })

    // in order: the first test runs before any migration
    it("fails with a one-line StoreError naming the table while migrations have not run", async () => {
      const { store } = suite
      const error = await failure(write(store, batch({ inferences: [chatInference()] })))
      expect(error).toBeInstanceOf(StoreError)
      expect(error.message).toMatch(new RegExp(`^${engine} write failed: .*(ChatInference|chat_inference).* ${missing[engine]}`))
      expect(error.message).not.toMatch(/\n/)
      expect((await failure(store.inferences.getInferences("default", [uuidv7(Date.now())]))).message).toContain(missing[engine])
    })

    it("creates every table, records the migration, and applies nothing the second time", async () => {
      const { store, database } = suite
      expect(store.database.backend).toBe(engine)
      expect(await run(store.database.migrate)).toEqual(migrationNames[engine])
      expect(await tablesOf(database)).toEqual(expectedTables[engine])
      expect(await run(store.database.migrate)).toEqual([])
      expect(await run(store.database.migrate)).toEqual([])
      const recorded = await queryDatabase(database, `SELECT version, name FROM ${migrationsTable[engine]} ORDER BY version`)
      expect(recorded).toEqual(migrationNames[engine].map((name) => ({ version: parseInt(name, 10), name })))
      await expect(run(store.database.ping)).resolves.toBeUndefined()
    })
  })

  describe("reads return what was written", () => {
    const suite = storeForSuite(backend)

    it("chat and json inferences, with optional fields present and absent, newest first", async () => {
      const { store } = suite
      const full = chatInference()
      const minimal = chatInference({ toolParams: undefined, ttftMs: undefined, tags: {}, output: [] })
      const json = jsonInference({ ttftMs: 3, tags: { a: "1", b: "2" } })
      const unparsed = jsonInference({ outputSchema: undefined, output: { raw: "not json", parsed: null } })
      await run(write(store, batch({ inferences: [unparsed, full, json, minimal] })))

      const read = await run(store.inferences.getInferences("default", [full.id, minimal.id, json.id, unparsed.id]))
      expect(read).toStrictEqual([unparsed, json, minimal, full])
      expect("toolParams" in read[2]).toBe(false)
      expect("outputSchema" in read[0]).toBe(false)

      expect(await run(store.inferences.getInferences("default", [json.id, uuidv7(Date.now())]))).toStrictEqual([json])
      expect(await run(store.inferences.getInferences("default", [uuidv7(Date.now())]))).toEqual([])
      expect(await run(store.inferences.getInferences("default", []))).toEqual([])
    })

    it("findInference and episodeExists see every inference, and only those", async () => {
      const { store } = suite
      const chat = chatInference()
      const json = jsonInference()
      const schemaless = jsonInference({ outputSchema: undefined })
      await run(write(store, batch({ inferences: [chat, json, schemaless] })))

      expect(await run(store.inferences.findInference("default", chat.id))).toStrictEqual({ workspace: "default", functionName: "write_haiku", functionType: "chat", episodeId: chat.episodeId })
      expect(await run(store.inferences.findInference("default", json.id))).toStrictEqual({
        workspace: "default",
        functionName: "extract",
        functionType: "json",
        episodeId: json.episodeId,
        outputSchema: json.outputSchema
      })
      expect(await run(store.inferences.findInference("default", schemaless.id))).toStrictEqual({ workspace: "default", functionName: "extract", functionType: "json", episodeId: schemaless.episodeId })
      expect(await run(store.inferences.findInference("default", uuidv7(Date.now())))).toBeUndefined()
      expect(await run(store.inferences.findInference("default", chat.episodeId))).toBeUndefined()
      expect(await run(store.inferences.episodeExists("default", chat.episodeId))).toBe(true)
      expect(await run(store.inferences.episodeExists("default", json.episodeId))).toBe(true)
      expect(await run(store.inferences.episodeExists("default", uuidv7(Date.now())))).toBe(false)
      expect(await run(store.inferences.episodeExists("default", chat.id))).toBe(false)
    })

    it("reads within a workspace: another workspace's inferences, model calls, feedback and episodes are not found", async () => {
      const { store } = suite
      // B's inference shares A's episode (a client chooses episode ids), and A's function
      const mine = chatInference({ workspace: "team-a", functionName: "isolated", tags: { side: "a" } })
      const theirs = chatInference({ workspace: "team-b", functionName: "isolated", episodeId: mine.episodeId, tags: { side: "b" } })
      const lonely = jsonInference({ workspace: "team-a", functionName: "isolated_json" })
      const calls = [modelInference(mine.id, { workspace: "team-a" }), modelInference(theirs.id, { workspace: "team-b" })]
      const rated = [
        feedback("boolean", mine.id, true, { workspace: "team-a", metricName: "isolated_good" }),
        feedback("boolean", theirs.id, true, { workspace: "team-b", metricName: "isolated_good" }),
        feedback("demonstration", mine.id, [{ type: "text", text: "a's" }], { workspace: "team-a" })
      ]
      await run(write(store, batch({ inferences: [mine, theirs, lonely], modelInferences: calls, feedback: rated })))

      expect(await run(store.inferences.getInferences("team-a", [mine.id, theirs.id, lonely.id]))).toStrictEqual([lonely, mine].sort((a, b) => (a.id < b.id ? 1 : -1)))
      expect(await run(store.inferences.getInferences("team-c", [mine.id, theirs.id, lonely.id]))).toEqual([])
      expect(await run(store.inferences.getInferences("default", [mine.id]))).toEqual([])
      const listed = (workspace: string, query: Partial<InferenceQuery> = {}) =>
        run(store.inferences.listInferences(workspace, { functionName: "isolated", limit: 100, offset: 0, ...query })).then((found) => found.map((inference) => inference.id))
      expect(await listed("team-a")).toEqual([mine.id])
      expect(await listed("team-b")).toEqual([theirs.id])
      expect(await listed("team-c")).toEqual([])
      expect(await listed("team-b", { functionName: undefined, episodeId: mine.episodeId })).toEqual([theirs.id])
      expect(await listed("team-b", { filter: { type: "tag", key: "side", value: "a", comparison_operator: "=" } })).toEqual([])
      // a metric's or a demonstration's filter reads the feedback of the workspace only
      const good = { type: "boolean_metric", metricName: "isolated_good", level: "inference", value: true } as const
      expect(await listed("team-a", { filter: good })).toEqual([mine.id])
      expect(await listed("team-b", { filter: good })).toEqual([theirs.id])
      expect(await listed("team-b", { filter: { type: "demonstration" } })).toEqual([])
      expect(await listed("team-a", { filter: { type: "demonstration" } })).toEqual([mine.id])

      expect(await run(store.inferences.getModelInferences("team-a", [mine.id, theirs.id]))).toStrictEqual([calls[0]])
      expect(await run(store.inferences.getModelInferences("team-c", [mine.id, theirs.id]))).toEqual([])
      expect((await run(store.feedback.getFeedback("team-a", [mine.id, theirs.id]))).map((f) => f.id).sort()).toEqual([rated[0].id, rated[2].id].sort())
      expect(await run(store.feedback.getFeedback("team-c", [mine.id, theirs.id]))).toEqual([])

      expect(await run(store.inferences.findInference("team-a", mine.id))).toMatchObject({ workspace: "team-a", functionName: "isolated" })
      expect(await run(store.inferences.findInference("team-b", mine.id))).toBeUndefined()
      expect(await run(store.inferences.findInference("team-b", lonely.id))).toBeUndefined()
      expect(await run(store.inferences.episodeExists("team-a", mine.episodeId))).toBe(true)
      expect(await run(store.inferences.episodeExists("team-b", mine.episodeId))).toBe(true)
      expect(await run(store.inferences.episodeExists("team-c", mine.episodeId))).toBe(false)
      expect(await run(store.inferences.episodeExists("team-b", lonely.episodeId))).toBe(false)
    })

    it("model inferences, oldest first, with optional fields present and absent", async () => {
      const { store } = suite
      const inferenceId = uuidv7(Date.now())
      const first = modelInference(inferenceId, { cached: true })
      const second = modelInference(inferenceId, {
        system: undefined,
        ttftMs: undefined,
        finishReason: undefined,
        inputTokens: 0,
        outputTokens: 0,
        output: [{ type: "tool_call", id: "call_1", raw_name: "get_weather", raw_arguments: "{\"city\":\"Paris\"}" }]
      })
      const empty = modelInference(inferenceId, { output: [], finishReason: "length" })
      const other = modelInference(uuidv7(Date.now()), {
        finishReason: "tool_call",
        output: [{ type: "unknown", data: { x: [1, 2] }, model_provider_name: "tensorzero::model_name::m::provider_name::p" }]
      })
      await run(write(store, batch({ modelInferences: [second, other, empty, first] })))

      expect(await run(store.inferences.getModelInferences("default", [inferenceId]))).toStrictEqual([first, second, empty])
      expect(await run(store.inferences.getModelInferences("default", [inferenceId, other.inferenceId]))).toHaveLength(4)
      expect(await run(store.inferences.getModelInferences("default", [other.inferenceId]))).toStrictEqual([other])
      expect(await run(store.inferences.getModelInferences("default", [uuidv7(Date.now())]))).toEqual([])
      expect(await run(store.inferences.getModelInferences("default", []))).toEqual([])
    })

    it("feedback of all four kinds, on inferences and on episodes, with exact values, in id order", async () => {
      const { store } = suite
      const inferenceId = uuidv7(Date.now())
      const episodeId = uuidv7(Date.now())
      const floats = [0.1, 0.1 + 0.2, 1 / 3, 123456.789, -3, -2.5e-300, 1.7976931348623157e308, 5e-324, 3.0000000000000004]
      const rows = [
        feedback("boolean", inferenceId, true, { tags: { by: "human" } }),
        feedback("boolean", episodeId, false, { targetType: "episode", metricName: "solved" }),
        ...floats.map((value) => feedback("float", inferenceId, value)),
        feedback("float", episodeId, 42, { targetType: "episode" }),
        feedback("comment", inferenceId, "too long, said 'twice'\nand \\ again ✓", { tags: {} }),
        feedback("comment", episodeId, "", { targetType: "episode" }),
        feedback("demonstration", inferenceId, [{ type: "text", text: "Better answer" }]),
        feedback("demonstration", inferenceId, { name: "Ann", age: 30, nested: { ok: true, none: null } }),
        feedback("demonstration", inferenceId, [])
      ]
      const unrelated = feedback("comment", uuidv7(Date.now()), "elsewhere")
      // written in an order that is not the id order
      await run(write(store, batch({ feedback: [...rows].reverse().concat(unrelated) })))

      const read = await run(store.feedback.getFeedback("default", [inferenceId, episodeId]))
      expect(read).toStrictEqual(rows)
      expect(read.filter((row) => row.kind === "float").map((row) => row.value)).toEqual([...floats, 42])
      expect(await run(store.feedback.getFeedback("default", [episodeId]))).toStrictEqual(rows.filter((row) => row.targetId === episodeId))
      expect(await run(store.feedback.getFeedback("default", [uuidv7(Date.now())]))).toEqual([])
      expect(await run(store.feedback.getFeedback("default", []))).toEqual([])
    })

    it("strings with quotes, backslashes, newlines, placeholders, control characters and unicode round-trip, also as filters", async () => {
      const { store } = suite
      const joined = oddStrings.join(" | ")
      const rows = oddStrings.map((value, index) =>
        chatInference({
          functionName: `fn ${value}`,
          variantName: value,
          input: { messages: [{ role: "user", content: value }], [value]: value, "": null },
          output: [{ type: "text", text: value }],
          tags: { [`key ${index} ${value}`]: value, [value]: `${index}` }
        })
      )
      const numbers = chatInference({ input: { deep: [1.5, -0, 1e300, -1e-300, 0.1 + 0.2, true, null] } })
      const call = modelInference(rows[0].id, { rawRequest: joined, rawResponse: oddStrings[4], system: oddStrings[2], modelName: oddStrings[0] })
      const comment = feedback("comment", rows[0].id, joined, { metricName: oddStrings[0], tags: { [oddStrings[1]]: oddStrings[6] } })
      const entry = cacheEntry(`key ${joined}`, Date.now(), { rawRequest: joined, rawResponse: oddStrings[6] })
      await run(write(store, batch({ inferences: [...rows, numbers], modelInferences: [call, cachedCall(entry)], feedback: [comment] })))

      for (const [index, row] of rows.entries()) {
        expect(await run(store.inferences.getInferences("default", [row.id]))).toStrictEqual([row])
        const listed = await run(store.inferences.listInferences("default", {
          functionName: row.functionName,
          variantName: row.variantName,
          filter: { type: "tag", key: `key ${index} ${oddStrings[index]}`, value: oddStrings[index], comparison_operator: "=" },
          limit: 10,
          offset: 0
        }))
        expect(listed).toStrictEqual([row])
      }
      // JSON has no -0: it is written as 0
      expect(await run(store.inferences.getInferences("default", [numbers.id]))).toStrictEqual([{ ...numbers, input: { deep: [1.5, 0, 1e300, -1e-300, 0.1 + 0.2, true, null] } }])
      expect(await run(store.inferences.getModelInferences("default", [rows[0].id]))).toStrictEqual([call])
      expect(await run(store.feedback.getFeedback("default", [rows[0].id]))).toStrictEqual([comment])
      expect(await run(store.cache.lookup(entry.key, undefined))).toStrictEqual(entry)
      // the strings that look like SQL were only ever data
      expect(await run(store.inferences.getInferences("default", rows.map((row) => row.id)))).toHaveLength(rows.length)
    })

    it("lone UTF-16 surrogates in plain strings read back as U+FFFD instead of failing the batch", async () => {
      const { store } = suite
      const row = chatInference({ variantName: "bad \ud800 surrogate", tags: { "k\udc00": "v\ud800" } })
      const call = modelInference(row.id, { rawResponse: "a\udfffb" })
      await run(write(store, batch({ inferences: [row], modelInferences: [call] })))
      expect(await run(store.inferences.getInferences("default", [row.id]))).toStrictEqual([{ ...row, variantName: "bad \ufffd surrogate", tags: { "k\ufffd": "v\ufffd" } }])
      expect(await run(store.inferences.getModelInferences("default", [row.id]))).toStrictEqual([{ ...call, rawResponse: "a\ufffdb" }])
    })

    it("stores a batch written again once: retries, and the same rows twice in one batch", async () => {
      const { store } = suite
      const once = everyKindBatch()
      const { chat, json } = once
      for (let attempt = 0; attempt < 3; attempt++) await run(write(store, once))
      await run(write(store, batch({ inferences: [chat, chat, json], feedback: [once.feedback[0], once.feedback[0]], modelInferences: [once.modelInferences[0], once.modelInferences[0]] })))

      expect(await run(store.inferences.getInferences("default", [chat.id, json.id]))).toStrictEqual([json, chat])
      expect(await run(store.inferences.listInferences("default", { functionName: "every_kind", limit: 100, offset: 0 }))).toStrictEqual([json, chat])
      expect(await run(store.inferences.listInferences("default", { episodeId: chat.episodeId, limit: 100, offset: 0 }))).toStrictEqual([json, chat])
      expect(await run(store.inferences.getModelInferences("default", [chat.id, json.id]))).toStrictEqual(once.modelInferences)
      expect(await run(store.feedback.getFeedback("default", [chat.id, json.id, chat.episodeId]))).toStrictEqual(once.feedback)
      expect(await run(store.cache.lookup(once.cached.key, undefined))).toStrictEqual(once.cached)
      expect(await run(store.inferences.findInference("default", json.id))).toMatchObject({ functionType: "json", episodeId: chat.episodeId })
    })

    it("marks stored responses deleted, twice without error, and says which of some ids are, in their workspace", async () => {
      const deletions = suite.store.responseDeletions
      const [deleted, kept] = [uuidv7(Date.now()), uuidv7(Date.now())]
      expect(await run(deletions.deleted("default", [deleted, kept]))).toEqual(new Set())
      await run(deletions.markDeleted("default", deleted, Date.now()))
      await run(deletions.markDeleted("default", deleted.toUpperCase(), Date.now()))
      expect(await run(deletions.deleted("default", [deleted, kept, "nope"]))).toEqual(new Set([deleted]))
      expect(await run(deletions.deleted("other", [deleted, kept]))).toEqual(new Set())
      expect(await run(deletions.deleted("default", []))).toEqual(new Set())
      expect(await failure(deletions.markDeleted("default", "nope", Date.now()))).toBeInstanceOf(StoreError)
    })

    it("answers ping, and takes an empty batch as a no-op", async () => {
      await run(suite.store.database.ping)
      await run(write(suite.store, batch({})))
    })
  })

  describe("cache", () => {
    const suite = storeForSuite(backend)
    const key = (name: string) => `${name}-${uuidv7(Date.now())}`

    it("returns the newest entry of a key younger than max_age_s, and of any age without one", async () => {
      const { store } = suite
      const now = Date.now()
      const fresh = key("fresh")
      const old = cacheEntry(fresh, now - 600_000)
      const recent = cacheEntry(fresh, now - 20_000, { finishReason: undefined })
      const staleKey = key("stale")
      const stale = cacheEntry(staleKey, now - 3_600_000)
      await run(write(store, batch({ modelInferences: [old, stale].map((entry) => cachedCall(entry)) })))
      await run(write(store, batch({ modelInferences: [recent].map((entry) => cachedCall(entry)) })))

      expect(await run(store.cache.lookup(fresh, undefined))).toStrictEqual(recent)
      expect(await run(store.cache.lookup(fresh, 60))).toStrictEqual(recent)
      expect(await run(store.cache.lookup(fresh, 10))).toBeUndefined()
      expect(await run(store.cache.lookup(staleKey, undefined))).toStrictEqual(stale)
      expect(await run(store.cache.lookup(staleKey, 3000))).toBeUndefined()
      expect(await run(store.cache.lookup(staleKey, 4000))).toStrictEqual(stale)
      expect(await run(store.cache.lookup(key("unknown"), undefined))).toBeUndefined()
    })

    it("keeps the newest entry of a key, whatever order the writes arrive in", async () => {
      const { store } = suite
      const shared = key("shared")
      const now = Date.now()
      const older = cacheEntry(shared, now - 5_000, { output: [{ type: "text", text: "older" }] })
      const newer = cacheEntry(shared, now - 1_000, { output: [{ type: "text", text: "newer" }], finishReason: "stop" })
      const newest = cacheEntry(shared, now, { output: [{ type: "text", text: "newest" }], finishReason: undefined })
      await run(write(store, batch({ modelInferences: [newer].map((entry) => cachedCall(entry)) })))
      await run(write(store, batch({ modelInferences: [older].map((entry) => cachedCall(entry)) })))
      expect(await run(store.cache.lookup(shared, undefined))).toStrictEqual(newer)
      // two entries of one key in the same batch, the newest first
      await run(write(store, batch({ modelInferences: [newest, older].map((entry) => cachedCall(entry)) })))
      expect(await run(store.cache.lookup(shared, undefined))).toStrictEqual(newest)
      expect(await run(store.cache.lookup(shared, 2))).toStrictEqual(newest)
    })
  })

  describe("listing, filters, ordering and pagination", () => {
    const suite = storeForSuite(backend)
    const base = Date.UTC(2025, 0, 1, 12, 0, 0)
    const episode = uuidv7(Date.now())
    // one millisecond apart, except 3 and 4, which share one (and are ordered by id)
    const rows: ReadonlyArray<StoredInference> = [
      chatInference({ id: idAt(base), variantName: "a", tags: { team: "red", user: "u1" } }),
      jsonInference({ id: idAt(base + 1), variantName: "a", tags: { team: "blue" }, episodeId: episode }),
      chatInference({ id: idAt(base + 2), variantName: "b", tags: { team: "red" }, episodeId: episode }),
      chatInference({ id: idAt(base + 3, 1), variantName: "b", tags: {} }),
      jsonInference({ id: idAt(base + 3, 2), variantName: "b", tags: { team: "green", user: "u2" } }),
      chatInference({ id: idAt(base + 4), variantName: "a", tags: { team: "red", user: "u2" } })
    ]
    const all = [5, 4, 3, 2, 1, 0]

    /** the indexes in `rows` of what listInferences answers */
    const list = async (query: Partial<InferenceQuery> = {}) =>
      (await run(suite.store.inferences.listInferences("default", { limit: 100, offset: 0, ...query }))).map((found) => rows.findIndex((row) => row.id === found.id))

    const red = { type: "tag", key: "team", value: "red", comparison_operator: "=" } as const
    const u2 = { type: "tag", key: "user", value: "u2", comparison_operator: "=" } as const
    const early = { type: "time", time: base + 2, comparison_operator: "<=" } as const

    beforeAll(async () => {
      // written in two batches, out of order
      await run(write(suite.store, batch({ inferences: [rows[3], rows[0], rows[5]] })))
      await run(write(suite.store, batch({ inferences: [rows[1], rows[4], rows[2]] })))
    })

    it("lists chat and json inferences together, newest first, ties in one millisecond by id, exactly as written", async () => {
      expect(await run(suite.store.inferences.listInferences("default", { limit: 100, offset: 0 }))).toStrictEqual(all.map((index) => rows[index]))
    })

    it("pages with offset and limit", async () => {
      expect(await list({ limit: 2 })).toEqual([5, 4])
      expect(await list({ limit: 2, offset: 2 })).toEqual([3, 2])
      expect(await list({ limit: 2, offset: 4 })).toEqual([1, 0])
      expect(await list({ limit: 2, offset: 6 })).toEqual([])
      expect(await list({ limit: 3, offset: 1 })).toEqual([4, 3, 2])
      expect(await list({ limit: 1, offset: 5 })).toEqual([0])
      expect(await list({ limit: 0 })).toEqual([])
      expect(await list({ functionName: "write_haiku", limit: 2, offset: 1 })).toEqual([3, 2])
    })

    it("filters by function, variant and episode", async () => {
      expect(await list({ functionName: "extract" })).toEqual([4, 1])
      expect(await list({ functionName: "write_haiku", variantName: "b" })).toEqual([3, 2])
      expect(await list({ variantName: "a" })).toEqual([5, 1, 0])
      expect(await list({ episodeId: episode })).toEqual([2, 1])
      expect(await list({ episodeId: episode, functionName: "extract" })).toEqual([1])
      expect(await list({ functionName: "nope" })).toEqual([])
      expect(await list({ episodeId: uuidv7(Date.now()) })).toEqual([])
    })

    it("filters by tag: = and != need the tag; not() of them includes inferences without it", async () => {
      expect(await list({ filter: red })).toEqual([5, 2, 0])
      expect(await list({ filter: { ...red, comparison_operator: "!=" } })).toEqual([4, 1])
      expect(await list({ filter: { ...red, value: "purple", comparison_operator: "!=" } })).toEqual([5, 4, 2, 1, 0])
      expect(await list({ filter: { type: "not", child: red } })).toEqual([4, 3, 1])
      expect(await list({ filter: { type: "not", child: { ...red, comparison_operator: "!=" } } })).toEqual([5, 3, 2, 0])
      expect(await list({ filter: u2 })).toEqual([5, 4])
      expect(await list({ filter: { type: "tag", key: "missing", value: "", comparison_operator: "=" } })).toEqual([])
      expect(await list({ filter: { type: "tag", key: "missing", value: "", comparison_operator: "!=" } })).toEqual([])
    })

    it("filters by time, exact to the millisecond", async () => {
      const at = (comparison_operator: "<" | "<=" | ">" | ">=", time: number) => list({ filter: { type: "time", time, comparison_operator } })
      expect(await at("<", base + 3)).toEqual([2, 1, 0])
      expect(await at("<=", base + 3)).toEqual([4, 3, 2, 1, 0])
      expect(await at(">", base + 3)).toEqual([5])
      expect(await at(">=", base + 3)).toEqual([5, 4, 3])
      expect(await at("<", base + 4)).toEqual([4, 3, 2, 1, 0])
      expect(await at(">", base + 2)).toEqual([5, 4, 3])
      expect(await at("<", base)).toEqual([])
      expect(await at(">", base + 4)).toEqual([])
      expect(await at("<", 0)).toEqual([])
      expect(await at(">", -1)).toEqual(all)
    })

    it("filters by time with = and !=, to the millisecond", async () => {
      const at = (comparison_operator: "=" | "!=", time: number) => list({ filter: { type: "time", time, comparison_operator } })
      expect(await at("=", base + 3)).toEqual([4, 3])
      expect(await at("!=", base + 3)).toEqual([5, 2, 1, 0])
      expect(await at("=", base)).toEqual([0])
      expect(await at("=", base + 5)).toEqual([])
      expect(await at("!=", base + 5)).toEqual(all)
      expect(await list({ filter: { type: "not", child: { type: "time", time: base + 1, comparison_operator: "=" } } })).toEqual([5, 4, 3, 2, 0])
    })

    it("pages by keyset with before: only older ids, newest first, with the other criteria", async () => {
      expect(await list({ before: rows[5].id })).toEqual([4, 3, 2, 1, 0])
      // 3 and 4 share a millisecond: the id orders them
      expect(await list({ before: rows[4].id })).toEqual([3, 2, 1, 0])
      expect(await list({ before: rows[3].id })).toEqual([2, 1, 0])
      expect(await list({ before: rows[0].id })).toEqual([])
      expect(await list({ before: idAt(base + 100) })).toEqual(all)
      expect(await list({ before: idAt(base - 1) })).toEqual([])
      expect(await list({ before: rows[5].id, filter: red })).toEqual([2, 0])
      expect(await list({ before: rows[4].id, functionName: "write_haiku", limit: 1 })).toEqual([3])
      expect(await list({ before: rows[5].id, limit: 2, offset: 1 })).toEqual([3, 2])
      expect(await list({ before: "not-a-uuid" })).toEqual([])
      // a whole listing, page after page
      const paged: Array<number> = []
      let before: string | undefined
      for (let page = 0; page < 10; page++) {
        const found = await list({ before, limit: 2 })
        if (found.length === 0) break
        paged.push(...found)
        before = rows[found[found.length - 1]].id
      }
      expect(paged).toEqual(all)
    })

    it("combines filters with and, or and not", async () => {
      expect(await list({ filter: { type: "and", children: [red, u2] } })).toEqual([5])
      expect(await list({ filter: { type: "or", children: [u2, early] } })).toEqual([5, 4, 2, 1, 0])
      expect(await list({ filter: { type: "and", children: [red, { type: "not", child: early }] } })).toEqual([5])
      expect(await list({ filter: { type: "not", child: { type: "or", children: [red, early] } } })).toEqual([4, 3])
      expect(await list({ filter: { type: "and", children: [u2, { type: "not", child: { type: "and", children: [red, u2] } }] } })).toEqual([4])
      expect(await list({ filter: { type: "and", children: [red] } })).toEqual([5, 2, 0])
      expect(await list({ filter: { type: "and", children: [] } })).toEqual(all)
      expect(await list({ filter: { type: "or", children: [] } })).toEqual([])
      expect(await list({ functionName: "write_haiku", filter: { type: "or", children: [red, early] }, limit: 2, offset: 1 })).toEqual([2, 0])
    })
  })

  describe("filters on metrics (their latest value, on the inference or its episode) and demonstrations", () => {
    const suite = storeForSuite(backend)
    const base = Date.UTC(2025, 1, 1, 12, 0, 0)
    const episodes = [uuidv7(Date.now()), uuidv7(Date.now())]
    const rows: ReadonlyArray<StoredInference> = [
      chatInference({ id: idAt(base), functionName: "rated", episodeId: episodes[0] }),
      jsonInference({ id: idAt(base + 1), functionName: "rated", episodeId: episodes[0] }),
      chatInference({ id: idAt(base + 2), functionName: "rated", episodeId: episodes[1] }),
      jsonInference({ id: idAt(base + 3), functionName: "rated" }),
      chatInference({ id: idAt(base + 4), functionName: "rated" }),
      chatInference({ id: idAt(base + 5), functionName: "rated" })
    ]
    const all = [5, 4, 3, 2, 1, 0]
    /** feedback ids in a chosen order: `step` orders them (the newest wins) */
    let step = 0
    const later = () => idAt(base + 10_000 + step++)
    const good = (index: number, value: boolean) => feedback("boolean", rows[index].id, value, { id: later(), metricName: "good" })
    const score = (index: number, value: number) => feedback("float", rows[index].id, value, { id: later(), metricName: "score" })
    const solved = (episode: number, value: boolean) =>
      feedback("boolean", episodes[episode], value, { id: later(), metricName: "solved", targetType: "episode" })
    const steps = (episode: number, value: number) =>
      feedback("float", episodes[episode], value, { id: later(), metricName: "steps", targetType: "episode" })
    const feedbackRows = [
      good(0, true),
      good(1, false),
      // two ratings each: the newest one counts
      good(2, false),
      good(2, true),
      good(3, true),
      good(3, false),
      // another metric of the same kind, and feedback of other kinds, on the same inferences
      feedback("boolean", rows[5].id, true, { id: later(), metricName: "other" }),
      feedback("comment", rows[5].id, "fine", { id: later(), metricName: "good" }),
      score(0, 0.1 + 0.2),
      score(1, 1),
      score(2, -2.5),
      score(3, 5),
      score(3, 1 / 3),
      score(5, 1.7976931348623157e308),
      solved(0, true),
      solved(1, true),
      solved(1, false),
      steps(0, 3),
      steps(1, 7),
      feedback("demonstration", rows[1].id, { name: "x" }, { id: later() }),
      feedback("demonstration", rows[4].id, [{ type: "text", text: "better" }], { id: later() }),
      feedback("demonstration", rows[4].id, [{ type: "text", text: "better still" }], { id: later() })
    ]

    const list = async (filter: StoreFilter) =>
      (await run(suite.store.inferences.listInferences("default", { functionName: "rated", filter, limit: 100, offset: 0 })))
        .map((found) => rows.findIndex((row) => row.id === found.id))
    const isGood = (value: boolean) => ({ type: "boolean_metric", metricName: "good", level: "inference", value }) as const
    const scored = (comparison_operator: ComparisonOperator, value: number) =>
      ({ type: "float_metric", metricName: "score", level: "inference", value, comparison_operator }) as const

    beforeAll(async () => {
      // feedback written newest first and in two batches: the ids, not the writes, order it
      await run(write(suite.store, batch({ inferences: [...rows].reverse(), feedback: feedbackRows.slice(8).reverse() })))
      await run(write(suite.store, batch({ feedback: feedbackRows.slice(0, 8).reverse() })))
    })

    it("boolean metrics of inferences: the latest value; none matches neither value", async () => {
      expect(await list(isGood(true))).toEqual([2, 0])
      expect(await list(isGood(false))).toEqual([3, 1])
      // without a rating (4, 5), an inference is left out of both, and so `not` of either takes it
      expect(await list({ type: "not", child: isGood(true) })).toEqual([5, 4, 3, 1])
      expect(await list({ type: "not", child: isGood(false) })).toEqual([5, 4, 2, 0])
      expect(await list({ type: "boolean_metric", metricName: "other", level: "inference", value: true })).toEqual([5])
      expect(await list({ type: "boolean_metric", metricName: "never_given", level: "inference", value: true })).toEqual([])
      expect(await list({ type: "not", child: { type: "boolean_metric", metricName: "never_given", level: "inference", value: false } })).toEqual(all)
    })

    it("float metrics of inferences: every operator, compared exactly, on the latest value", async () => {
      // latest values: 0 -> 0.1 + 0.2, 1 -> 1, 2 -> -2.5, 3 -> 1/3 (after 5), 5 -> the largest double; 4 has none
      expect(await list(scored("=", 0.1 + 0.2))).toEqual([0])
      expect(await list(scored("=", 0.3))).toEqual([])
      expect(await list(scored("!=", 0.3))).toEqual([5, 3, 2, 1, 0])
      expect(await list(scored(">", 0.3))).toEqual([5, 3, 1, 0])
      expect(await list(scored(">=", 0.30000000000000004))).toEqual([5, 3, 1, 0])
      expect(await list(scored(">", 0.30000000000000004))).toEqual([5, 3, 1])
      expect(await list(scored("<", 0.30000000000000004))).toEqual([2])
      expect(await list(scored("<=", 0.30000000000000004))).toEqual([2, 0])
      expect(await list(scored("=", 1 / 3))).toEqual([3])
      expect(await list(scored("=", 5))).toEqual([])
      expect(await list(scored("<", 1))).toEqual([3, 2, 0])
      expect(await list(scored("<=", 1))).toEqual([3, 2, 1, 0])
      expect(await list(scored(">=", 1.7976931348623157e308))).toEqual([5])
      expect(await list(scored("<", -2.5))).toEqual([])
      expect(await list(scored("<=", -2.5))).toEqual([2])
      expect(await list(scored("!=", -2.5))).toEqual([5, 3, 1, 0])
      expect(await list({ type: "not", child: scored(">", 0) })).toEqual([4, 2])
    })

    it("episode-level metrics: the latest value on the inference's episode", async () => {
      const isSolved = (value: boolean) => ({ type: "boolean_metric", metricName: "solved", level: "episode", value }) as const
      const took = (comparison_operator: ComparisonOperator, value: number) =>
        ({ type: "float_metric", metricName: "steps", level: "episode", value, comparison_operator }) as const
      expect(await list(isSolved(true))).toEqual([1, 0])
      expect(await list(isSolved(false))).toEqual([2])
      expect(await list({ type: "not", child: isSolved(true) })).toEqual([5, 4, 3, 2])
      expect(await list(took("<", 5))).toEqual([1, 0])
      expect(await list(took(">=", 7))).toEqual([2])
      expect(await list(took("=", 3))).toEqual([1, 0])
      // the level decides what the feedback targets: no inference is rated "solved" itself
      expect(await list({ type: "boolean_metric", metricName: "solved", level: "inference", value: true })).toEqual([])
    })

    it("demonstrations, and metric filters combined with each other and with tags and time", async () => {
      expect(await list({ type: "demonstration" })).toEqual([4, 1])
      expect(await list({ type: "not", child: { type: "demonstration" } })).toEqual([5, 3, 2, 0])
      expect(await list({ type: "and", children: [isGood(true), scored("<", 0)] })).toEqual([2])
      expect(await list({ type: "or", children: [isGood(true), { type: "demonstration" }] })).toEqual([4, 2, 1, 0])
      expect(await list({ type: "and", children: [{ type: "not", child: isGood(true) }, { type: "time", time: base + 3, comparison_operator: "<=" }] }))
        .toEqual([3, 1])
      expect(await list({ type: "and", children: [{ type: "tag", key: "user", value: "u1", comparison_operator: "=" }, scored(">", 0)] })).toEqual([5, 0])
      expect(await run(suite.store.inferences.listInferences("default", { functionName: "rated", filter: { type: "demonstration" }, before: rows[4].id, limit: 10, offset: 0 })))
        .toStrictEqual([rows[1]])
    })
  })

  describe("ids that are not UUIDs, and servers that cannot be reached", () => {
    const suite = storeForSuite(backend, { proxied: true })
    const notUuids = ["nope", "'; SELECT 1; --", "00000000-0000-0000-0000-000000000000') OR 1=1 --", "0190a1b2-0000-7000-8000-00000000000g", ""]

    it("answers reads with ids that are not UUIDs without asking the server", async () => {
      const stored = chatInference()
      await run(write(suite.store, batch({ inferences: [stored] })))
      // valid ids among invalid ones still count
      expect(await run(suite.store.inferences.getInferences("default", [...notUuids, stored.id]))).toStrictEqual([stored])

      await withCutOffStore(backend, suite.database, async (store) => {
        expect(await run(store.inferences.getInferences("default", notUuids))).toEqual([])
        expect(await run(store.inferences.getModelInferences("default", notUuids))).toEqual([])
        expect(await run(store.feedback.getFeedback("default", notUuids))).toEqual([])
        for (const id of notUuids) {
          expect(await run(store.inferences.findInference("default", id))).toBeUndefined()
          expect(await run(store.inferences.episodeExists("default", id))).toBe(false)
          expect(await run(store.inferences.listInferences("default", { episodeId: id, limit: 10, offset: 0 }))).toEqual([])
        }
        // a valid id does reach the server, which is cut off
        expect(await failure(store.inferences.findInference("default", uuidv7(Date.now())))).toBeInstanceOf(StoreError)
      })
    })

    it("refuses a batch holding an id that is not a UUID, and stores none of it", async () => {
      const { store } = suite
      const good = chatInference()
      const error = await failure(write(store, batch({ inferences: [good, chatInference({ episodeId: "nope' --" })] })))
      expect(error.message).toMatch(/uuid/i)
      expect(await run(store.inferences.getInferences("default", [good.id]))).toEqual([])
      expect((await failure(write(store, batch({ feedback: [feedback("comment", "1; DROP TABLE x", "hi")] })))).message).toMatch(/uuid/i)
    })

    it("fails with a one-line StoreError, not a crash, while the server is cut off, and recovers after", async () => {
      const { store, proxy } = suite
      const row = chatInference()
      proxy.cut()
      try {
        const started = Date.now()
        for (const effect of [store.database.ping, write(store, batch({ inferences: [row] })), store.inferences.listInferences("default", { limit: 1, offset: 0 }), store.inferences.getInferences("default", [row.id]), store.cache.lookup("k", 1), store.database.migrate]) {
          const error = await failure(effect)
          expect(error).toBeInstanceOf(StoreError)
          expect(error.message).toMatch(new RegExp(`^${engine} \\w+.* failed: \\S`))
          expect(error.message).not.toMatch(/\n|    at /)
        }
        expect(Date.now() - started).toBeLessThan(5_000)
      } finally {
        proxy.restore()
      }
      await run(store.database.ping)
      await run(write(store, batch({ inferences: [row] })))
      expect(await run(store.inferences.getInferences("default", [row.id]))).toStrictEqual([row])
    })

    it("fails with a StoreError, quickly, when nothing listens at the address", async () => {
      const closed = await startTcpProxy({ host: "127.0.0.1", port: 1 })
      const url = closed.urlFor(suite.database.url)
      await closed.close()
      const { store, close } = await openStore(backend, url)
      try {
        const started = Date.now()
        for (const effect of [store.database.ping, store.database.migrate, write(store, batch({ inferences: [chatInference()] })), store.inferences.listInferences("default", { limit: 1, offset: 0 })]) {
          const error = await failure(effect)
          expect(error).toBeInstanceOf(StoreError)
          expect(error.message).toMatch(new RegExp(`^${engine} \\w+.* failed: .*ECONNREFUSED`))
          expect(error.message).not.toMatch(/\n|    at /)
        }
        expect(Date.now() - started).toBeLessThan(5_000)
      } finally {
        await close()
      }
    })

    // an embedded server holds one database, the one every database name reaches: there is no
    // other to miss (pglite-socket ignores the name a client asks for)
    if (backend === "pglite") {
      it("reaches its one database whatever database name the URL gives", async () => {
        const stored = chatInference()
        await run(write(suite.store, batch({ inferences: [stored] })))
        const url = new URL(suite.database.url)
        url.pathname = "/gw_test_never_created"
        const { store, close } = await openStore(backend, url.toString())
        try {
          await run(store.database.ping)
          expect(await run(store.inferences.getInferences("default", [stored.id]))).toStrictEqual([stored])
        } finally {
          await close()
        }
      })
    } else {
      it("fails with a one-line StoreError naming the database when it does not exist", async () => {
        const url = new URL(suite.database.url)
        url.pathname = "/gw_test_never_created"
        const { store, close } = await openStore(backend, url.toString())
        try {
          for (const [operation, effect] of [["ping", store.database.ping], ["listInferences", store.inferences.listInferences("default", { limit: 1, offset: 0 })]] as const) {
            const error = await failure(effect)
            expect(error.message).toMatch(new RegExp(`^${engine} ${operation} failed: .*gw_test_never_created.* ${missing[engine]}`))
            // ClickHouse 18.16 appends a stack trace to its messages
            expect(error.message).not.toMatch(/\n|Stack trace|e\.what/)
          }
        } finally {
          await close()
        }
      })
    }
  })
})
