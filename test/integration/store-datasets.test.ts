/**
 * The conformance suite of the dataset store (`DatasetStore` of src/datasets/store.ts): the
 * same tests against the ClickHouse adapter and the Postgres adapter, each on a real server in
 * a database of its own: exact round trips, listing (filters, orders, search, paging), the
 * changes that apply to live datapoints only (all or nothing, one winner among concurrent
 * updates), the datasets' summaries, and StoreErrors (not crashes) when the server is cut off.
 * The Postgres adapter runs twice: on the Postgres server and on the embedded database (PGlite).
 */
import * as Effect from "effect/Effect"
import { beforeAll, describe, expect, it } from "vitest"
import type { DatapointQuery, DatasetStore, NewDatapoint, StoredDatapoint } from "../../src/datasets/store.ts"
import { uuidv7 } from "../../src/ids.ts"
import { StoreError } from "../../src/storeError.ts"
import { byId, chatDatapoint, jsonDatapoint, stored } from "../support/datapointFixtures.ts"
import { engineOf } from "../support/databases.ts"
import { failure, idAt, oddStrings, run, storeForSuite, withCutOffStore } from "../support/storeFixtures.ts"

/** the workspace the suite writes and reads in (test/integration/workspaces-datasets.test.ts checks the isolation) */
const ws = "default"

/** a dataset name no other test uses */
const datasetNamed = (name: string) => `${name} ${uuidv7(Date.now()).slice(-12)}`

const get = (store: DatasetStore, datasetName: string, ids: ReadonlyArray<string>) => run(store.getDatapoints(ws, datasetName, ids)).then(byId)

