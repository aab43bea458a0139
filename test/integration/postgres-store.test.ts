/**
 * The Postgres store against a real server (127.0.0.1:5432, trust auth), in a database of its
 * own created for the run and dropped afterwards: migrations, round trips of every record
 * kind, idempotent writes, filters, ordering, pagination, the cache, odd strings, and errors.
 */
import * as PgClient from "@effect/sql-pg/PgClient"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Reactivity from "effect/reactivity/Reactivity"
import * as Redacted from "effect/Redacted"
import * as Scope from "effect/Scope"
import { randomBytes, randomUUID } from "node:crypto"
import { createServer } from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makePostgresStore } from "../../layers/observability/postgres.ts"
import { uuidv7 } from "../../src/ids.ts"
import type { CacheEntry, StoredFeedback, StoredInference, StoredModelInference, WriteBatch } from "../../src/observability/records.ts"
import type { Store, StoreError } from "../../src/observability/store.ts"

const server = "postgres://postgres@127.0.0.1:5432"

/** runs statements on a database of the server, each outside any transaction */
const runSql = (database: string, statements: ReadonlyArray<string>) =>
  Effect.runPromise(Effect.scoped(Effect.gen(function*() {
    const sql = yield* PgClient.make({ url: Redacted.make(`${server}/${database}`) }).pipe(
      Effect.provideServiceEffect(Reactivity.Reactivity, Reactivity.make)
    )
    const results: Array<ReadonlyArray<any>> = []
    for (const statement of statements) results.push(yield* sql.unsafe(statement).unprepared)
    return results
  })))

const createdDatabases: Array<string> = []
const freshDatabase = async () => {
  const name = `gw_test_${randomBytes(6).toString("hex")}`
  await runSql("postgres", [`CREATE DATABASE ${name}`])
  createdDatabases.push(name)
  return name
}

/** a store on its own scope, closed by `close` */
const openStore = async (url: string) => {
  const scope = Effect.runSync(Scope.make())
  const store = await Effect.runPromise(Scope.provide(scope)(makePostgresStore(url)))
  return { store, close: () => Effect.runPromise(Scope.close(scope, Exit.void)) }
}

const run = <A>(effect: Effect.Effect<A, StoreError>) => Effect.runPromise(effect)
const failure = <A>(effect: Effect.Effect<A, StoreError>) => Effect.runPromise(Effect.flip(effect))

/** a UUIDv7 carrying the time `ms` */
const idAt = (ms: number) => {
  const hex = ms.toString(16).padStart(12, "0")
  const random = randomUUID()
  return `${hex.slice(0, 8)}-${hex.slice(8)}-7${random.slice(15, 18)}-${random.slice(19, 23)}-${random.slice(24)}`
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
    input: { system: { topic: "autumn" }, messages: [{ role: "user", content: [{ type: "text", text: "Write a haiku" }] }] },
    output: [{ type: "text", text: "Leaves fall\nquietly" }],
    toolParams: { tools_available: [], tool_choice: "auto", parallel_tool_calls: null, allowed_tools: null },
    inferenceParams: { chat_completion: { temperature: 0.7, max_tokens: 100, json_mode: "off" } },
    processingTimeMs: 123,
    ttftMs: 45,
    tags: { user: "alice" },
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
    input: { messages: [{ role: "user", content: "Alice is 30" }] },
    output: { raw: "{\"name\":\"Alice\",\"age\":30}", parsed: { name: "Alice", age: 30 } },
    outputSchema: { type: "object", properties: { name: { type: "string" }, age: { type: "integer" } }, required: ["name"] },
    inferenceParams: { chat_completion: { json_mode: "strict" } },
    processingTimeMs: 12.5,
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
    output: [{ type: "text", text: "hello" }],
    inputTokens: 10,
    outputTokens: 2,
    responseTimeMs: 80,
    ttftMs: 30,
    finishReason: "stop",
    cached: false,
    timestamp: timeOf(id),
    ...fields
  }
}

