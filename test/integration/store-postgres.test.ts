/**
 * What only the Postgres store does (the behaviour both stores share is checked by
 * store-conformance.test.ts): concurrent migrations serialised by an advisory lock, the
 * upgrade from the first schema, text Postgres cannot hold (NUL, lone surrogates in JSONB)
 * written again with U+FFFD, large batches, one row per id on disk (ON CONFLICT), fractional
 * durations.
 */
import { readFileSync } from "node:fs"
import { describe, expect, it } from "vitest"
import { uuidv7 } from "../../src/ids.ts"
import { psql } from "../support/access.ts"
import { freshDatabase, queryDatabase, tablesOf } from "../support/databases.ts"
import { batch, chatInference, everyKindBatch, jsonInference, modelInference, openStore, run, storeForSuite, write } from "../support/storeFixtures.ts"

describe("Postgres store: migrations", () => {
  it("applies each migration once when several migrate at the same time", async () => {
    const database = await freshDatabase("postgres")
    const first = await openStore("postgres", database.url)
    const second = await openStore("postgres", database.url)
    try {
      // two pools (as two gateway processes would have) and two calls on the same pool
      const results = await Promise.all([
        run(first.store.database.migrate),
        run(second.store.database.migrate),
        run(first.store.database.migrate),
        run(second.store.database.migrate)
      ])
      // the one Postgres sequence, shared with the relational store (test/integration/relational-postgres.test.ts);
      // each applied once, by whichever call got there first (the results are listed by call, not by time)
      expect(results.flat().sort()).toEqual(["0001_observability_tables", "0002_api_keys_and_rate_limits", "0003_cache_from_model_inference", "0004_rate_limit_bucket_expiry", "0005_model_inference_cost", "0006_embedding_inference", "0007_datapoints", "0008_evaluation_runs", "0009_workflow_evaluation_runs", "0010_batches", "0011_task_progress", "0012_dicl_examples", "0013_variant_sampling", "0014_task_checkpoint", "0015_api_key_roles", "0016_datapoint_first_version", "0017_ui_sessions", "0018_task_claims", "0019_model_inference_stream_chunking", "0020_task_runs", "0021_response_deletions", "0022_key_workspaces", "0023_data_workspaces", "0024_audit_log", "0025_budget_spend", "0026_budgets", "0027_ui_oidc", "0028_imported_keys", "0029_tensorzero_import"])
      expect(await queryDatabase(database, "SELECT version, name FROM gateway_migrations ORDER BY version")).toEqual([
        { version: 1, name: "0001_observability_tables" },
        { version: 2, name: "0002_api_keys_and_rate_limits" },
        { version: 3, name: "0003_cache_from_model_inference" },
        { version: 4, name: "0004_rate_limit_bucket_expiry" },
        { version: 5, name: "0005_model_inference_cost" },
        { version: 6, name: "0006_embedding_inference" },
        { version: 7, name: "0007_datapoints" },
        { version: 8, name: "0008_evaluation_runs" },
        { version: 9, name: "0009_workflow_evaluation_runs" },
        { version: 10, name: "0010_batches" },
        { version: 11, name: "0011_task_progress" },
        { version: 12, name: "0012_dicl_examples" },
        { version: 13, name: "0013_variant_sampling" },
        { version: 14, name: "0014_task_checkpoint" },
        { version: 15, name: "0015_api_key_roles" },
        { version: 16, name: "0016_datapoint_first_version" },
        { version: 17, name: "0017_ui_sessions" },
        { version: 18, name: "0018_task_claims" },
        { version: 19, name: "0019_model_inference_stream_chunking" },
        { version: 20, name: "0020_task_runs" },
        { version: 21, name: "0021_response_deletions" },
        { version: 22, name: "0022_key_workspaces" },
        { version: 23, name: "0023_data_workspaces" },
        { version: 24, name: "0024_audit_log" },
        { version: 25, name: "0025_budget_spend" },
        { version: 26, name: "0026_budgets" },
        { version: 27, name: "0027_ui_oidc" },
        { version: 28, name: "0028_imported_keys" },
        { version: 29, name: "0029_tensorzero_import" }
      ])
    } finally {
      await first.close()
      await second.close()
      await database.drop()
    }
  })
})

