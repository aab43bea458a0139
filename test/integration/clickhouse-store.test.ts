/**
 * The ClickHouse store against a real server (test/support/globalSetup.ts starts one), each
 * suite in a database of its own: migrations, exact round trips of every record kind,
 * idempotent writes, listing with filters, the cache, awkward strings, refused values, and
 * StoreErrors (not crashes) when the server cannot be reached.
 */
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Scope from "effect/Scope"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeClickHouseStore } from "../../layers/observability/clickhouse.ts"
import { uuidv7 } from "../../src/ids.ts"
import type { CacheEntry, StoredFeedback, StoredInference, StoredModelInference, WriteBatch } from "../../src/observability/records.ts"
import { type Store, StoreError } from "../../src/observability/store.ts"
import { clickHouseCommand, freshDatabase, type TestDatabase } from "../support/databases.ts"
import { startTcpProxy, type TcpProxy } from "../support/tcpProxy.ts"

// ---- helpers

interface OpenStore {
  readonly store: Store
  readonly close: () => Promise<void>
}

const openStore = async (url: string): Promise<OpenStore> => {
  const scope = Effect.runSync(Scope.make())
  const store = await Effect.runPromise(Scope.provide(scope)(makeClickHouseStore(url)))
  return { store, close: () => Effect.runPromise(Scope.close(scope, Exit.void)) }
}

const run = <A>(effect: Effect.Effect<A, StoreError>): Promise<A> => Effect.runPromise(effect)

/** the StoreError `effect` fails with (the test fails if it succeeds or dies) */
const failure = (effect: Effect.Effect<unknown, StoreError>): Promise<StoreError> => Effect.runPromise(Effect.flip(effect))

/** A UUIDv7 carrying the time `ms`; `sequence` orders ids of the same millisecond. */
const idAt = (ms: number, sequence = 0): string => {
  const time = ms.toString(16).padStart(12, "0")
  const random = uuidv7().slice(19)
  return `${time.slice(0, 8)}-${time.slice(8)}-7${sequence.toString(16).padStart(3, "0")}-${random}`
}

const timeOf = (id: string) => parseInt(id.slice(0, 8) + id.slice(9, 13), 16)

const batch = (rows: Partial<WriteBatch>): WriteBatch => ({ inferences: [], modelInferences: [], feedback: [], cache: [], ...rows })

const chatInference = (fields: Partial<StoredInference> = {}): StoredInference => {
  const id = fields.id ?? uuidv7()
  return {
    id,
    functionName: "write_haiku",
    functionType: "chat",
    variantName: "gpt",
    episodeId: uuidv7(),
    input: { system: { name: "Ann" }, messages: [{ role: "user", content: [{ type: "text", text: "a haiku about rain" }] }] },
    output: [
      { type: "text", text: "Rain on the roof" },
      { type: "tool_call", id: "call_1", name: "get_weather", arguments: { city: "Paris" }, raw_name: "get_weather", raw_arguments: "{\"city\":\"Paris\"}" },
      { type: "tool_call", id: "call_2", name: null, arguments: null, raw_name: "nope", raw_arguments: "{oops" }
    ],
    toolParams: { tools_available: [{ name: "get_weather", description: "weather", parameters: { type: "object" }, strict: false }], tool_choice: "auto", parallel_tool_calls: null, allowed_tools: null },
    inferenceParams: { chat_completion: { temperature: 0.7, max_tokens: 100, seed: null, json_mode: "off" } },
    processingTimeMs: 123,
    ttftMs: 45,
    tags: { user: "u1", "env": "prod" },
    timestamp: timeOf(id),
    ...fields
  }
}

const jsonInference = (fields: Partial<StoredInference> = {}): StoredInference => {
  const id = fields.id ?? uuidv7()
  return {
    id,
    functionName: "extract",
    functionType: "json",
    variantName: "strict",
    episodeId: uuidv7(),
    input: { messages: [{ role: "user", content: "Ann is 30" }] },
    output: { raw: "{\"name\":\"Ann\",\"age\":30}", parsed: { name: "Ann", age: 30 } },
    outputSchema: { type: "object", properties: { name: { type: "string" }, age: { type: "integer" } }, required: ["name"] },
    inferenceParams: { chat_completion: { json_mode: "strict" } },
    processingTimeMs: 7,
    tags: {},
    timestamp: timeOf(id),
    ...fields
  }
}

