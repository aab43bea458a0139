/**
 * Fixtures of the store suites (test/integration/store-*.test.ts): the stores of each backend
 * (ClickHouse, Postgres, the embedded PGlite; `AnalyticsStores`: one port per capability)
 * on a database of their own, runners for its effects, and builders of every kind of record,
 * complete by default (a field given as `undefined` is left out, as a store reads it back).
 */
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Scope from "effect/Scope"
import { afterAll, beforeAll } from "vitest"
import { makeClickHouseStores } from "../../layers/clickhouse/stores.ts"
import { makePostgresStores } from "../../layers/postgres/stores.ts"
import { uuidv7, uuidv7Timestamp } from "../../src/ids.ts"
import type { CacheEntry, StoredFeedback, StoredInference, StoredModelInference, WriteBatch } from "../../src/analytics/records.ts"
import type { AnalyticsStores } from "../../layers/observability/stores.ts"
import type { StoreError } from "../../src/storeError.ts"
import { freshDatabase, type TestBackend, type TestDatabase } from "./databases.ts"
import { startTcpProxy, type TcpProxy } from "./tcpProxy.ts"

// ---- stores

// an embedded database is reached with the Postgres adapters, at its Postgres URL
const constructors = { clickhouse: makeClickHouseStores, postgres: makePostgresStores, pglite: makePostgresStores }

export interface OpenStore {
  readonly store: AnalyticsStores
  readonly close: () => Promise<void>
}

/** the stores of `backend` on `url`, in a scope of their own that `close` closes */
export const openStore = async (backend: TestBackend, url: string): Promise<OpenStore> => {
  const scope = Effect.runSync(Scope.make())
  const store = await Effect.runPromise(Scope.provide(scope)(constructors[backend](url)))
  return { store, close: () => Effect.runPromise(Scope.close(scope, Exit.void)) }
}

export const run = <A>(effect: Effect.Effect<A, StoreError>): Promise<A> => Effect.runPromise(effect)

/** `batch` encoded and written, as the write queue does it */
export const write = (store: AnalyticsStores, rows: WriteBatch): Effect.Effect<void, StoreError> =>
  Effect.flatMap(Effect.fromResult(store.database.encode(rows)), store.database.write)

/** the StoreError `effect` fails with (the test fails if it succeeds or dies) */
export const failure = (effect: Effect.Effect<unknown, StoreError>): Promise<StoreError> => Effect.runPromise(Effect.flip(effect))

/** host and port of the server holding `database`, for a proxy in front of it */
export const serverOf = (database: TestDatabase) => {
  const url = new URL(database.url)
  return { host: url.hostname, port: Number(url.port || 5432) }
}

/**
 * Runs `use` with a store of `backend` whose server is cut off (a proxy in front of it accepts
 * and closes every connection): whatever it answers, it answered without asking the server.
 */
export const withCutOffStore = async <A>(backend: TestBackend, database: TestDatabase, use: (store: AnalyticsStores) => Promise<A>): Promise<A> => {
  const proxy = await startTcpProxy(serverOf(database))
  proxy.cut()
  const { store, close } = await openStore(backend, proxy.urlFor(database.url))
  try {
    return await use(store)
  } finally {
    await close()
    await proxy.close()
  }
}

export interface StoreUnderTest {
  readonly database: TestDatabase
  readonly store: AnalyticsStores
  /** present when asked for with `proxied`: the store talks to its server through it */
  readonly proxy: TcpProxy
}

/**
 * For the tests of the enclosing describe block: a fresh database of `backend` and a store on
 * it, migrated unless `migrate` is false, reached through a TCP proxy with `proxied`; all gone
 * after the block. Read the fields inside tests and hooks, once `beforeAll` has run.
 */
export const storeForSuite = (
  backend: TestBackend,
  options: { readonly migrate?: boolean; readonly proxied?: boolean } = {}
): StoreUnderTest => {
  const current: { database?: TestDatabase; opened?: OpenStore; proxy?: TcpProxy } = {}
  beforeAll(async () => {
    current.database = await freshDatabase(backend)
    if (options.proxied) current.proxy = await startTcpProxy(serverOf(current.database))
    current.opened = await openStore(backend, current.proxy?.urlFor(current.database.url) ?? current.database.url)
    if (options.migrate ?? true) await run(current.opened.store.database.migrate)
  })
  afterAll(async () => {
    await current.opened?.close()
    await current.proxy?.close()
    await current.database?.drop()
  })
  return {
    get database() {
      return current.database!
    },
    get store() {
      return current.opened!.store
    },
    get proxy() {
      if (current.proxy === undefined) throw new Error("storeForSuite: ask for `proxied` to get a proxy")
      return current.proxy
    }
  }
}

// ---- values

/** strings that break naive quoting, escaping or placeholders (NUL and lone surrogates: see the backend files) */
export const oddStrings = [
  "it's \"quoted\" `ticked`",
  "back\\slash \\' \\\\ \\n not a newline",
  "line\nbreak\r\ntab\there",
  "\u0001\u001f\u007f control characters",
  "'); DROP TABLE ChatInference; DROP TABLE chat_inference; --",
  "$1 $$ ? :name %s {0} ${x}",
  "unicode: é ß 日本語 עברית 🎉👩‍👩‍👧 \u200b \u2028\u2029 \uFEFF",
  ""
]