const feedback = (fields: Partial<StoredFeedback> & Pick<StoredFeedback, "kind" | "value">): StoredFeedback => {
  const id = fields.id ?? uuidv7()
  return {
    id,
    metricName: fields.kind,
    targetType: "inference",
    targetId: uuidv7(),
    tags: {},
    timestamp: timeOf(id),
    ...fields
  }
}

const cacheEntry = (fields: Partial<CacheEntry> = {}): CacheEntry => ({
  key: randomBytes(32).toString("hex"),
  output: [{ type: "text", text: "cached answer" }],
  rawRequest: "{\"request\":1}",
  rawResponse: "{\"response\":1}",
  finishReason: "stop",
  timestamp: Date.now(),
  ...fields
})

const freePort = () =>
  new Promise<number>((resolve) => {
    const probe = createServer().listen(0, "127.0.0.1", () => {
      const port = (probe.address() as { port: number }).port
      probe.close(() => resolve(port))
    })
  })

const tables = [
  "boolean_metric_feedback",
  "chat_inference",
  "comment_feedback",
  "demonstration_feedback",
  "float_metric_feedback",
  "gateway_migrations",
  "json_inference",
  "model_inference",
  "model_inference_cache"
]

afterAll(async () => {
  for (const name of createdDatabases) await runSql("postgres", [`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`])
})

describe("postgres store: migrations", () => {
  it("creates the tables, records the migration, and applies nothing the second time", async () => {
    const database = await freshDatabase()
    const { store, close } = await openStore(`${server}/${database}`)
    try {
      expect(store.backend).toBe("postgres")
      expect(await run(store.migrate)).toEqual(["0001_observability_tables"])
      const [found] = await runSql(database, [
        "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY table_name"
      ])
      expect(found.map((row) => row.table_name)).toEqual(tables)
      expect(await run(store.migrate)).toEqual([])
      const [recorded] = await runSql(database, ["SELECT version, name FROM gateway_migrations"])
      expect(recorded).toEqual([{ version: 1, name: "0001_observability_tables" }])
    } finally {
      await close()
    }
  })

  it("applies each migration once when several migrate at the same time", async () => {
    const database = await freshDatabase()
    const url = `${server}/${database}`
    const first = await openStore(url)
    const second = await openStore(url)
    try {
      // two pools (as two gateway processes would have) and two calls on the same pool
      const results = await Promise.all([
        run(first.store.migrate),
        run(second.store.migrate),
        run(first.store.migrate),
        run(second.store.migrate)
      ])
      expect(results.flat()).toEqual(["0001_observability_tables"])
      const [recorded] = await runSql(database, ["SELECT count(*)::int AS count FROM gateway_migrations"])
      expect(recorded[0].count).toBe(1)
    } finally {
      await first.close()
      await second.close()
    }
  })
})

