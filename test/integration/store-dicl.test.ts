/**
 * The conformance suite of the DICL example store (`DiclExampleStore` of src/dicl/store.ts): the
 * same tests against the ClickHouse adapter and the Postgres adapter, each on a real server in a
 * database of its own: the way it ranks (/status), nearest examples by cosine distance in order
 * with their distances, `k` and `maxDistance`, other functions, variants and dimensions kept
 * apart, append and replace, a replace that leaves the previous examples read until it commits
 * (and as they were when it never does), writes that began before a replace hidden by it, exact
 * round trips of inputs and outputs with odd strings, a retried stage stored once, refused values
 * storing nothing, and StoreErrors (not crashes) when the server is cut off.
 * The Postgres adapter runs twice: on the Postgres server and on the embedded database (PGlite).
 */
import * as Effect from "effect/Effect"
import { describe, expect, it } from "vitest"
import type { DiclExample } from "../../src/dicl/store.ts"
import type { DiclExampleStore } from "../../src/dicl/store.ts"
import { uuidv7 } from "../../src/ids.ts"
import { StoreError } from "../../src/storeError.ts"
import { engineOf, isPostgresLike, queryDatabase } from "../support/databases.ts"
import { poll } from "../support/observability.ts"
import { failure, oddStrings, run, storeForSuite, withCutOffStore } from "../support/storeFixtures.ts"

let counter = 0

/** an example of `write_haiku`/`dicl` with this embedding, every field present */
const example = (embedding: ReadonlyArray<number>, fields: Partial<DiclExample> = {}): DiclExample => {
  counter++
  return {
    id: uuidv7(Date.now()),
    functionName: "write_haiku",
    variantName: "dicl",
    input: { system: { name: "Ann" }, messages: [{ role: "user", content: [{ type: "text", text: `example ${counter}` }] }] },
    output: [{ type: "text", text: `answer ${counter}` }],
    embedding,
    embeddingModel: "openai::text-embedding-3-small",
    createdAt: Date.now(),
    ...fields
  }
}

const nearestTexts = async (store: DiclExampleStore, embedding: ReadonlyArray<number>, k = 10, names = { functionName: "write_haiku", variantName: "dicl" }) =>
  (await run(store.nearest("default", { ...names, embedding, k }))).map((neighbor) => (neighbor.output as Array<{ text: string }>)[0].text)