const modelInference = (inferenceId: string, fields: Partial<StoredModelInference> = {}): StoredModelInference => {
  const id = fields.id ?? uuidv7()
  return {
    id,
    inferenceId,
    modelName: "gpt-4o-mini",
    modelProviderName: "openai",
    rawRequest: "{\"model\":\"gpt-4o-mini\",\"messages\":[]}",
    rawResponse: "{\"id\":\"chatcmpl-1\",\"choices\":[]}",
    system: "You are terse.",
    inputMessages: [{ role: "user", content: [{ type: "text", text: "hi" }] }],
    output: [{ type: "text", text: "hello" }, { type: "thought", text: "hmm", signature: "sig" }],
    inputTokens: 10,
    outputTokens: 2,
    responseTimeMs: 321,
    ttftMs: 12,
    finishReason: "stop",
    cached: false,
    timestamp: timeOf(id),
    ...fields
  }
}

const feedback = (kind: StoredFeedback["kind"], targetId: string, value: unknown, fields: Partial<StoredFeedback> = {}): StoredFeedback => {
  const id = fields.id ?? uuidv7()
  return {
    id,
    kind,
    metricName: kind === "comment" || kind === "demonstration" ? kind : `${kind}_metric`,
    targetType: "inference",
    targetId,
    value,
    tags: { reviewer: "bob" },
    timestamp: timeOf(id),
    ...fields
  }
}

const cacheEntry = (key: string, timestamp: number, fields: Partial<CacheEntry> = {}): CacheEntry => ({
  key,
  output: [{ type: "text", text: `answer at ${timestamp}` }],
  rawRequest: "{\"q\":1}",
  rawResponse: "{\"a\":1}",
  finishReason: "length",
  timestamp,
  ...fields
})

const clickHouseServer = () => new URL(process.env.GATEWAY_TEST_CLICKHOUSE_URL!)

const expectedTables = [
  "BooleanMetricFeedback",
  "ChatInference",
  "CommentFeedback",
  "DemonstrationFeedback",
  "FloatMetricFeedback",
  "GatewayMigration",
  "InferenceByEpisodeId",
  "InferenceById",
  "JsonInference",
  "ModelInference",
  "ModelInferenceCache"
]

// ---- tests

describe("ClickHouse store: migrations", () => {
  let database: TestDatabase
  let opened: OpenStore
  beforeAll(async () => {
    database = await freshDatabase("clickhouse")
    opened = await openStore(database.url)
  })
  afterAll(async () => {
    await opened?.close()
    await database?.drop()
  })

  it("creates every table, records the migration, and applies nothing the second time", async () => {
    expect(await run(opened.store.migrate)).toEqual(["0001_observability_tables"])
    const tables = await showTables(database.url)
    for (const table of expectedTables) expect(tables).toContain(table)
    expect(await run(opened.store.migrate)).toEqual([])
    expect(await run(opened.store.migrate)).toEqual([])
    await expect(run(opened.store.ping)).resolves.toBeUndefined()
  })

  it("creates the database named in the URL when it does not exist", async () => {
    const name = `gw_test_missing_${Date.now()}`
    const url = `http://default:@${clickHouseServer().host}/${name}`
    const other = await openStore(url)
    try {
      expect((await failure(other.store.ping)).message).toMatch(/^clickhouse ping failed: .*gw_test_missing_/)
      expect(await run(other.store.migrate)).toEqual(["0001_observability_tables"])
      await run(other.store.ping)
      expect(await showTables(url)).toContain("ChatInference")
    } finally {
      await other.close()
      await clickHouseCommand(`DROP DATABASE IF EXISTS ${name}`)
    }
  })
})

const showTables = async (url: string): Promise<Array<string>> => {
  const { createClient } = await import("@clickhouse/client")
  const parsed = new URL(url)
  const client = createClient({ url: parsed.origin, username: "default", password: "", database: parsed.pathname.slice(1) })
  try {
    const rows = await (await client.query({ query: "SHOW TABLES", format: "JSONEachRow" })).json<{ name: string }>()
    return rows.map((row) => row.name)
  } finally {
    await client.close()
  }
}