describe("postgres store: reads and writes", () => {
  let database: string
  let store: Store
  let close: () => Promise<void>
  beforeAll(async () => {
    database = await freshDatabase()
    ;({ store, close } = await openStore(`${server}/${database}`))
    await run(store.migrate)
  })
  afterAll(async () => {
    await close?.()
  })

  const count = async (table: string) => (await runSql(database, [`SELECT count(*)::int AS count FROM ${table}`]))[0][0].count

  it("answers ping", async () => {
    await run(store.ping)
  })

  it("round-trips chat and json inferences, with and without optional fields", async () => {
    const chat = chatInference()
    const bare = chatInference({ toolParams: undefined, ttftMs: undefined, tags: {}, output: [] })
    const { toolParams: _, ttftMs: __, ...bareWithoutOptionals } = bare
    const json = jsonInference({ ttftMs: 7, tags: { a: "1", b: "2" } })
    const schemaless = jsonInference({ outputSchema: undefined, output: { raw: "nope", parsed: null } })
    await run(store.write(batch({ inferences: [chat, bare, json, schemaless] })))

    const read = await run(store.getInferences([chat.id, bare.id, json.id, schemaless.id]))
    const byId = new Map(read.map((row) => [row.id, row]))
    expect(byId.get(chat.id)).toStrictEqual(chat)
    expect(byId.get(bare.id)).toStrictEqual(bareWithoutOptionals)
    expect(byId.get(json.id)).toStrictEqual(json)
    const { outputSchema: ___, ...schemalessWithout } = schemaless
    expect(byId.get(schemaless.id)).toStrictEqual(schemalessWithout)
    expect(read.map((row) => row.id)).toEqual([chat.id, bare.id, json.id, schemaless.id].sort().reverse())

    expect(await run(store.findInference(chat.id))).toStrictEqual({
      functionName: chat.functionName,
      functionType: "chat",
      episodeId: chat.episodeId
    })
    expect(await run(store.findInference(json.id))).toStrictEqual({
      functionName: json.functionName,
      functionType: "json",
      episodeId: json.episodeId,
      outputSchema: json.outputSchema
    })
    expect(await run(store.findInference(uuidv7()))).toBeUndefined()
    expect(await run(store.episodeExists(chat.episodeId))).toBe(true)
    expect(await run(store.episodeExists(json.episodeId))).toBe(true)
    expect(await run(store.episodeExists(uuidv7()))).toBe(false)
  })

  it("round-trips model inferences", async () => {
    const inferenceId = uuidv7()
    const full = modelInference(inferenceId)
    const cached = modelInference(inferenceId, {
      system: undefined,
      ttftMs: undefined,
      finishReason: undefined,
      cached: true,
      inputTokens: 0,
      outputTokens: 0,
      output: [{ type: "tool_call", id: "call_1", name: "get_weather", arguments: "{\"city\":\"Paris\"}" } as any]
    })
    const { system: _, ttftMs: __, finishReason: ___, ...cachedWithout } = cached
    const other = modelInference(uuidv7())
    await run(store.write(batch({ modelInferences: [full, cached, other] })))
    expect(await run(store.getModelInferences([inferenceId]))).toStrictEqual([full, cachedWithout])
    expect(await run(store.getModelInferences([inferenceId, other.inferenceId]))).toHaveLength(3)
    expect(await run(store.getModelInferences([uuidv7()]))).toEqual([])
  })

  it("round-trips feedback of every kind, on inferences and on episodes", async () => {
    const inference = uuidv7()
    const episode = uuidv7()
    const rows = [
      feedback({ kind: "boolean", metricName: "solved", value: true, targetId: inference, tags: { by: "human" } }),
      feedback({ kind: "boolean", metricName: "solved", value: false, targetId: episode, targetType: "episode" }),
      feedback({ kind: "float", metricName: "score", value: 0.1 + 0.2, targetId: inference }),
      feedback({ kind: "float", metricName: "score", value: -3, targetId: episode, targetType: "episode" }),
      feedback({ kind: "comment", value: "Good, but \"too\" long.\nSecond line", targetId: inference }),
      feedback({ kind: "comment", value: "episode note", targetId: episode, targetType: "episode" }),
      feedback({ kind: "demonstration", value: [{ type: "text", text: "Better answer" }], targetId: inference }),
      feedback({ kind: "demonstration", value: { name: "Alice", age: 30 }, targetId: inference })
    ]
    const unrelated = feedback({ kind: "comment", value: "elsewhere" })
    await run(store.write(batch({ feedback: [...rows, unrelated] })))
    expect(await run(store.getFeedback([inference, episode]))).toStrictEqual(rows)
    expect(await run(store.getFeedback([episode]))).toStrictEqual(rows.filter((row) => row.targetId === episode))
    expect(await run(store.getFeedback([]))).toEqual([])
  })

  it("round-trips cache entries, and finds only fresh ones", async () => {
    const now = Date.now()
    const fresh = cacheEntry({ timestamp: now - 1_000 })
    const stale = cacheEntry({ timestamp: now - 60_000, finishReason: undefined })
    await run(store.write(batch({ cache: [fresh, stale] })))
    expect(await run(store.cacheLookup(fresh.key, undefined))).toStrictEqual(fresh)
    expect(await run(store.cacheLookup(fresh.key, 30))).toStrictEqual(fresh)
    const { finishReason: _, ...staleWithout } = stale
    expect(await run(store.cacheLookup(stale.key, undefined))).toStrictEqual(staleWithout)
    expect(await run(store.cacheLookup(stale.key, 30))).toBeUndefined()
    expect(await run(store.cacheLookup(stale.key, 120))).toStrictEqual(staleWithout)
    expect(await run(store.cacheLookup("0".repeat(64), undefined))).toBeUndefined()
  })

  it("keeps the newest cache entry of a key, whatever order the writes arrive in", async () => {
    const key = randomBytes(32).toString("hex")
    const now = Date.now()
    const older = cacheEntry({ key, timestamp: now - 5_000, output: [{ type: "text", text: "older" }] })
    const newer = cacheEntry({ key, timestamp: now - 1_000, output: [{ type: "text", text: "newer" }] })
    const newest = cacheEntry({ key, timestamp: now, output: [{ type: "text", text: "newest" }] })
    await run(store.write(batch({ cache: [newer] })))
    await run(store.write(batch({ cache: [older] })))
    expect(await run(store.cacheLookup(key, undefined))).toStrictEqual(newer)
    // two entries of one key in the same batch
    await run(store.write(batch({ cache: [newest, older] })))
    expect(await run(store.cacheLookup(key, undefined))).toStrictEqual(newest)
  })

  it("stores a retried batch once", async () => {
    const inference = chatInference({ functionName: "retried" })
    const json = jsonInference({ functionName: "retried" })
    const rows = batch({
      inferences: [inference, json],
      modelInferences: [modelInference(inference.id), modelInference(json.id)],
      feedback: [
        feedback({ kind: "boolean", value: true, targetId: inference.id }),
        feedback({ kind: "float", value: 1, targetId: inference.id }),
        feedback({ kind: "comment", value: "x", targetId: inference.id }),
        feedback({ kind: "demonstration", value: [], targetId: inference.id })
      ],
      cache: [cacheEntry()]
    })
    const before = await Promise.all(tables.map(count))
    await run(store.write(rows))
    await run(store.write(rows))
    // the same rows again, within one batch
    await run(store.write(batch({ inferences: [inference, inference], feedback: [rows.feedback[0], rows.feedback[0]] })))
    const after = await Promise.all(tables.map(count))
    expect(Object.fromEntries(tables.map((table, i) => [table, after[i] - before[i]]))).toEqual({
      boolean_metric_feedback: 1,
      chat_inference: 1,
      comment_feedback: 1,
      demonstration_feedback: 1,
      float_metric_feedback: 1,
      gateway_migrations: 0,
      json_inference: 1,
      model_inference: 2,
      model_inference_cache: 1
    })
    expect(await run(store.listInferences({ functionName: "retried", limit: 10, offset: 0 }))).toStrictEqual([json, inference])
  })

  it("writes batches larger than one statement's parameter limit", async () => {
    const inferenceId = uuidv7()
    const many = Array.from({ length: 5_000 }, () => modelInference(inferenceId))
    const inferences = Array.from({ length: 1_000 }, () => chatInference({ functionName: "bulk" }))
    await run(store.write(batch({ modelInferences: many, inferences })))
    expect(await run(store.getModelInferences([inferenceId]))).toHaveLength(5_000)
    expect(await run(store.listInferences({ functionName: "bulk", limit: 2_000, offset: 0 }))).toHaveLength(1_000)
  })

  it("round-trips strings with quotes, backslashes, newlines, unicode and SQL-looking text", async () => {
    const odd = [
      "it's \"quoted\" `ticked`",
      "back\\slash \\n not a newline",
      "line\nbreak\r\ntab\there",
      "unicode: é ß 日本語 עברית 🎉👩‍👩‍👧 \u200b \u2028 \uFEFF",
      "'); DROP TABLE chat_inference; --",
      "$1 $$ ? :name %s {0}",
      "\u0001\u001f\u007f control characters",
      ""
    ]
    const text = odd.join(" | ")
    const inference = chatInference({
      functionName: `fn ${odd[0]}`,
      variantName: odd[4],
      input: { messages: [{ role: "user", content: odd }], [odd[0]]: odd[3], "": null, nested: { deep: [1.5, -0, 1e300, true, null] } },
      output: odd.map((value) => ({ type: "text", text: value })),
      tags: Object.fromEntries(odd.map((value, i) => [`${value}#${i}`, value]))
    })
    const model = modelInference(inference.id, { rawRequest: text, rawResponse: odd[5], system: odd[2] })
    const comment = feedback({ kind: "comment", value: text, metricName: odd[0], targetId: inference.id })
    const entry = cacheEntry({ rawRequest: text, rawResponse: odd[3] })
    await run(store.write(batch({ inferences: [inference], modelInferences: [model], feedback: [comment], cache: [entry] })))

    const [read] = await run(store.getInferences([inference.id]))
    // JSON -0 is written as 0
    expect(read).toStrictEqual({ ...inference, input: { ...(inference.input as object), nested: { deep: [1.5, 0, 1e300, true, null] } } })
    expect(await run(store.getModelInferences([inference.id]))).toStrictEqual([model])
    expect(await run(store.getFeedback([inference.id]))).toStrictEqual([comment])
    expect(await run(store.cacheLookup(entry.key, undefined))).toStrictEqual(entry)
    expect(await run(store.listInferences({ functionName: inference.functionName, limit: 10, offset: 0 }))).toStrictEqual([read])
    expect(await run(store.listInferences({ variantName: odd[4], limit: 10, offset: 0 }))).toStrictEqual([read])
    for (const [i, value] of odd.entries()) {
      const filter = { type: "tag", key: `${value}#${i}`, value, comparison_operator: "=" } as const
      expect(await run(store.listInferences({ filter, limit: 10, offset: 0 }))).toStrictEqual([read])
    }
    expect(await count("chat_inference")).toBeGreaterThan(0)
  })

  it("stores text Postgres cannot hold (NUL, lone surrogates) with U+FFFD instead of failing forever", async () => {
    const inference = chatInference({ input: { messages: [{ role: "user", content: "nul:\u0000 lone:\ud800" }] }, tags: { "k\u0000": "v" } })
    const model = modelInference(inference.id, { rawResponse: "a\u0000b" })
    await run(store.write(batch({ inferences: [inference], modelInferences: [model] })))
    const [read] = await run(store.getInferences([inference.id]))
    expect(read.input).toEqual({ messages: [{ role: "user", content: "nul:\uFFFD lone:\uFFFD" }] })
    expect(read.tags).toEqual({ "k\uFFFD": "v" })
    expect((await run(store.getModelInferences([inference.id])))[0].rawResponse).toBe("a\uFFFDb")
  })

  it("answers empty results for ids that are not UUIDs", async () => {
    const bad = ["nope", "'; SELECT 1; --", "0190a1b2-0000-7000-8000-00000000000g", ""]
    expect(await run(store.getInferences(bad))).toEqual([])
    expect(await run(store.getModelInferences(bad))).toEqual([])
    expect(await run(store.getFeedback(bad))).toEqual([])
    for (const id of bad) {
      expect(await run(store.findInference(id))).toBeUndefined()
      expect(await run(store.episodeExists(id))).toBe(false)
      expect(await run(store.listInferences({ episodeId: id, limit: 10, offset: 0 }))).toEqual([])
    }
    // valid ids among invalid ones still count
    const inference = chatInference()
    await run(store.write(batch({ inferences: [inference] })))
    expect(await run(store.getInferences([...bad, inference.id]))).toStrictEqual([inference])
  })
})