// ---- ids and batches

/** A UUIDv7 carrying the time `ms`; `sequence` orders ids of the same millisecond. */
export const idAt = (ms: number, sequence = 0): string => {
  const time = ms.toString(16).padStart(12, "0")
  const random = uuidv7(Date.now()).slice(19)
  return `${time.slice(0, 8)}-${time.slice(8)}-7${sequence.toString(16).padStart(3, "0")}-${random}`
}

export const batch = (rows: Partial<WriteBatch>): WriteBatch => ({ inferences: [], modelInferences: [], feedback: [], ...rows })

/** `record` without the fields whose value is undefined: optional fields are absent when read back */
const withoutUndefined = <A extends object>(record: A): A =>
  Object.fromEntries(Object.entries(record).filter(([, value]) => value !== undefined)) as A

// ---- records

export const chatInference = (fields: Partial<StoredInference> = {}): StoredInference => {
  const id = fields.id ?? uuidv7(Date.now())
  return withoutUndefined({
    id,
    workspace: "default",
    functionName: "write_haiku",
    functionType: "chat",
    variantName: "gpt",
    episodeId: uuidv7(Date.now()),
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
    tags: { user: "u1", env: "prod" },
    timestamp: uuidv7Timestamp(id),
    ...fields
  })
}

export const jsonInference = (fields: Partial<StoredInference> = {}): StoredInference => {
  const id = fields.id ?? uuidv7(Date.now())
  return withoutUndefined({
    id,
    workspace: "default",
    functionName: "extract",
    functionType: "json",
    variantName: "strict",
    episodeId: uuidv7(Date.now()),
    input: { messages: [{ role: "user", content: "Ann is 30" }] },
    output: { raw: "{\"name\":\"Ann\",\"age\":30}", parsed: { name: "Ann", age: 30 } },
    outputSchema: { type: "object", properties: { name: { type: "string" }, age: { type: "integer" } }, required: ["name"] },
    inferenceParams: { chat_completion: { json_mode: "strict" } },
    processingTimeMs: 7,
    tags: {},
    timestamp: uuidv7Timestamp(id),
    ...fields
  })
}

export const modelInference = (inferenceId: string, fields: Partial<StoredModelInference> = {}): StoredModelInference => {
  const id = fields.id ?? uuidv7(Date.now())
  return withoutUndefined({
    id,
    workspace: "default",
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
    timestamp: uuidv7Timestamp(id),
    ...fields
  })
}

/** feedback on an inference, its metric named after its kind unless `fields` says otherwise */
export const feedback = (kind: StoredFeedback["kind"], targetId: string, value: unknown, fields: Partial<StoredFeedback> = {}): StoredFeedback => {
  const id = fields.id ?? uuidv7(Date.now())
  return {
    id,
    workspace: "default",
    kind,
    metricName: kind === "comment" || kind === "demonstration" ? kind : `${kind}_metric`,
    targetType: "inference",
    targetId,
    value,
    tags: { reviewer: "bob" },
    timestamp: uuidv7Timestamp(id),
    ...fields
  }
}

/** what a cache lookup of `key` finds once `cachedCall` of it is written */
export const cacheEntry = (key: string, timestamp: number, fields: Partial<CacheEntry> = {}): CacheEntry =>
  withoutUndefined({
    key,
    output: [{ type: "text", text: `answer at ${timestamp}` }],
    rawRequest: "{\"q\":1}",
    rawResponse: "{\"a\":1}",
    finishReason: "length",
    timestamp,
    ...fields
  })

/** the model inference that puts `entry` in the cache: its answer, written with the key, at its time */
export const cachedCall = (entry: CacheEntry, inferenceId: string = uuidv7(Date.now()), id: string = idAt(entry.timestamp)): StoredModelInference =>
  modelInference(inferenceId, {
    id,
    output: entry.output,
    rawRequest: entry.rawRequest,
    rawResponse: entry.rawResponse,
    finishReason: entry.finishReason,
    cacheKey: entry.key
  })

/**
 * A batch holding a row of every table: a chat and a json inference of one episode, a model
 * call of each (the chat's answer written to the cache as `cached`), feedback of the four
 * kinds (one on the episode).
 */
export const everyKindBatch = (): WriteBatch & { readonly chat: StoredInference; readonly json: StoredInference; readonly cached: CacheEntry } => {
  const chat = chatInference({ functionName: "every_kind" })
  const json = jsonInference({ functionName: "every_kind", episodeId: chat.episodeId })
  const cachedCallId = uuidv7(Date.now())
  const cached = cacheEntry(`${chat.id}-key`, uuidv7Timestamp(cachedCallId))
  return {
    chat,
    json,
    cached,
    ...batch({
      inferences: [chat, json],
      modelInferences: [cachedCall(cached, chat.id, cachedCallId), modelInference(json.id)],
      feedback: [
        feedback("boolean", chat.id, true),
        feedback("float", chat.id, 0.5),
        feedback("comment", chat.episodeId, "ok", { targetType: "episode" }),
        feedback("demonstration", json.id, { name: "x" })
      ]
    })
  }
}