describe.each(["clickhouse", "postgres", "pglite"] as const)("%s dataset store", (backend) => {
  /** the adapters' backend, which the errors name: PGlite is reached with the Postgres ones */
  const engine = engineOf(backend)

  describe("reads return what was written", () => {
    const suite = storeForSuite(backend)
    const store = () => suite.store.datasets

    it("chat and json datapoints, with optional fields present and absent, stale ones included", async () => {
      const dataset = datasetNamed("round trip")
      const datapoints = [
        chatDatapoint({ datasetName: dataset }),
        chatDatapoint({
          datasetName: dataset,
          output: undefined,
          episodeId: undefined,
          tags: {},
          name: undefined,
          toolParams: undefined,
          sourceInferenceId: undefined,
          isCustom: true,
          searchText: ""
        }),
        chatDatapoint({ datasetName: dataset, toolParams: { allowed_tools: null, tool_choice: "none", parallel_tool_calls: null, additional_tools: null } }),
        jsonDatapoint({ datasetName: dataset, tags: { a: "1", b: "2" }, name: "json one", episodeId: uuidv7(Date.now()) }),
        jsonDatapoint({ datasetName: dataset, output: undefined, outputSchema: undefined, isCustom: false }),
        // a JSON null is a value, not an absent field
        jsonDatapoint({ datasetName: dataset, output: null, outputSchema: null }),
        jsonDatapoint({ datasetName: dataset, staledAt: Date.now() - 5_000, updatedAt: Date.now() - 5_000 }),
        jsonDatapoint({ datasetName: dataset, firstVersionId: uuidv7(Date.now() - 10_000) })
      ]
      await run(store().insertDatapoints(ws, datapoints))

      const read = await get(store(), dataset, datapoints.map((datapoint) => datapoint.id))
      expect(read).toStrictEqual(byId(datapoints.map(stored)))
      const minimal = read.find((datapoint) => datapoint.id === datapoints[1].id)!
      for (const field of ["output", "episodeId", "name", "toolParams", "sourceInferenceId", "firstVersionId", "outputSchema", "staledAt"]) expect(field in minimal).toBe(false)
      expect(read.find((datapoint) => datapoint.id === datapoints[5].id)).toMatchObject({ output: null, outputSchema: null })

      expect(await get(store(), dataset, [datapoints[3].id, uuidv7(Date.now())])).toStrictEqual([stored(datapoints[3])])
      expect(await get(store(), dataset, [])).toEqual([])
      // the stale one is read by id, never listed
      expect((await run(store().listDatapoints(ws, { datasetName: dataset, orderBy: [], limit: 100, offset: 0 }))).map((datapoint) => datapoint.id))
        .toEqual([datapoints[7], ...datapoints.slice(0, 6).reverse()].map((datapoint) => datapoint.id))
    })

    it("reads a dataset's datapoints only, and ignores ids that are not UUIDs", async () => {
      const mine = chatDatapoint({ datasetName: datasetNamed("mine") })
      const theirs = chatDatapoint({ datasetName: datasetNamed("theirs") })
      await run(store().insertDatapoints(ws, [mine, theirs]))
      expect(await get(store(), mine.datasetName, [mine.id, theirs.id, "nope", "'; DROP TABLE datapoint; --"])).toStrictEqual([stored(mine)])
      expect(await get(store(), theirs.datasetName, [mine.id])).toEqual([])
      expect(await get(store(), "no such dataset", [mine.id])).toEqual([])
    })

    it("strings with quotes, backslashes, newlines, placeholders, control characters and unicode round-trip, also as filters and search terms", async () => {
      const datapoints = oddStrings.map((value, index) =>
        chatDatapoint({
          datasetName: `odd ${value}`,
          functionName: `fn ${value}`,
          name: value,
          input: { messages: [{ role: "user", content: value }], [value]: value, "": null },
          output: [{ type: "text", text: value }],
          tags: { [`key ${index} ${value}`]: value, [value]: `${index}` },
          searchText: `${index} ${value.toLowerCase()}`
        })
      )
      const numbers = chatDatapoint({ input: { deep: [1.5, -0, 1e300, -1e-300, 0.1 + 0.2, true, null] } })
      await run(store().insertDatapoints(ws, [...datapoints, numbers]))

      for (const [index, datapoint] of datapoints.entries()) {
        expect(await get(store(), datapoint.datasetName, [datapoint.id])).toStrictEqual([stored(datapoint)])
        const listed = await run(store().listDatapoints(ws, {
          datasetName: datapoint.datasetName,
          functionName: datapoint.functionName,
          filter: { type: "tag", key: `key ${index} ${oddStrings[index]}`, value: oddStrings[index], comparison_operator: "=" },
          search: [`${index} ${oddStrings[index].toLowerCase()}`],
          orderBy: [{ by: "search_relevance" }],
          limit: 10,
          offset: 0
        }))
        expect(listed).toStrictEqual([stored(datapoint)])
      }
      // JSON has no -0: it is written as 0
      expect(await get(store(), numbers.datasetName, [numbers.id])).toStrictEqual([{ ...stored(numbers), input: { deep: [1.5, 0, 1e300, -1e-300, 0.1 + 0.2, true, null] } }])
    })

    it("lone UTF-16 surrogates in names and tags read back as U+FFFD instead of failing the write", async () => {
      const dataset = datasetNamed("surrogates")
      const datapoint = chatDatapoint({ datasetName: dataset, name: "bad \ud800 name", tags: { "k\udc00": "v\ud800" } })
      await run(store().insertDatapoints(ws, [datapoint]))
      expect(await get(store(), dataset, [datapoint.id])).toStrictEqual([{ ...stored(datapoint), name: "bad \ufffd name", tags: { "k\ufffd": "v\ufffd" } }])
    })

    it("writes a batch all or nothing: a row the server refuses, or an id that is not a UUID, leaves none of it", async () => {
      const dataset = datasetNamed("all or nothing")
      // large enough to be sent in more than one part
      const large = chatDatapoint({ datasetName: dataset, input: { messages: [{ role: "user", content: "x".repeat(9 * 1024 * 1024) }] } })
      const fine = jsonDatapoint({ datasetName: dataset })
      const refused = jsonDatapoint({ datasetName: dataset, functionType: "neither" as "json" })
      const error = await failure(store().insertDatapoints(ws, [large, fine, refused]))
      expect(error).toBeInstanceOf(StoreError)
      expect(error.message).toMatch(new RegExp(`^${engine} insertDatapoints failed: `))
      expect(await get(store(), dataset, [large.id, fine.id, refused.id])).toEqual([])

      const notUuid = await failure(store().insertDatapoints(ws, [fine, jsonDatapoint({ datasetName: dataset, episodeId: "nope' --" })]))
      expect(notUuid.message).toMatch(/uuid/i)
      expect(await get(store(), dataset, [fine.id])).toEqual([])
      await run(store().insertDatapoints(ws, []))
    })

    it("writes parts made as the write reaches them, all or nothing; again from the first part when retried", async () => {
      const dataset = datasetNamed("in parts")
      const parts = [
        [chatDatapoint({ datasetName: dataset }), jsonDatapoint({ datasetName: dataset })],
        [],
        [chatDatapoint({ datasetName: dataset, name: "bad \ud800 name" })]
      ]
      // made one at a time: the next only once the previous one is taken, each as often as the write iterates
      let made = 0
      const lazily = <A>(items: ReadonlyArray<A>): Iterable<A> => ({
        *[Symbol.iterator]() {
          for (const item of items) {
            made++
            yield item
          }
        }
      })
      await run(store().insertDatapointsInParts(ws, lazily(parts)))
      // Postgres refuses the lone surrogate, and the write is made again, with U+FFFD
      expect(made).toBe(engine === "postgres" ? 6 : 3)
      const all = parts.flat()
      expect(await get(store(), dataset, all.map((datapoint) => datapoint.id))).toStrictEqual(
        byId(all.map((datapoint) => datapoint.name === "bad \ud800 name" ? { ...stored(datapoint), name: "bad \ufffd name" } : stored(datapoint)))
      )

      // a part that fails after others were sent: none of them stored
      const later = datasetNamed("in parts, failing")
      const first = [chatDatapoint({ datasetName: later }), jsonDatapoint({ datasetName: later })]
      const failing = [jsonDatapoint({ datasetName: later }), jsonDatapoint({ datasetName: later, episodeId: "nope' --" })]
      const error = await failure(store().insertDatapointsInParts(ws, lazily([first, failing])))
      expect(error.message).toMatch(/uuid/i)
      expect(await get(store(), later, [...first, ...failing].map((datapoint) => datapoint.id))).toEqual([])
      const refused = [jsonDatapoint({ datasetName: later, functionType: "neither" as "json" })]
      expect((await failure(store().insertDatapointsInParts(ws, lazily([first, refused])))).message).toMatch(new RegExp(`^${engine} insertDatapoints failed: `))
      expect(await get(store(), later, first.map((datapoint) => datapoint.id))).toEqual([])
      await run(store().insertDatapointsInParts(ws, []))
    })
  })

  describe("listing: filters, orders, search and paging", () => {
    const suite = storeForSuite(backend)
    const store = () => suite.store.datasets
    const dataset = datasetNamed("listing")
    const base = Date.UTC(2025, 0, 1, 12, 0, 0)
    // one millisecond apart, except 3 and 4, which share one (and are ordered by id)
    const rows: ReadonlyArray<NewDatapoint> = [
      chatDatapoint({ id: idAt(base), datasetName: dataset, tags: { team: "red", user: "u1" }, searchText: "rain on the roof" }),
      jsonDatapoint({ id: idAt(base + 1), datasetName: dataset, tags: { team: "blue" }, searchText: "ann is 30, rain" }),
      chatDatapoint({ id: idAt(base + 2), datasetName: dataset, tags: { team: "red" }, searchText: "snow" }),
      chatDatapoint({ id: idAt(base + 3, 1), datasetName: dataset, tags: {}, searchText: "rain, roof and snow" }),
      jsonDatapoint({ id: idAt(base + 3, 2), datasetName: dataset, tags: { team: "green", user: "u2" }, searchText: "roof" }),
      chatDatapoint({ id: idAt(base + 4), datasetName: dataset, tags: { team: "red", user: "u2" }, searchText: "sun" })
    ]
    // never listed: a stale datapoint, and one of another dataset
    const staled = chatDatapoint({ id: idAt(base + 5), datasetName: dataset, tags: { team: "red", user: "u2" }, searchText: "rain roof sun snow" })
    const elsewhere = chatDatapoint({ id: idAt(base + 6), datasetName: datasetNamed("elsewhere"), tags: { team: "red" }, searchText: "rain" })
    const renamedAt = Date.now()
    /** what a store reads back of each of `rows`: the first one renamed */
    const expected: ReadonlyArray<StoredDatapoint> = rows.map((row, index) => index === 0 ? { ...stored(row), name: "renamed", updatedAt: renamedAt } : stored(row))
    const all = [5, 4, 3, 2, 1, 0]

    /** the indexes in `rows` of what listDatapoints answers */
    const list = async (query: Partial<DatapointQuery> = {}) =>
      (await run(store().listDatapoints(ws, { datasetName: dataset, orderBy: [], limit: 100, offset: 0, ...query }))).map((found) => rows.findIndex((row) => row.id === found.id))

    const red = { type: "tag", key: "team", value: "red", comparison_operator: "=" } as const
    const u2 = { type: "tag", key: "user", value: "u2", comparison_operator: "=" } as const
    const early = { type: "time", time: base + 2, comparison_operator: "<=" } as const

    beforeAll(async () => {
      // written in two batches, out of order
      await run(store().insertDatapoints(ws, [rows[3], rows[0], staled, rows[5]]))
      await run(store().insertDatapoints(ws, [rows[1], elsewhere, rows[4], rows[2]]))
      expect(await run(store().staleDatapoints(ws, dataset, [staled.id], Date.now()))).toBe(1)
      expect(await run(store().renameDatapoints(ws, dataset, [{ id: rows[0].id, name: "renamed" }], renamedAt))).toEqual({ notLive: [] })
    })

    it("lists the live datapoints of the dataset, newest first, ties in one millisecond by id, each once and as stored", async () => {
      expect(await run(store().listDatapoints(ws, { datasetName: dataset, orderBy: [], limit: 100, offset: 0 }))).toStrictEqual(all.map((index) => expected[index]))
      expect(await list({ datasetName: "no such dataset" })).toEqual([])
    })

    it("pages with offset and limit", async () => {
      expect(await list({ limit: 2 })).toEqual([5, 4])
      expect(await list({ limit: 2, offset: 2 })).toEqual([3, 2])
      expect(await list({ limit: 2, offset: 4 })).toEqual([1, 0])
      expect(await list({ limit: 2, offset: 6 })).toEqual([])
      expect(await list({ limit: 3, offset: 1 })).toEqual([4, 3, 2])
      expect(await list({ limit: 0 })).toEqual([])
      expect(await list({ functionName: "write_haiku", limit: 2, offset: 1 })).toEqual([3, 2])
    })

    it("filters by function", async () => {
      expect(await list({ functionName: "extract" })).toEqual([4, 1])
      expect(await list({ functionName: "write_haiku" })).toEqual([5, 3, 2, 0])
      expect(await list({ functionName: "nope" })).toEqual([])
    })

    it("filters by tag: = and != need the tag; not() of them includes datapoints without it", async () => {
      expect(await list({ filter: red })).toEqual([5, 2, 0])
      expect(await list({ filter: { ...red, comparison_operator: "!=" } })).toEqual([4, 1])
      expect(await list({ filter: { ...red, value: "purple", comparison_operator: "!=" } })).toEqual([5, 4, 2, 1, 0])
      expect(await list({ filter: { type: "not", child: red } })).toEqual([4, 3, 1])
      expect(await list({ filter: { type: "not", child: { ...red, comparison_operator: "!=" } } })).toEqual([5, 3, 2, 0])
      expect(await list({ filter: u2 })).toEqual([5, 4])
      expect(await list({ filter: { type: "tag", key: "missing", value: "", comparison_operator: "=" } })).toEqual([])
      expect(await list({ filter: { type: "tag", key: "missing", value: "", comparison_operator: "!=" } })).toEqual([])
    })

    it("filters by the time of the id with each operator, exact to the millisecond", async () => {
      const at = (comparison_operator: "<" | "<=" | ">" | ">=" | "=" | "!=", time: number) => list({ filter: { type: "time", time, comparison_operator } })
      expect(await at("<", base + 3)).toEqual([2, 1, 0])
      expect(await at("<=", base + 3)).toEqual([4, 3, 2, 1, 0])
      expect(await at(">", base + 3)).toEqual([5])
      expect(await at(">=", base + 3)).toEqual([5, 4, 3])
      expect(await at("=", base + 3)).toEqual([4, 3])
      expect(await at("!=", base + 3)).toEqual([5, 2, 1, 0])
      expect(await at("<", base)).toEqual([])
      expect(await at(">", base + 4)).toEqual([])
      expect(await at(">", -1)).toEqual(all)
    })

    it("combines filters with and, or and not", async () => {
      expect(await list({ filter: { type: "and", children: [red, u2] } })).toEqual([5])
      expect(await list({ filter: { type: "or", children: [u2, early] } })).toEqual([5, 4, 2, 1, 0])
      expect(await list({ filter: { type: "and", children: [red, { type: "not", child: early }] } })).toEqual([5])
      expect(await list({ filter: { type: "not", child: { type: "or", children: [red, early] } } })).toEqual([4, 3])
      expect(await list({ filter: { type: "and", children: [] } })).toEqual(all)
      expect(await list({ filter: { type: "or", children: [] } })).toEqual([])
      expect(await list({ functionName: "write_haiku", filter: { type: "or", children: [red, early] }, limit: 2, offset: 1 })).toEqual([2, 0])
    })

    it("orders by timestamp either way, the id (newest first) breaking ties", async () => {
      expect(await list({ orderBy: [{ by: "timestamp", direction: "descending" }] })).toEqual(all)
      expect(await list({ orderBy: [{ by: "timestamp", direction: "ascending" }] })).toEqual([0, 1, 2, 4, 3, 5])
      expect(await list({ orderBy: [{ by: "timestamp", direction: "ascending" }], limit: 2, offset: 3 })).toEqual([4, 3])
      expect(await list({ orderBy: [{ by: "timestamp", direction: "ascending" }], filter: red })).toEqual([0, 2, 5])
    })

    it("searches for any of the terms, as substrings, and orders by how many a datapoint holds", async () => {
      expect(await list({ search: ["rain"] })).toEqual([3, 1, 0])
      expect(await list({ search: ["roof", "snow"] })).toEqual([4, 3, 2, 0])
      expect(await list({ search: ["oo"] })).toEqual([4, 3, 0])
      expect(await list({ search: ["hail"] })).toEqual([])
      expect(await list({ search: ["rain", "roof"], orderBy: [{ by: "search_relevance" }] })).toEqual([3, 0, 4, 1])
      expect(await list({ search: ["rain", "roof"], orderBy: [{ by: "search_relevance" }, { by: "timestamp", direction: "ascending" }] })).toEqual([0, 3, 1, 4])
      expect(await list({ search: ["rain", "roof"], orderBy: [{ by: "timestamp", direction: "ascending" }, { by: "search_relevance" }] })).toEqual([0, 1, 3, 4])
      expect(await list({ search: ["rain", "roof"], orderBy: [{ by: "search_relevance" }], limit: 2, offset: 1 })).toEqual([0, 4])
      expect(await list({ search: ["rain", "roof", "snow"], orderBy: [{ by: "search_relevance" }], filter: red })).toEqual([0, 2])
      expect(await list({ search: ["rain", "sun"], functionName: "write_haiku", orderBy: [{ by: "search_relevance" }] })).toEqual([5, 3, 0])
    })

    it("pages after a key in ascending id order", async () => {
      const zero = "00000000-0000-0000-0000-000000000000"
      expect(await list({ after: zero })).toEqual([0, 1, 2, 3, 4, 5])
      expect(await list({ after: rows[1].id, limit: 2 })).toEqual([2, 3])
      expect(await list({ after: rows[3].id, limit: 2 })).toEqual([4, 5])
      expect(await list({ after: rows[5].id })).toEqual([])
      expect(await list({ after: rows[0].id, filter: red })).toEqual([2, 5])
      expect(await list({ after: zero, functionName: "extract", limit: 1 })).toEqual([1])
      expect(await list({ after: zero, search: ["roof"] })).toEqual([0, 3, 4])
      // an export walks the whole dataset, page by page
      const walked: Array<number> = []
      let after = zero
      for (;;) {
        const page = await run(store().listDatapoints(ws, { datasetName: dataset, orderBy: [], after, limit: 4, offset: 0 }))
        if (page.length === 0) break
        walked.push(...page.map((found) => rows.findIndex((row) => row.id === found.id)))
        after = page.at(-1)!.id
      }
      expect(walked).toEqual([0, 1, 2, 3, 4, 5])
    })
  })

  describe("changes apply to live datapoints only, all or nothing", () => {
    const suite = storeForSuite(backend)
    const store = () => suite.store.datasets
    const listIds = async (datasetName: string) =>
      (await run(store().listDatapoints(ws, { datasetName, orderBy: [], limit: 1000, offset: 0 }))).map((datapoint) => datapoint.id)

    it("replaces: the previous version goes stale (staledAt and updatedAt now), the new one is live", async () => {
      const dataset = datasetNamed("replace")
      const first = chatDatapoint({ datasetName: dataset })
      const other = jsonDatapoint({ datasetName: dataset })
      await run(store().insertDatapoints(ws, [first, other]))
      const now = Date.now()
      const next = chatDatapoint({ datasetName: dataset, name: "second", isCustom: true, sourceInferenceId: first.sourceInferenceId, updatedAt: now })
      expect(await run(store().replaceDatapoints(ws, dataset, [{ previousId: first.id, next }], now))).toEqual({ notLive: [] })

      expect(await get(store(), dataset, [first.id, next.id, other.id])).toStrictEqual(byId([{ ...stored(first), staledAt: now, updatedAt: now }, stored(next), stored(other)]))
      expect(await listIds(dataset)).toEqual([next.id, other.id])
      // the stale version cannot be replaced again
      const again = chatDatapoint({ datasetName: dataset })
      expect(await run(store().replaceDatapoints(ws, dataset, [{ previousId: first.id, next: again }], Date.now()))).toEqual({ notLive: [first.id] })
      expect(await get(store(), dataset, [again.id])).toEqual([])
    })

    it("changes nothing when one id is stale, missing, of another dataset, not a UUID or named twice, and names it", async () => {
      const dataset = datasetNamed("not live")
      const live = chatDatapoint({ datasetName: dataset })
      const stale = chatDatapoint({ datasetName: dataset, staledAt: Date.now(), updatedAt: Date.now() })
      const foreign = chatDatapoint({ datasetName: datasetNamed("foreign") })
      await run(store().insertDatapoints(ws, [live, stale, foreign]))
      const before = await get(store(), dataset, [live.id, stale.id])

      for (const blocker of [stale.id, uuidv7(Date.now()), foreign.id, "nope"]) {
        const replacements = [
          { previousId: live.id, next: chatDatapoint({ datasetName: dataset }) },
          { previousId: blocker, next: chatDatapoint({ datasetName: dataset }) }
        ]
        expect(await run(store().replaceDatapoints(ws, dataset, replacements, Date.now()))).toEqual({ notLive: [blocker] })
        expect(await get(store(), dataset, replacements.map((replacement) => replacement.next.id))).toEqual([])
      }
      const twice = [live, live].map((datapoint) => ({ previousId: datapoint.id, next: chatDatapoint({ datasetName: dataset }) }))
      expect(await run(store().replaceDatapoints(ws, dataset, twice, Date.now()))).toEqual({ notLive: [live.id] })

      expect(await get(store(), dataset, [live.id, stale.id])).toStrictEqual(before)
      expect(await listIds(dataset)).toEqual([live.id])
      expect(await get(store(), foreign.datasetName, [foreign.id])).toStrictEqual([stored(foreign)])
    })

    it("lets exactly one of concurrent replaces of one datapoint win; the others see it not live", async () => {
      const dataset = datasetNamed("concurrent")
      const contested = chatDatapoint({ datasetName: dataset })
      await run(store().insertDatapoints(ws, [contested]))
      const now = Date.now()
      const nexts = Array.from({ length: 5 }, (_, index) => chatDatapoint({ datasetName: dataset, name: `attempt ${index}`, updatedAt: now }))
      const outcomes = await run(Effect.all(
        nexts.map((next) => store().replaceDatapoints(ws, dataset, [{ previousId: contested.id, next }], now)),
        { concurrency: "unbounded" }
      ))

      const winners = outcomes.flatMap((outcome, index) => outcome.notLive.length === 0 ? [index] : [])
      expect(winners).toHaveLength(1)
      for (const [index, outcome] of outcomes.entries()) if (index !== winners[0]) expect(outcome).toEqual({ notLive: [contested.id] })
      expect(await listIds(dataset)).toEqual([nexts[winners[0]].id])
      expect(await get(store(), dataset, nexts.map((next) => next.id))).toStrictEqual([stored(nexts[winners[0]])])
      expect(await get(store(), dataset, [contested.id])).toStrictEqual([{ ...stored(contested), staledAt: now, updatedAt: now }])
    })

    it("reads a datapoint's versions from any of them, newest first, stale ones included, renamed and staled as they are now", async () => {
      const dataset = datasetNamed("versions")
      const t = Date.now() - 60_000
      // the first version has no firstVersionId, as versions written before that column have none
      const first = chatDatapoint({ datasetName: dataset, id: idAt(t), updatedAt: t })
      const other = jsonDatapoint({ datasetName: dataset, id: idAt(t + 1), updatedAt: t + 1 })
      const foreign = chatDatapoint({ datasetName: datasetNamed("foreign"), id: idAt(t + 2), updatedAt: t + 2, firstVersionId: first.id })
      await run(store().insertDatapoints(ws, [first, other, foreign]))
      const second = chatDatapoint({ datasetName: dataset, id: idAt(t + 10), updatedAt: t + 10, name: "second", firstVersionId: first.id })
      expect(await run(store().replaceDatapoints(ws, dataset, [{ previousId: first.id, next: second }], t + 10))).toEqual({ notLive: [] })
      const third = chatDatapoint({ datasetName: dataset, id: idAt(t + 20), updatedAt: t + 20, name: "third", firstVersionId: first.id })
      expect(await run(store().replaceDatapoints(ws, dataset, [{ previousId: second.id, next: third }], t + 20))).toEqual({ notLive: [] })
      expect(await run(store().renameDatapoints(ws, dataset, [{ id: third.id, name: "renamed" }], t + 30))).toEqual({ notLive: [] })
      expect(await run(store().staleDatapoints(ws, dataset, [third.id], t + 40))).toBe(1)

      const versions = [
        { ...stored(third), name: "renamed", staledAt: t + 40, updatedAt: t + 40 },
        { ...stored(second), staledAt: t + 20, updatedAt: t + 20 },
        { ...stored(first), staledAt: t + 10, updatedAt: t + 10 }
      ]
      for (const id of [first.id, second.id, third.id, third.id.toUpperCase()]) {
        expect(await run(store().datapointVersions(ws, dataset, id)), id).toStrictEqual(versions)
      }
      expect(await run(store().datapointVersions(ws, dataset, other.id))).toStrictEqual([stored(other)])
      // another dataset's, unknown, not a UUID: none
      expect(await run(store().datapointVersions(ws, dataset, foreign.id))).toEqual([])
      expect(await run(store().datapointVersions(ws, foreign.datasetName, first.id))).toEqual([])
      expect(await run(store().datapointVersions(ws, dataset, uuidv7(Date.now())))).toEqual([])
      expect(await run(store().datapointVersions(ws, dataset, "'; DROP TABLE datapoint; --"))).toEqual([])
    })

    it("renames in place: same id, the name set and cleared, updatedAt moved, listed once", async () => {
      const dataset = datasetNamed("rename")
      const datapoint = chatDatapoint({ datasetName: dataset, name: "first" })
      const unnamed = jsonDatapoint({ datasetName: dataset, name: undefined })
      await run(store().insertDatapoints(ws, [datapoint, unnamed]))
      const now = Date.now()
      expect(await run(store().renameDatapoints(ws, dataset, [{ id: datapoint.id, name: "renamed" }, { id: unnamed.id, name: "named" }], now))).toEqual({ notLive: [] })
      expect(await get(store(), dataset, [datapoint.id, unnamed.id])).toStrictEqual(byId([
        { ...stored(datapoint), name: "renamed", updatedAt: now },
        { ...stored(unnamed), name: "named", updatedAt: now }
      ]))

      // within the same millisecond, then with a clock that stepped back: the last rename wins
      expect(await run(store().renameDatapoints(ws, dataset, [{ id: datapoint.id, name: undefined }], now))).toEqual({ notLive: [] })
      const { name: _, ...cleared } = stored(datapoint)
      expect(await get(store(), dataset, [datapoint.id])).toStrictEqual([{ ...cleared, updatedAt: now }])
      expect(await run(store().renameDatapoints(ws, dataset, [{ id: datapoint.id, name: "back" }, { id: datapoint.id, name: "last" }], now - 1_000))).toEqual({ notLive: [] })
      expect(await get(store(), dataset, [datapoint.id])).toStrictEqual([{ ...stored(datapoint), name: "last", updatedAt: now - 1_000 }])
      expect(await run(store().listDatapoints(ws, { datasetName: dataset, orderBy: [], limit: 10, offset: 0 }))).toStrictEqual([
        { ...stored(unnamed), name: "named", updatedAt: now },
        { ...stored(datapoint), name: "last", updatedAt: now - 1_000 }
      ])
    })

    it("renames nothing when one id is not live, and names it", async () => {
      const dataset = datasetNamed("rename not live")
      const live = chatDatapoint({ datasetName: dataset })
      const stale = chatDatapoint({ datasetName: dataset, staledAt: Date.now(), updatedAt: Date.now() })
      const foreign = chatDatapoint({ datasetName: datasetNamed("foreign") })
      await run(store().insertDatapoints(ws, [live, stale, foreign]))
      for (const blocker of [stale.id, uuidv7(Date.now()), foreign.id, "nope"]) {
        expect(await run(store().renameDatapoints(ws, dataset, [{ id: live.id, name: "changed" }, { id: blocker, name: "changed" }], Date.now())))
          .toEqual({ notLive: [blocker] })
      }
      expect(await get(store(), dataset, [live.id, stale.id])).toStrictEqual(byId([stored(live), stored(stale)]))
      expect(await get(store(), foreign.datasetName, [foreign.id])).toStrictEqual([stored(foreign)])
    })

    it("stales by ids and all of a dataset, counting the live ones it staled", async () => {
      const dataset = datasetNamed("stale")
      const datapoints = [chatDatapoint({ datasetName: dataset }), jsonDatapoint({ datasetName: dataset }), chatDatapoint({ datasetName: dataset })]
      const alreadyStale = chatDatapoint({ datasetName: dataset, staledAt: Date.now() - 1_000, updatedAt: Date.now() - 1_000 })
      const foreign = chatDatapoint({ datasetName: datasetNamed("foreign") })
      await run(store().insertDatapoints(ws, [...datapoints, alreadyStale, foreign]))

      const first = Date.now()
      const asked = [datapoints[0].id, datapoints[0].id, alreadyStale.id, foreign.id, uuidv7(Date.now()), "nope"]
      expect(await run(store().staleDatapoints(ws, dataset, asked, first))).toBe(1)
      expect(await run(store().staleDatapoints(ws, dataset, [datapoints[0].id], first + 1))).toBe(0)
      expect(await run(store().staleDatapoints(ws, dataset, [], first))).toBe(0)
      expect(await listIds(dataset)).toEqual([datapoints[2].id, datapoints[1].id])

      const second = first + 5
      expect(await run(store().staleDatapoints(ws, dataset, "all", second))).toBe(2)
      expect(await run(store().staleDatapoints(ws, dataset, "all", second + 1))).toBe(0)
      expect(await listIds(dataset)).toEqual([])
      expect(await get(store(), dataset, [...datapoints, alreadyStale].map((datapoint) => datapoint.id))).toStrictEqual(byId([
        { ...stored(datapoints[0]), staledAt: first, updatedAt: first },
        { ...stored(datapoints[1]), staledAt: second, updatedAt: second },
        { ...stored(datapoints[2]), staledAt: second, updatedAt: second },
        stored(alreadyStale)
      ]))
      expect(await listIds(foreign.datasetName)).toEqual([foreign.id])
      // a stale datapoint is not renamed
      expect(await run(store().renameDatapoints(ws, dataset, [{ id: datapoints[1].id, name: "late" }], Date.now()))).toEqual({ notLive: [datapoints[1].id] })
    })
  })

  describe("datasets", () => {
    const suite = storeForSuite(backend)

    it("lists every dataset with a datapoint, its live datapoints per function, and its newest update", async () => {
      const store = suite.store.datasets
      expect(await run(store.listDatasets(ws))).toEqual([])
      const t = Date.UTC(2025, 5, 1)
      const at = (ms: number) => ({ id: idAt(ms), updatedAt: ms })
      await run(store.insertDatapoints(ws, [
        chatDatapoint({ datasetName: "alpha", functionName: "b_fn", ...at(t) }),
        chatDatapoint({ datasetName: "alpha", functionName: "b_fn", ...at(t + 1) }),
        jsonDatapoint({ datasetName: "alpha", functionName: "a_fn", ...at(t + 2) }),
        chatDatapoint({ datasetName: "alpha", functionName: "c_fn", ...at(t + 3), staledAt: t + 50, updatedAt: t + 50 }),
        chatDatapoint({ datasetName: "Zeta", functionName: "b_fn", ...at(t + 4) }),
        jsonDatapoint({ datasetName: "unicode é 日本", functionName: "a_fn", ...at(t + 5) })
      ]))
      expect(await run(store.staleDatapoints(ws, "Zeta", "all", t + 100))).toBe(1)

      expect(await run(store.listDatasets(ws))).toStrictEqual([
        { name: "Zeta", functions: [], lastUpdated: t + 100 },
        { name: "alpha", functions: [{ functionName: "a_fn", count: 1 }, { functionName: "b_fn", count: 2 }], lastUpdated: t + 50 },
        { name: "unicode é 日本", functions: [{ functionName: "a_fn", count: 1 }], lastUpdated: t + 5 }
      ])
    })
  })

  describe("workspaces", () => {
    const suite = storeForSuite(backend)

    it("keeps two workspaces' datasets of one name apart: reads, changes and summaries see their own workspace only", async () => {
      const store = suite.store.datasets
      const dataset = datasetNamed("train")
      const ours = [chatDatapoint({ datasetName: dataset }), jsonDatapoint({ datasetName: dataset })]
      const theirs = chatDatapoint({ datasetName: dataset })
      await run(store.insertDatapoints("team-a", ours))
      await run(store.insertDatapointsInParts("team-b", [[theirs]]))
      const ids = ours.map((datapoint) => datapoint.id)
      const listed = (workspace: string) =>
        run(store.listDatapoints(workspace, { datasetName: dataset, orderBy: [], limit: 100, offset: 0 })).then((found) => found.map((d) => d.id).sort())
      expect(await listed("team-a")).toEqual([...ids].sort())
      expect(await listed("team-b")).toEqual([theirs.id])
      expect(await run(store.getDatapoints("team-b", dataset, ids))).toEqual([])
      expect(await run(store.getDatapoints("team-b", undefined, ids))).toEqual([])
      expect(await run(store.datapointVersions("team-b", dataset, ids[0]))).toEqual([])
      const now = Date.now()
      expect(await run(store.replaceDatapoints("team-b", dataset, [{ previousId: ids[0], next: chatDatapoint({ datasetName: dataset }) }], now)))
        .toEqual({ notLive: [ids[0]] })
      expect(await run(store.renameDatapoints("team-b", dataset, [{ id: ids[0], name: "theirs" }], now))).toEqual({ notLive: [ids[0]] })
      expect(await run(store.staleDatapoints("team-b", dataset, ids, now))).toBe(0)
      expect(await run(store.staleDatapoints("team-b", dataset, "all", now))).toBe(1)
      expect(await get(store, dataset, ids)).toEqual([])
      // A's are as written: not renamed, not staled, not replaced
      expect(byId(await run(store.getDatapoints("team-a", dataset, ids)))).toStrictEqual(byId(ours.map(stored)))
      expect(await listed("team-a")).toEqual([...ids].sort())
      const summary = async (workspace: string) => (await run(store.listDatasets(workspace))).find((found) => found.name === dataset)
      expect((await summary("team-a"))?.functions.reduce((sum, fn) => sum + fn.count, 0)).toBe(2)
      expect((await summary("team-b"))?.functions).toEqual([])
      expect(await summary(ws)).toBeUndefined()
    })
  })

  describe("servers that cannot be reached", () => {
    const suite = storeForSuite(backend)

    it("fails with a one-line StoreError, not a crash, while the server is cut off", async () => {
      const datapoint = chatDatapoint()
      await withCutOffStore(backend, suite.database, async ({ datasets }) => {
        // what needs no server is answered without it
        expect(await run(datasets.getDatapoints(ws, "haikus", ["nope"]))).toEqual([])
        expect(await run(datasets.datapointVersions(ws, "haikus", "nope"))).toEqual([])
        expect(await run(datasets.staleDatapoints(ws, "haikus", ["nope"], Date.now()))).toBe(0)
        expect(await run(datasets.listDatapoints(ws, { datasetName: "haikus", orderBy: [], limit: 0, offset: 0 }))).toEqual([])

        const started = Date.now()
        for (const effect of [
          datasets.insertDatapoints(ws, [datapoint]),
          datasets.getDatapoints(ws, "haikus", [datapoint.id]),
          datasets.listDatapoints(ws, { datasetName: "haikus", filter: { type: "tag", key: "a", value: "b", comparison_operator: "=" }, search: ["x"], orderBy: [], limit: 10, offset: 0 }),
          datasets.replaceDatapoints(ws, "haikus", [{ previousId: datapoint.id, next: chatDatapoint() }], Date.now()),
          datasets.renameDatapoints(ws, "haikus", [{ id: datapoint.id, name: "x" }], Date.now()),
          datasets.staleDatapoints(ws, "haikus", [datapoint.id], Date.now()),
          datasets.staleDatapoints(ws, "haikus", "all", Date.now()),
          datasets.datapointVersions(ws, "haikus", datapoint.id),
          datasets.listDatasets(ws)
        ]) {
          const error = await failure(effect)
          expect(error).toBeInstanceOf(StoreError)
          expect(error.message).toMatch(new RegExp(`^${engine} \\w+ failed: \\S`))
          expect(error.message).not.toMatch(/\n|    at /)
        }
        expect(Date.now() - started).toBeLessThan(10_000)
      })
    })
  })
})