describe("postgres store: listing", () => {
  let store: Store
  let close: () => Promise<void>
  // twelve inferences one second apart, alternating chat and json, in two functions and episodes
  const base = Date.UTC(2025, 0, 1, 12, 0, 0, 0)
  const episodes = [uuidv7(), uuidv7()]
  const all = Array.from({ length: 12 }, (_, i) => {
    const fields = {
      id: idAt(base + i * 1_000),
      functionName: i % 3 === 0 ? "beta" : "alpha",
      variantName: i % 4 === 0 ? "v1" : "v2",
      episodeId: episodes[i % 2],
      tags: { index: String(i), parity: i % 2 === 0 ? "even" : "odd", ...(i < 4 && { early: "yes" }) }
    }
    return i % 2 === 0 ? chatInference(fields) : jsonInference(fields)
  })
  const newestFirst = [...all].reverse()
  const ids = (rows: ReadonlyArray<StoredInference>) => rows.map((row) => row.id)
  const list = async (query: Partial<Parameters<Store["listInferences"]>[0]>) =>
    ids(await run(store.listInferences({ limit: 100, offset: 0, ...query })))
  const expected = (keep: (row: StoredInference, index: number) => boolean) =>
    ids(newestFirst.filter((row) => keep(row, all.indexOf(row))))

  beforeAll(async () => {
    const database = await freshDatabase()
    ;({ store, close } = await openStore(`${server}/${database}`))
    await run(store.migrate)
    // written out of order, in two batches
    await run(store.write(batch({ inferences: all.filter((_, i) => i % 3 === 1) })))
    await run(store.write(batch({ inferences: all.filter((_, i) => i % 3 !== 1) })))
  })
  afterAll(async () => {
    await close?.()
  })

  it("lists chat and json inferences together, newest first, exactly as written", async () => {
    expect(await run(store.listInferences({ limit: 100, offset: 0 }))).toStrictEqual(newestFirst)
  })

  it("pages with offset and limit", async () => {
    expect(await list({ limit: 5, offset: 0 })).toEqual(ids(newestFirst.slice(0, 5)))
    expect(await list({ limit: 5, offset: 5 })).toEqual(ids(newestFirst.slice(5, 10)))
    expect(await list({ limit: 5, offset: 10 })).toEqual(ids(newestFirst.slice(10)))
    expect(await list({ limit: 5, offset: 12 })).toEqual([])
    expect(await list({ limit: 0, offset: 0 })).toEqual([])
    expect(await list({ functionName: "alpha", limit: 3, offset: 2 })).toEqual(expected((row) => row.functionName === "alpha").slice(2, 5))
  })

  it("filters by function, variant and episode", async () => {
    expect(await list({ functionName: "beta" })).toEqual(expected((row) => row.functionName === "beta"))
    expect(await list({ functionName: "alpha", variantName: "v1" })).toEqual(
      expected((row) => row.functionName === "alpha" && row.variantName === "v1")
    )
    expect(await list({ episodeId: episodes[1] })).toEqual(expected((row) => row.episodeId === episodes[1]))
    expect(await list({ episodeId: uuidv7() })).toEqual([])
    expect(await list({ functionName: "nonexistent" })).toEqual([])
  })

  it("filters by tag: = and != match only inferences that carry the tag", async () => {
    expect(await list({ filter: { type: "tag", key: "parity", value: "odd", comparison_operator: "=" } })).toEqual(
      expected((_, i) => i % 2 === 1)
    )
    expect(await list({ filter: { type: "tag", key: "parity", value: "odd", comparison_operator: "!=" } })).toEqual(
      expected((_, i) => i % 2 === 0)
    )
    expect(await list({ filter: { type: "tag", key: "early", value: "no", comparison_operator: "!=" } })).toEqual(
      expected((_, i) => i < 4)
    )
    expect(await list({ filter: { type: "tag", key: "missing", value: "x", comparison_operator: "=" } })).toEqual([])
    expect(await list({ filter: { type: "not", child: { type: "tag", key: "early", value: "yes", comparison_operator: "=" } } }))
      .toEqual(expected((_, i) => i >= 4))
  })

  it("filters by time, exact to the millisecond", async () => {
    const at = base + 5_000 // inference 5
    const time = (comparison_operator: "<" | "<=" | ">" | ">=", time: number) => ({ type: "time", time, comparison_operator }) as const
    expect(await list({ filter: time("<", at) })).toEqual(expected((_, i) => i < 5))
    expect(await list({ filter: time("<=", at) })).toEqual(expected((_, i) => i <= 5))
    expect(await list({ filter: time(">", at) })).toEqual(expected((_, i) => i > 5))
    expect(await list({ filter: time(">=", at) })).toEqual(expected((_, i) => i >= 5))
    expect(await list({ filter: time("<", at + 1) })).toEqual(expected((_, i) => i <= 5))
    expect(await list({ filter: time(">", at - 1) })).toEqual(expected((_, i) => i >= 5))
    expect(await list({ filter: time(">=", at + 1) })).toEqual(expected((_, i) => i > 5))
  })

  it("combines filters with and, or and not", async () => {
    const odd = { type: "tag", key: "parity", value: "odd", comparison_operator: "=" } as const
    const late = { type: "time", time: base + 6_000, comparison_operator: ">=" } as const
    const early = { type: "tag", key: "early", value: "yes", comparison_operator: "=" } as const
    expect(await list({ filter: { type: "and", children: [odd, late] } })).toEqual(expected((_, i) => i % 2 === 1 && i >= 6))
    expect(await list({ filter: { type: "or", children: [early, late] } })).toEqual(expected((_, i) => i < 4 || i >= 6))
    expect(await list({ filter: { type: "not", child: { type: "or", children: [early, late] } } })).toEqual(
      expected((_, i) => i >= 4 && i < 6)
    )
    expect(await list({ filter: { type: "and", children: [odd, { type: "not", child: { type: "and", children: [early, odd] } }] } }))
      .toEqual(expected((_, i) => i % 2 === 1 && i >= 4))
    expect(await list({ filter: { type: "and", children: [] } })).toEqual(ids(newestFirst))
    expect(await list({ filter: { type: "or", children: [] } })).toEqual([])
    expect(await list({ functionName: "alpha", filter: { type: "or", children: [odd, early] } })).toEqual(
      expected((row, i) => row.functionName === "alpha" && (i % 2 === 1 || i < 4))
    )
  })
})