describe.each(["clickhouse", "postgres", "pglite"] as const)("%s DICL example store", (backend) => {
  /** the adapters' backend, which the errors name: PGlite is reached with the Postgres ones */
  const engine = engineOf(backend)
  const postgresLike = isPostgresLike(backend)

  const suite = storeForSuite(backend)
  const store = () => suite.store.dicl
  /** the rows the table holds for the function, read or not */
  const storedRows = async (functionName: string) => {
    const table = backend === "clickhouse" ? "DiclExample" : "dicl_example"
    const rows = await queryDatabase(suite.database, `SELECT count(*) AS n FROM ${table} WHERE function_name = '${functionName}'`)
    return Number(rows[0].n)
  }

  it("says how it ranks: ClickHouse arrays, pgvector where the server has it (the embedded database does), float arrays otherwise", async () => {
    if (backend === "clickhouse") {
      expect(await run(store().vectorSearch)).toBe("clickhouse")
      return
    }
    const available = await queryDatabase(suite.database, "SELECT name FROM pg_available_extensions WHERE name = 'vector'")
    // the embedded database is started with pgvector
    if (backend === "pglite") expect(available).toEqual([{ name: "vector" }])
    expect(await run(store().vectorSearch)).toBe(available.length > 0 ? "pgvector" : "float_array")
    const column = await queryDatabase(suite.database, "SELECT format_type(atttypid, atttypmod) AS type FROM pg_attribute WHERE attrelid = 'dicl_example'::regclass AND attname = 'embedding'")
    expect(column).toEqual([{ type: available.length > 0 ? "vector" : "double precision[]" }])
  })

  it("finds the nearest examples by cosine distance, nearest first, with their distances; k bounds them", async () => {
    const names = { functionName: "rank", variantName: "v" }
    const same = example([2, 0, 0], { ...names, output: [{ type: "text", text: "same direction" }] })
    const close = example([0.8, 0.6, 0], { ...names, output: [{ type: "text", text: "close" }] })
    const orthogonal = example([0, 0, 3], { ...names, output: [{ type: "text", text: "orthogonal" }] })
    const opposite = example([-1, 0, 0], { ...names, output: [{ type: "text", text: "opposite" }] })
    await run(store().write("default", "rank", "v", [orthogonal, opposite, same, close], "replace"))

    const found = await run(store().nearest("default", { ...names, embedding: [1, 0, 0], k: 10 }))
    expect(found.map((neighbor) => (neighbor.output as Array<{ text: string }>)[0].text)).toEqual(["same direction", "close", "orthogonal", "opposite"])
    const distances = found.map((neighbor) => neighbor.distance)
    for (const [actual, expected] of distances.map((distance, i) => [distance, [0, 0.2, 1, 2][i]])) expect(actual).toBeCloseTo(expected, 5)
    expect(found[0]).toMatchObject({ input: same.input, output: same.output })

    expect(await nearestTexts(store(), [1, 0, 0], 2, names)).toEqual(["same direction", "close"])
    expect(await nearestTexts(store(), [1, 0, 0], 1, names)).toEqual(["same direction"])
    expect(await nearestTexts(store(), [1, 0, 0], 0, names)).toEqual([])
    // the scale of the query does not matter, its direction does
    expect(await nearestTexts(store(), [0, 0.001, 0.01], 2, names)).toEqual(["orthogonal", "close"])
    // a query without a direction finds nothing
    expect(await nearestTexts(store(), [0, 0, 0], 10, names)).toEqual([])
  })

  it("leaves out the examples farther than maxDistance", async () => {
    const names = { functionName: "far", variantName: "v" }
    await run(store().write("default", "far", "v", [
      example([1, 0], { ...names, output: [{ type: "text", text: "a" }] }),
      example([1, 1], { ...names, output: [{ type: "text", text: "b" }] }),
      example([0, 1], { ...names, output: [{ type: "text", text: "c" }] })
    ], "replace"))
    const texts = async (maxDistance: number, k = 10) =>
      (await run(store().nearest("default", { ...names, embedding: [1, 0], k, maxDistance }))).map((neighbor) => (neighbor.output as Array<{ text: string }>)[0].text)
    expect(await texts(0.5)).toEqual(["a", "b"])
    expect(await texts(0.01)).toEqual(["a"])
    expect(await texts(2)).toEqual(["a", "b", "c"])
    expect(await texts(0.5, 1)).toEqual(["a"])
  })

  it("keeps functions, variants and dimensions apart", async () => {
    const mine = example([1, 0, 0], { functionName: "f", variantName: "a", output: [{ type: "text", text: "f/a" }] })
    const otherVariant = example([1, 0, 0], { functionName: "f", variantName: "b", output: [{ type: "text", text: "f/b" }] })
    const otherFunction = example([1, 0, 0], { functionName: "g", variantName: "a", output: [{ type: "text", text: "g/a" }] })
    const wider = example([1, 0, 0, 0], { functionName: "f", variantName: "a", output: [{ type: "text", text: "4 dimensions" }] })
    await run(store().write("default", "f", "a", [mine, wider], "replace"))
    await run(store().write("default", "f", "b", [otherVariant], "replace"))
    await run(store().write("default", "g", "a", [otherFunction], "replace"))
    expect(await nearestTexts(store(), [1, 0, 0], 10, { functionName: "f", variantName: "a" })).toEqual(["f/a"])
    expect(await nearestTexts(store(), [1, 0, 0, 0], 10, { functionName: "f", variantName: "a" })).toEqual(["4 dimensions"])
    expect(await nearestTexts(store(), [1, 0, 0], 10, { functionName: "f", variantName: "b" })).toEqual(["f/b"])
    expect(await nearestTexts(store(), [1, 0, 0], 10, { functionName: "g", variantName: "a" })).toEqual(["g/a"])
    expect(await nearestTexts(store(), [1, 0, 0], 10, { functionName: "g", variantName: "b" })).toEqual([])
    expect(await run(store().count("default", "f", "a"))).toBe(2)
    expect(await run(store().count("default", "f", "b"))).toBe(1)
    expect(await run(store().count("default", "nobody", "a"))).toBe(0)
  })

  it("appends to the examples, or replaces them all", async () => {
    const at = (x: number, text: string) => example([1, x], { functionName: "modes", variantName: "v", output: [{ type: "text", text }] })
    await run(store().write("default", "modes", "v", [at(0, "one"), at(1, "two")], "append"))
    expect(await run(store().count("default", "modes", "v"))).toBe(2)
    await run(store().write("default", "modes", "v", [at(2, "three")], "append"))
    expect(await run(store().count("default", "modes", "v"))).toBe(3)
    expect(await nearestTexts(store(), [1, 0], 10, { functionName: "modes", variantName: "v" })).toEqual(["one", "two", "three"])
    await run(store().write("default", "modes", "v", [at(3, "four")], "replace"))
    expect(await run(store().count("default", "modes", "v"))).toBe(1)
    expect(await nearestTexts(store(), [1, 0], 10, { functionName: "modes", variantName: "v" })).toEqual(["four"])
    // the replaced rows are deleted (on ClickHouse by a mutation, in the background)
    await poll("the replaced rows to be deleted", async () => (await storedRows("modes")) === 1 ? true : undefined)
    await run(store().write("default", "modes", "v", [at(0, "five")], "append"))
    expect(await nearestTexts(store(), [1, 0], 10, { functionName: "modes", variantName: "v" })).toEqual(["five", "four"])
  })

  it("a replace leaves the previous examples read until it commits, and as they were when it never does", async () => {
    const names = { functionName: "generations", variantName: "v" }
    const at = (x: number, text: string) => example([1, x], { ...names, output: [{ type: "text", text }] })
    await run(store().write("default", "generations", "v", [at(0, "old 1"), at(1, "old 2")], "replace"))

    const replace = await run(store().begin("default", "generations", "v", "replace"))
    await run(store().stage(replace, [at(0, "new 1")]))
    expect(await nearestTexts(store(), [1, 0], 10, names)).toEqual(["old 1", "old 2"])
    await run(store().stage(replace, [at(1, "new 2"), at(2, "new 3")]))
    expect(await run(store().count("default", "generations", "v"))).toBe(2)
    expect(await nearestTexts(store(), [1, 0], 10, names)).toEqual(["old 1", "old 2"])
    await run(store().commit(replace))
    expect(await nearestTexts(store(), [1, 0], 10, names)).toEqual(["new 1", "new 2", "new 3"])
    expect(await run(store().count("default", "generations", "v"))).toBe(3)

    // a replace that fails half-way (never committed) changes nothing
    const failed = await run(store().begin("default", "generations", "v", "replace"))
    await run(store().stage(failed, [at(0, "lost")]))
    expect(await nearestTexts(store(), [1, 0], 10, names)).toEqual(["new 1", "new 2", "new 3"])
    // and a later write is not mixed with it
    await run(store().write("default", "generations", "v", [at(3, "appended")], "append"))
    expect(await nearestTexts(store(), [1, 0], 10, names)).toEqual(["new 1", "new 2", "new 3", "appended"])
  })

  it("keeps workspaces apart: each reads and counts its own examples, a replace deletes only its own workspace's", async () => {
    const names = { functionName: "tenants", variantName: "v" }
    const at = (x: number, text: string) => example([1, x], { ...names, output: [{ type: "text", text }] })
    await run(store().write("team-a", "tenants", "v", [at(0, "a 1"), at(1, "a 2")], "replace"))
    await run(store().write("team-b", "tenants", "v", [at(0, "b 1")], "replace"))
    const textsOf = async (workspace: string) =>
      (await run(store().nearest(workspace, { ...names, embedding: [1, 0], k: 10 }))).map((neighbor) => (neighbor.output as Array<{ text: string }>)[0].text)
    expect(await textsOf("team-a")).toEqual(["a 1", "a 2"])
    expect(await textsOf("team-b")).toEqual(["b 1"])
    expect(await textsOf("default")).toEqual([])
    expect(await run(store().count("team-a", "tenants", "v"))).toBe(2)
    await run(store().write("team-b", "tenants", "v", [at(2, "b 2")], "replace"))
    // the replace's deletion (a ClickHouse mutation, in the background) has run: B's first example is gone, A's are all there
    await poll("team-b's replaced rows to be deleted", async () => (await storedRows("tenants")) === 3 ? true : undefined)
    expect(await textsOf("team-a")).toEqual(["a 1", "a 2"])
    expect(await textsOf("team-b")).toEqual(["b 2"])
    expect(await run(store().count("team-a", "tenants", "v"))).toBe(2)
    expect(await run(store().count("team-b", "tenants", "v"))).toBe(1)
  })

  it("a replace hides the writes that began before it, whenever they commit", async () => {
    const names = { functionName: "race", variantName: "v" }
    const at = (x: number, text: string) => example([1, x], { ...names, output: [{ type: "text", text }] })
    const early = await run(store().begin("default", "race", "v", "append"))
    await run(store().stage(early, [at(0, "early append")]))
    await run(store().write("default", "race", "v", [at(1, "replace")], "replace"))
    await run(store().commit(early))
    expect(await nearestTexts(store(), [1, 0], 10, names)).toEqual(["replace"])
    expect(await run(store().count("default", "race", "v"))).toBe(1)
  })

  it("reads inputs and outputs back exactly, odd strings included, in names too; a stage made again stores each example once", async () => {
    for (const value of oddStrings) {
      const names = { functionName: `odd ${value}`, variantName: value }
      const chat = example([1, 0.5], {
        ...names,
        input: { system: value, messages: [{ role: "user", content: value }] },
        output: [{ type: "text", text: value }, { type: "tool_call", id: "call_1", name: value, arguments: { [value]: [1.5, null, true] }, raw_name: value, raw_arguments: "{}" }],
        embeddingModel: value
      })
      const json = example([0.5, 1], { ...names, output: { raw: JSON.stringify({ answer: value }), parsed: { answer: value } } })
      const write = await run(store().begin("default", names.functionName, names.variantName, "replace"))
      await run(store().stage(write, [chat, json]))
      await run(store().stage(write, [chat]))
      await run(store().commit(write))
      const found = await run(store().nearest("default", { ...names, embedding: [1, 0.5], k: 5 }))
      expect(found.map(({ input, output }) => ({ input, output }))).toStrictEqual([
        { input: chat.input, output: chat.output },
        { input: json.input, output: json.output }
      ])
      expect(await run(store().count("default", names.functionName, names.variantName))).toBe(2)
    }
  })

  it("refuses an example that is not of the write, with an id that is not a UUID, or an embedding without a direction, storing nothing of the call", async () => {
    const write = await run(store().begin("default", "refused", "v", "append"))
    const good = example([1, 0], { functionName: "refused", variantName: "v" })
    for (const bad of [
      example([1, 0], { functionName: "other", variantName: "v" }),
      example([1, 0], { functionName: "refused", variantName: "w" }),
      example([1, 0], { functionName: "refused", variantName: "v", id: "not-a-uuid'; --" }),
      example([0, 0], { functionName: "refused", variantName: "v" }),
      example([], { functionName: "refused", variantName: "v" }),
      example([1, Number.NaN], { functionName: "refused", variantName: "v" }),
      example([1, Infinity], { functionName: "refused", variantName: "v" })
    ]) {
      const error = await failure(store().stage(write, [good, bad]))
      expect(error).toBeInstanceOf(StoreError)
      expect(error.message).toMatch(new RegExp(`^${engine} `))
      expect(error.message).not.toMatch(/\n/)
    }
    await run(store().commit(write))
    expect(await run(store().count("default", "refused", "v"))).toBe(0)
  })

  it("fails with a one-line StoreError when the server is cut off; what needs no server is answered without it", async () => {
    await withCutOffStore(backend, suite.database, async ({ dicl }) => {
      expect(await run(dicl.nearest("default", { functionName: "f", variantName: "v", embedding: [1, 0], k: 0 }))).toEqual([])
      expect(await run(dicl.nearest("default", { functionName: "f", variantName: "v", embedding: [0, 0], k: 3 }))).toEqual([])
      const write = await run(dicl.begin("default", "f", "v", "replace"))
      for (const effect of [
        dicl.stage(write, [example([1, 0], { functionName: "f", variantName: "v" })]),
        dicl.commit(write),
        dicl.nearest("default", { functionName: "f", variantName: "v", embedding: [1, 0], k: 3 }),
        dicl.count("default", "f", "v"),
        ...(postgresLike ? [dicl.vectorSearch] : [])
      ]) {
        const error = await failure(effect as Effect.Effect<unknown, StoreError>)
        expect(error).toBeInstanceOf(StoreError)
        expect(error.message).toMatch(new RegExp(`^${engine} \\w+ failed: \\S`))
        expect(error.message).not.toMatch(/\n|    at /)
      }
    })
  })
})