describe("ClickHouse store: reads return what was written", () => {
  let database: TestDatabase
  let opened: OpenStore
  let store: Store
  beforeAll(async () => {
    database = await freshDatabase("clickhouse")
    opened = await openStore(database.url)
    store = opened.store
    await run(store.migrate)
  })
  afterAll(async () => {
    await opened?.close()
    await database?.drop()
  })

  it("chat and json inferences, with optional fields present and absent", async () => {
    const full = chatInference()
    const minimal = chatInference({ toolParams: undefined, ttftMs: undefined, tags: {} })
    delete (minimal as { toolParams?: unknown }).toolParams
    delete (minimal as { ttftMs?: unknown }).ttftMs
    const json = jsonInference({ ttftMs: 3 })
    const unparsed = jsonInference({ output: { raw: "not json", parsed: null } })
    await run(store.write(batch({ inferences: [full, minimal, json, unparsed] })))

    const read = await run(store.getInferences([full.id, minimal.id, json.id, unparsed.id]))
    const byId = new Map(read.map((row) => [row.id, row]))
    expect(read).toHaveLength(4)
    expect(byId.get(full.id)).toStrictEqual(full)
    expect(byId.get(minimal.id)).toStrictEqual(minimal)
    expect(byId.get(json.id)).toStrictEqual(json)
    expect(byId.get(unparsed.id)).toStrictEqual(unparsed)
    expect("toolParams" in byId.get(minimal.id)!).toBe(false)
    expect("outputSchema" in byId.get(full.id)!).toBe(false)
    // newest first
    expect(read.map((row) => row.id)).toEqual([full.id, minimal.id, json.id, unparsed.id].sort().reverse())

    expect(await run(store.findInference(full.id))).toStrictEqual({ functionName: "write_haiku", functionType: "chat", episodeId: full.episodeId })
    expect(await run(store.findInference(json.id))).toStrictEqual({
      functionName: "extract",
      functionType: "json",
      episodeId: json.episodeId,
      outputSchema: json.outputSchema
    })
    expect(await run(store.findInference(uuidv7()))).toBeUndefined()
    expect(await run(store.episodeExists(full.episodeId))).toBe(true)
    expect(await run(store.episodeExists(json.episodeId))).toBe(true)
    expect(await run(store.episodeExists(uuidv7()))).toBe(false)
    expect(await run(store.getInferences([uuidv7()]))).toEqual([])
    expect(await run(store.getInferences([]))).toEqual([])
  })

  it("model inferences, oldest first, with optional fields present and absent", async () => {
    const inferenceId = uuidv7()
    const first = modelInference(inferenceId, { cached: true })
    const second = modelInference(inferenceId, { system: undefined, ttftMs: undefined, finishReason: undefined, output: [] })
    delete (second as { system?: unknown }).system
    delete (second as { ttftMs?: unknown }).ttftMs
    delete (second as { finishReason?: unknown }).finishReason
    const other = modelInference(uuidv7(), { finishReason: "tool_call", output: [{ type: "unknown", data: { x: [1, 2] }, model_provider_name: "tensorzero::model_name::m::provider_name::p" }] })
    await run(store.write(batch({ modelInferences: [second, other, first] })))

    expect(await run(store.getModelInferences([inferenceId]))).toStrictEqual([first, second])
    expect(await run(store.getModelInferences([inferenceId, other.inferenceId]))).toHaveLength(3)
    expect(await run(store.getModelInferences([uuidv7()]))).toEqual([])
  })

  it("feedback of all four kinds, for inferences and episodes, exact values", async () => {
    const inferenceId = uuidv7()
    const episodeId = uuidv7()
    const floats = [0.1, 1 / 3, 123456.789, -2.5e-300, 1.7976931348623157e308, 5e-324, 3.0000000000000004]
    const rows = [
      feedback("boolean", inferenceId, true),
      feedback("boolean", episodeId, false, { targetType: "episode", metricName: "solved" }),
      ...floats.map((value) => feedback("float", inferenceId, value)),
      feedback("float", episodeId, 42, { targetType: "episode" }),
      feedback("comment", inferenceId, "too long, said 'twice'\nand \\ again ✓", { tags: {} }),
      feedback("comment", episodeId, "", { targetType: "episode" }),
      feedback("demonstration", inferenceId, [{ type: "text", text: "Better answer" }]),
      feedback("demonstration", inferenceId, { name: "Ann", age: 30, nested: { ok: true, none: null } })
    ]
    await run(store.write(batch({ feedback: rows })))

    const read = await run(store.getFeedback([inferenceId, episodeId]))
    expect(read).toStrictEqual([...rows].sort((a, b) => (a.id < b.id ? -1 : 1)))
    expect(read.filter((row) => row.kind === "float").map((row) => row.value)).toEqual([...floats, 42])
    expect(await run(store.getFeedback([episodeId]))).toHaveLength(3)
    expect(await run(store.getFeedback([uuidv7()]))).toEqual([])
  })

  it("strings with quotes, backslashes, newlines, control characters and unicode round-trip, also as filters", async () => {
    const awkward = [
      "it's \"quoted\"",
      "back\\slash \\' \\\\",
      "line\nbreak\r\ttab",
      "nul\u0000byte \u0001\u001f",
      "'); DROP TABLE ChatInference; --",
      "unicode: é 日本語 😀 \u2028\u2029",
      ""
    ]
    const rows = awkward.map((value, index) =>
      chatInference({
        functionName: `fn ${value}`,
        variantName: value,
        input: { messages: [{ role: "user", content: value }] },
        output: [{ type: "text", text: value }],
        tags: { [`key ${index} ${value}`]: value }
      })
    )
    const call = modelInference(rows[0].id, { rawRequest: awkward.join("|"), rawResponse: awkward[4], system: awkward[1] })
    await run(store.write(batch({ inferences: rows, modelInferences: [call] })))

    for (const [index, row] of rows.entries()) {
      expect(await run(store.getInferences([row.id]))).toStrictEqual([row])
      const listed = await run(store.listInferences({
        functionName: row.functionName,
        variantName: row.variantName,
        filter: { type: "tag", key: `key ${index} ${awkward[index]}`, value: awkward[index], comparison_operator: "=" },
        limit: 10,
        offset: 0
      }))
      expect(listed).toStrictEqual([row])
    }
    expect(await run(store.getModelInferences([rows[0].id]))).toStrictEqual([call])
    // the string that looks like SQL was only ever data
    expect(await showTables(database.url)).toContain("ChatInference")
  })

  it("lone UTF-16 surrogates in plain strings are stored as U+FFFD instead of failing the batch", async () => {
    const row = chatInference({ variantName: "bad \ud800 surrogate", input: { text: "kept \udc00 exactly" } })
    await run(store.write(batch({ inferences: [row] })))
    const [read] = await run(store.getInferences([row.id]))
    expect(read.variantName).toBe("bad \ufffd surrogate")
    expect(read.input).toEqual({ text: "kept \udc00 exactly" })
  })
})