describe("postgres store: errors", () => {
  it("fails with a StoreError, quickly, when the server is unreachable", async () => {
    const port = await freePort()
    const { store, close } = await openStore(`postgres://postgres@127.0.0.1:${port}/test`)
    try {
      const started = Date.now()
      for (const effect of [store.ping, store.migrate, store.write(batch({ inferences: [chatInference()] })), store.listInferences({ limit: 1, offset: 0 })]) {
        const error = await failure(effect as Effect.Effect<unknown, StoreError>)
        expect(error._tag).toBe("StoreError")
        expect(error.message).toMatch(/^postgres \w+.* failed: .*ECONNREFUSED/)
        expect(error.message).not.toMatch(/\n\s+at /)
      }
      expect(Date.now() - started).toBeLessThan(5_000)
      // ids that are not UUIDs are answered without a query
      expect(await run(store.getInferences(["nope"]))).toEqual([])
      expect(await run(store.findInference("nope"))).toBeUndefined()
      expect(await run(store.episodeExists("nope"))).toBe(false)
    } finally {
      await close()
    }
  })

  it("fails with a StoreError naming the problem when the database does not exist", async () => {
    const { store, close } = await openStore(`${server}/gw_test_does_not_exist`)
    try {
      const error = await failure(store.ping)
      expect(error.message).toBe("postgres ping failed: database \"gw_test_does_not_exist\" does not exist")
    } finally {
      await close()
    }
  })

  it("fails with a StoreError when the tables are missing (migrations not run)", async () => {
    const database = await freshDatabase()
    const { store, close } = await openStore(`${server}/${database}`)
    try {
      const error = await failure(store.write(batch({ inferences: [chatInference()] })))
      expect(error.message).toMatch(/^postgres write failed: relation "chat_inference" does not exist$/)
      expect((await failure(store.getInferences([uuidv7()]))).message).toMatch(/does not exist/)
    } finally {
      await close()
    }
  })
})