describe("Postgres store: upgrade", () => {
  it("migrates a database of the first schema: model inferences kept and readable, the former cache table gone", async () => {
    const database = await freshDatabase("postgres")
    const opened = await openStore("postgres", database.url)
    try {
      const migration = (name: string) => readFileSync(new URL(`../../migrations/postgres/${name}.sql`, import.meta.url), "utf8")
      // the schema as the first release left it, with one model inference in it
      await psql(database.url, migration("0001_observability_tables") + migration("0002_api_keys_and_rate_limits"))
      await psql(database.url, `CREATE TABLE gateway_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now());
        INSERT INTO gateway_migrations (version, name) VALUES (1, '0001_observability_tables'), (2, '0002_api_keys_and_rate_limits')`)
      const call = modelInference(uuidv7(Date.now()))
      const dollar = (value: unknown) => `$json$${typeof value === "string" ? value : JSON.stringify(value)}$json$`
      await psql(database.url, `INSERT INTO model_inference (id, inference_id, model_name, model_provider_name, raw_request, raw_response, system,
          input_messages, output, input_tokens, output_tokens, response_time_ms, ttft_ms, finish_reason, cached, timestamp)
        VALUES ('${call.id}', '${call.inferenceId}', ${dollar(call.modelName)}, ${dollar(call.modelProviderName)}, ${dollar(call.rawRequest)},
          ${dollar(call.rawResponse)}, ${dollar(call.system)}, ${dollar(call.inputMessages)}, ${dollar(call.output)}, ${call.inputTokens},
          ${call.outputTokens}, ${call.responseTimeMs}, ${call.ttftMs}, '${call.finishReason}', false, '${new Date(call.timestamp).toISOString()}')`)

      expect(await run(opened.store.database.migrate)).toEqual(["0003_cache_from_model_inference", "0004_rate_limit_bucket_expiry", "0005_model_inference_cost", "0006_embedding_inference", "0007_datapoints", "0008_evaluation_runs", "0009_workflow_evaluation_runs", "0010_batches", "0011_task_progress", "0012_dicl_examples", "0013_variant_sampling", "0014_task_checkpoint", "0015_api_key_roles", "0016_datapoint_first_version", "0017_ui_sessions", "0018_task_claims", "0019_model_inference_stream_chunking", "0020_task_runs", "0021_response_deletions", "0022_key_workspaces", "0023_data_workspaces", "0024_audit_log", "0025_budget_spend", "0026_budgets", "0027_ui_oidc", "0028_imported_keys", "0029_tensorzero_import"])
      expect(await run(opened.store.inferences.getModelInferences("default", [call.inferenceId]))).toStrictEqual([call])
      expect(await tablesOf(database)).not.toContain("model_inference_cache")
    } finally {
      await opened.close()
      await database.drop()
    }
  })
})

describe("Postgres store: what Postgres alone does", () => {
  const suite = storeForSuite("postgres")

  /** rows on disk per table, keyed by table name */
  const rowCounts = async () => {
    const tables = ["chat_inference", "json_inference", "model_inference", "boolean_metric_feedback", "float_metric_feedback", "comment_feedback", "demonstration_feedback"]
    const counts = await Promise.all(tables.map(async (table) => (await queryDatabase(suite.database, `SELECT count(*)::int AS rows FROM ${table}`))[0].rows as number))
    return Object.fromEntries(tables.map((table, index) => [table, counts[index]]))
  }

  it("stores text Postgres cannot hold (NUL anywhere, lone surrogates in JSON) with U+FFFD instead of failing forever", async () => {
    const { store } = suite
    const inference = chatInference({ input: { messages: [{ role: "user", content: "nul:\u0000 lone:\ud800" }] }, tags: { "k\u0000": "v" } })
    const model = modelInference(inference.id, { rawResponse: "a\u0000b" })
    // a row of the same batch without such text is stored as it is
    const plain = jsonInference()
    await run(write(store, batch({ inferences: [inference, plain], modelInferences: [model] })))

    const [read] = await run(store.inferences.getInferences("default", [inference.id]))
    expect(read.input).toEqual({ messages: [{ role: "user", content: "nul:\uFFFD lone:\uFFFD" }] })
    expect(read.tags).toEqual({ "k\uFFFD": "v" })
    expect((await run(store.inferences.getModelInferences("default", [inference.id])))[0].rawResponse).toBe("a\uFFFDb")
    expect(await run(store.inferences.getInferences("default", [plain.id]))).toStrictEqual([plain])
  })

  it("writes large batches (one JSON parameter per table)", async () => {
    const { store } = suite
    const inferenceId = uuidv7(Date.now())
    const many = Array.from({ length: 5_000 }, () => modelInference(inferenceId))
    const inferences = Array.from({ length: 1_000 }, () => chatInference({ functionName: "bulk" }))
    await run(write(store, batch({ modelInferences: many, inferences })))
    expect(await run(store.inferences.getModelInferences("default", [inferenceId]))).toStrictEqual(many)
    expect(await run(store.inferences.listInferences("default", { functionName: "bulk", limit: 2_000, offset: 0 }))).toHaveLength(1_000)
  })

  it("keeps one row per id on disk when a batch is written again", async () => {
    const once = everyKindBatch()
    const before = await rowCounts()
    await run(write(suite.store, once))
    await run(write(suite.store, once))
    await run(write(suite.store, batch({ inferences: [once.chat, once.chat], feedback: [once.feedback[0], once.feedback[0]], modelInferences: [once.modelInferences[0], once.modelInferences[0]] })))
    const after = await rowCounts()
    expect(Object.fromEntries(Object.entries(after).map(([table, rows]) => [table, rows - before[table]]))).toEqual({
      chat_inference: 1,
      json_inference: 1,
      model_inference: 2,
      boolean_metric_feedback: 1,
      float_metric_feedback: 1,
      comment_feedback: 1,
      demonstration_feedback: 1
    })
  })

  it("keeps fractional durations exactly", async () => {
    const { store } = suite
    const inference = jsonInference({ processingTimeMs: 12.5, ttftMs: 0.25 })
    const call = modelInference(inference.id, { responseTimeMs: 80.125, ttftMs: 1 / 3 })
    await run(write(store, batch({ inferences: [inference], modelInferences: [call] })))
    expect(await run(store.inferences.getInferences("default", [inference.id]))).toStrictEqual([inference])
    expect(await run(store.inferences.getModelInferences("default", [inference.id]))).toStrictEqual([call])
  })
})