describe("ClickHouse store: idempotent writes", () => {
  let database: TestDatabase
  let opened: OpenStore
  beforeAll(async () => {
    database = await freshDatabase("clickhouse")
    opened = await openStore(database.url)
    await run(opened.store.migrate)
  })
  afterAll(async () => {
    await opened?.close()
    await database?.drop()
  })

  it("a batch written three times is read once", async () => {
    const { store } = opened
    const chat = chatInference()
    const json = jsonInference({ episodeId: chat.episodeId })
    const calls = [modelInference(chat.id), modelInference(json.id)]
    const notes = [feedback("boolean", chat.id, true), feedback("float", chat.id, 0.5), feedback("comment", chat.episodeId, "ok", { targetType: "episode" }), feedback("demonstration", json.id, { name: "x" })]
    const cached = [cacheEntry("k".repeat(64), Date.now())]
    const once = batch({ inferences: [chat, json], modelInferences: calls, feedback: notes, cache: cached })
    for (let attempt = 0; attempt < 3; attempt++) await run(store.write(once))

    expect(await run(store.getInferences([chat.id, json.id]))).toHaveLength(2)
    expect(await run(store.listInferences({ limit: 100, offset: 0 }))).toHaveLength(2)
    expect(await run(store.listInferences({ episodeId: chat.episodeId, limit: 100, offset: 0 }))).toHaveLength(2)
    expect(await run(store.getModelInferences([chat.id, json.id]))).toHaveLength(2)
    expect(await run(store.getFeedback([chat.id, json.id, chat.episodeId]))).toHaveLength(4)
    expect(await run(store.cacheLookup("k".repeat(64), undefined))).toStrictEqual(cached[0])
    expect(await run(store.findInference(json.id))).toMatchObject({ functionType: "json" })
  })

  it("an empty batch is a no-op", async () => {
    await run(opened.store.write(batch({})))
  })
})

describe("ClickHouse store: listing, filters, ordering and pagination", () => {
  let database: TestDatabase
  let opened: OpenStore
  let store: Store
  const base = Date.UTC(2025, 0, 1, 12, 0, 0)
  const episode = uuidv7()
  // a0..a5: one millisecond apart except a3 and a4, which share one (ordered by id)
  let rows: Array<StoredInference>
  beforeAll(async () => {
    database = await freshDatabase("clickhouse")
    opened = await openStore(database.url)
    store = opened.store
    await run(store.migrate)
    const ids = [idAt(base), idAt(base + 1), idAt(base + 2), idAt(base + 3, 1), idAt(base + 3, 2), idAt(base + 4)]
    rows = [
      chatInference({ id: ids[0], timestamp: base, variantName: "a", tags: { team: "red", user: "u1" } }),
      jsonInference({ id: ids[1], timestamp: base + 1, variantName: "a", tags: { team: "blue" }, episodeId: episode }),
      chatInference({ id: ids[2], timestamp: base + 2, variantName: "b", tags: { team: "red" }, episodeId: episode }),
      chatInference({ id: ids[3], timestamp: base + 3, variantName: "b", tags: {} }),
      jsonInference({ id: ids[4], timestamp: base + 3, variantName: "b", tags: { team: "green", user: "u2" } }),
      chatInference({ id: ids[5], timestamp: base + 4, variantName: "a", tags: { team: "red", user: "u2" } })
    ]
    // written in two batches, out of order
    await run(store.write(batch({ inferences: [rows[3], rows[0], rows[5]] })))
    await run(store.write(batch({ inferences: [rows[1], rows[4], rows[2]] })))
  })
  afterAll(async () => {
    await opened?.close()
    await database?.drop()
  })

  const list = async (query: Partial<Parameters<Store["listInferences"]>[0]> = {}) =>
    (await run(store.listInferences({ limit: 100, offset: 0, ...query }))).map((row) => rows.indexOf(rows.find((r) => r.id === row.id)!))

  it("lists chat and json inferences newest first, ties in the same millisecond by id", async () => {
    expect(await list()).toEqual([5, 4, 3, 2, 1, 0])
    const all = await run(store.listInferences({ limit: 100, offset: 0 }))
    expect(all).toStrictEqual([5, 4, 3, 2, 1, 0].map((index) => rows[index]))
  })

  it("pages with offset and limit", async () => {
    expect(await list({ limit: 2 })).toEqual([5, 4])
    expect(await list({ limit: 2, offset: 2 })).toEqual([3, 2])
    expect(await list({ limit: 2, offset: 4 })).toEqual([1, 0])
    expect(await list({ limit: 2, offset: 6 })).toEqual([])
    expect(await list({ limit: 3, offset: 1 })).toEqual([4, 3, 2])
  })

  it("filters by function, variant and episode", async () => {
    expect(await list({ functionName: "extract" })).toEqual([4, 1])
    expect(await list({ functionName: "write_haiku", variantName: "b" })).toEqual([3, 2])
    expect(await list({ variantName: "a" })).toEqual([5, 1, 0])
    expect(await list({ episodeId: episode })).toEqual([2, 1])
    expect(await list({ functionName: "nope" })).toEqual([])
    expect(await list({ episodeId: uuidv7() })).toEqual([])
  })

  it("filters by tag: = and != need the tag; not() of them includes rows without it", async () => {
    expect(await list({ filter: { type: "tag", key: "team", value: "red", comparison_operator: "=" } })).toEqual([5, 2, 0])
    expect(await list({ filter: { type: "tag", key: "team", value: "red", comparison_operator: "!=" } })).toEqual([4, 1])
    expect(await list({ filter: { type: "not", child: { type: "tag", key: "team", value: "red", comparison_operator: "=" } } })).toEqual([4, 3, 1])
    expect(await list({ filter: { type: "tag", key: "user", value: "u2", comparison_operator: "=" } })).toEqual([5, 4])
    expect(await list({ filter: { type: "tag", key: "missing", value: "", comparison_operator: "=" } })).toEqual([])
  })

  it("filters by time, exact to the millisecond", async () => {
    const at = (comparison_operator: "<" | "<=" | ">" | ">=", time: number) => list({ filter: { type: "time", time, comparison_operator } })
    expect(await at("<", base + 3)).toEqual([2, 1, 0])
    expect(await at("<=", base + 3)).toEqual([4, 3, 2, 1, 0])
    expect(await at(">", base + 3)).toEqual([5])
    expect(await at(">=", base + 3)).toEqual([5, 4, 3])
    expect(await at(">=", base + 2.5)).toEqual([5, 4, 3])
    expect(await at("<=", base + 2.5)).toEqual([2, 1, 0])
    expect(await at("<", 0)).toEqual([])
    expect(await at(">", -1)).toEqual([5, 4, 3, 2, 1, 0])
  })

  it("combines filters with and, or and not", async () => {
    const red = { type: "tag", key: "team", value: "red", comparison_operator: "=" } as const
    const u2 = { type: "tag", key: "user", value: "u2", comparison_operator: "=" } as const
    const early = { type: "time", time: base + 2, comparison_operator: "<=" } as const
    expect(await list({ filter: { type: "and", children: [red, u2] } })).toEqual([5])
    expect(await list({ filter: { type: "or", children: [u2, early] } })).toEqual([5, 4, 2, 1, 0])
    expect(await list({ filter: { type: "and", children: [red, { type: "not", child: early }] } })).toEqual([5])
    expect(await list({ filter: { type: "and", children: [] } })).toEqual([5, 4, 3, 2, 1, 0])
    expect(await list({ filter: { type: "or", children: [] } })).toEqual([])
    expect(await list({ functionName: "write_haiku", filter: { type: "or", children: [red, early] }, limit: 2, offset: 1 })).toEqual([2, 0])
  })
})

describe("ClickHouse store: cache", () => {
  let database: TestDatabase
  let opened: OpenStore
  beforeAll(async () => {
    database = await freshDatabase("clickhouse")
    opened = await openStore(database.url)
    await run(opened.store.migrate)
  })
  afterAll(async () => {
    await opened?.close()
    await database?.drop()
  })

  it("returns the newest entry of a key younger than max_age_s, any age without one", async () => {
    const { store } = opened
    const now = Date.now()
    const key = "a".repeat(64)
    const old = cacheEntry(key, now - 600_000)
    const recent = cacheEntry(key, now - 20_000)
    delete (recent as { finishReason?: unknown }).finishReason
    const stale = cacheEntry("b".repeat(64), now - 3_600_000)
    await run(store.write(batch({ cache: [old, stale] })))
    await run(store.write(batch({ cache: [recent] })))

    expect(await run(store.cacheLookup(key, undefined))).toStrictEqual(recent)
    expect(await run(store.cacheLookup(key, 60))).toStrictEqual(recent)
    expect(await run(store.cacheLookup(key, 10))).toBeUndefined()
    expect(await run(store.cacheLookup("b".repeat(64), undefined))).toStrictEqual(stale)
    expect(await run(store.cacheLookup("b".repeat(64), 3000))).toBeUndefined()
    expect(await run(store.cacheLookup("b".repeat(64), 4000))).toStrictEqual(stale)
    expect(await run(store.cacheLookup("c".repeat(64), undefined))).toBeUndefined()
  })
})

describe("ClickHouse store: refused values and unreachable servers", () => {
  let database: TestDatabase
  let proxy: TcpProxy
  let opened: OpenStore
  beforeAll(async () => {
    database = await freshDatabase("clickhouse")
    const server = clickHouseServer()
    proxy = await startTcpProxy({ host: server.hostname, port: Number(server.port) })
    opened = await openStore(proxy.urlFor(database.url))
    await run(opened.store.migrate)
  })
  afterAll(async () => {
    await opened?.close()
    await proxy?.close()
    await database?.drop()
  })

  it("answers reads with malformed ids without asking the server (it works with the server cut off)", async () => {
    const { store } = opened
    const injection = "00000000-0000-0000-0000-000000000000') OR 1=1 --"
    proxy.cut()
    try {
      expect(await run(store.findInference(injection))).toBeUndefined()
      expect(await run(store.episodeExists("not-a-uuid"))).toBe(false)
      expect(await run(store.getInferences([injection, "x"]))).toEqual([])
      expect(await run(store.getModelInferences(["x"]))).toEqual([])
      expect(await run(store.getFeedback(["x"]))).toEqual([])
      expect(await run(store.listInferences({ episodeId: injection, limit: 10, offset: 0 }))).toEqual([])
      // a valid id does reach the server, which is cut off
      expect(await failure(store.findInference(uuidv7()))).toBeInstanceOf(StoreError)
    } finally {
      proxy.restore()
    }
  })

  it("refuses a batch holding a malformed id before sending any of it", async () => {
    const { store } = opened
    const good = chatInference()
    const error = await failure(store.write(batch({ inferences: [good, chatInference({ episodeId: "nope' --" })] })))
    expect(error.message).toBe("clickhouse refused a value: not a UUID: \"nope' --\"")
    expect(await run(store.getInferences([good.id]))).toEqual([])
    const badFeedback = await failure(store.write(batch({ feedback: [feedback("comment", "1; DROP TABLE x", "hi")] })))
    expect(badFeedback.message).toMatch(/not a UUID/)
  })

  it("refuses a filter it does not know instead of pasting it into SQL", async () => {
    const { store } = opened
    const operator = await failure(store.listInferences({
      filter: { type: "time", time: 1, comparison_operator: "> 0 OR 1 =" as never },
      limit: 1,
      offset: 0
    }))
    expect(operator.message).toMatch(/^clickhouse refused a value: not a time filter/)
    const unknown = await failure(store.listInferences({ filter: { type: "sql" } as never, limit: 1, offset: 0 }))
    expect(unknown.message).toMatch(/^clickhouse refused a value: not a filter/)
  })

  it("fails with a StoreError, not a crash, while the server is cut off, and recovers after", async () => {
    const { store } = opened
    const row = chatInference()
    proxy.cut()
    try {
      for (const effect of [store.ping, store.write(batch({ inferences: [row] })), store.listInferences({ limit: 1, offset: 0 }), store.cacheLookup("k", 1), store.migrate]) {
        const error = await failure(effect)
        expect(error).toBeInstanceOf(StoreError)
        expect(error.message).toMatch(/^clickhouse \w+ failed: \S/)
        expect(error.message).not.toMatch(/\n|    at /)
      }
    } finally {
      proxy.restore()
    }
    await run(store.ping)
    await run(store.write(batch({ inferences: [row] })))
    expect(await run(store.getInferences([row.id]))).toStrictEqual([row])
  })

  it("fails with a StoreError when nothing listens at the address", async () => {
    const closed = await startTcpProxy({ host: "127.0.0.1", port: 1 })
    const url = closed.urlFor(database.url)
    await closed.close()
    const other = await openStore(url)
    try {
      const error = await failure(other.store.ping)
      expect(error.message).toMatch(/^clickhouse ping failed: .*ECONNREFUSED/)
    } finally {
      await other.close()
    }
  })

  it("reports a server error in one line, without the stack trace ClickHouse 18.16 appends", async () => {
    const other = await openStore(`http://default:@${clickHouseServer().host}/gw_test_never_created`)
    try {
      const error = await failure(other.store.listInferences({ limit: 1, offset: 0 }))
      expect(error.message).toMatch(/^clickhouse listInferences failed: .*gw_test_never_created/)
      expect(error.message).not.toMatch(/Stack trace|\n|e\.what/)
    } finally {
      await other.close()
    }
  })

  it("refuses URLs it cannot use", async () => {
    const scope = Effect.runSync(Scope.make())
    try {
      const notUrl = await Effect.runPromise(Effect.flip(Scope.provide(scope)(makeClickHouseStore("http://"))))
      expect(notUrl.message).toMatch(/not a valid URL/)
      const badName = await Effect.runPromise(Effect.flip(Scope.provide(scope)(makeClickHouseStore("http://127.0.0.1:8123/a;b"))))
      expect(badName.message).toMatch(/database name/)
    } finally {
      await Effect.runPromise(Scope.close(scope, Exit.void))
    }
  })
})
