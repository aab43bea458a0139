/**
 * Datasets over real HTTP (spec 2.5, 3, 4.5), against a real gateway on ClickHouse and on
 * Postgres alike: datapoints created (checked against their functions, all or nothing), read
 * by id (stale ones too), listed (filters, order, search, paging), updated as new versions,
 * renamed in place, deleted; concurrent updates of one datapoint; datasets that outlive the
 * gateway; and the 503 of a gateway without observability.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { v7 as uuidv7 } from "uuid"
import { call, createKey } from "../support/access.ts"
import { freshDatabase, type TestDatabase } from "../support/databases.ts"
import { chatDatapoint, datasetsConfig, datasetsConfigFiles, jsonDatapoint } from "../support/datasetsConfig.ts"
import { type RunningGateway, startGateway } from "../support/gateway.ts"
import { backends, uuidV7Pattern } from "../support/observability.ts"

interface Answer {
  readonly status: number
  readonly body: any
}

const send = async (gateway: RunningGateway, method: string, route: string, body?: unknown): Promise<Answer> => {
  const response = await fetch(gateway.url + route, {
    method,
    ...(body === undefined ? {} : { headers: { "content-type": "application/json" }, body: JSON.stringify(body) })
  })
  const text = await response.text()
  let parsed: unknown = text
  try {
    parsed = JSON.parse(text)
  } catch {
    // not JSON: kept as text for the assertion to show
  }
  return { status: response.status, body: parsed }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** every route of the group, by method and path, for dataset `name` (URL-encoded) */
const routesOf = (name: string): ReadonlyArray<readonly [string, string, unknown]> => {
  const at = `/v1/datasets/${encodeURIComponent(name)}`
  return [
    ["POST", `${at}/datapoints`, { datapoints: [chatDatapoint("hi")] }],
    ["POST", `${at}/get_datapoints`, { ids: [] }],
    ["POST", `${at}/list_datapoints`, {}],
    ["PATCH", `${at}/datapoints`, { datapoints: [{ id: uuidv7(), type: "chat", name: "x" }] }],
    ["PATCH", `${at}/datapoints/metadata`, { datapoints: [{ id: uuidv7(), name: "x" }] }],
    ["DELETE", `${at}/datapoints`, { ids: [uuidv7()] }],
    ["DELETE", at, undefined],
    ["POST", `${at}/from_inferences`, { type: "inference_ids", inference_ids: [uuidv7()] }],
    ["GET", `${at}/datapoints/export`, undefined],
    ["POST", `${at}/datapoints/import`, "{}"]
  ]
}

describe.each(backends)("datasets over HTTP on %s", (backend) => {
  let database: TestDatabase
  let gateway: RunningGateway

  const start = () =>
    startGateway({ config: datasetsConfig, files: datasetsConfigFiles, env: { GATEWAY_ANALYTICS_DB_URL: database.url } })

  /** creates datapoints, expecting a 200; their ids */
  const create = async (dataset: string, datapoints: ReadonlyArray<unknown>): Promise<Array<string>> => {
    const answer = await send(gateway, "POST", `/v1/datasets/${dataset}/datapoints`, { datapoints })
    expect(answer.status, JSON.stringify(answer.body)).toBe(200)
    return answer.body.ids
  }
  const get = async (dataset: string, ids: ReadonlyArray<string>): Promise<Array<any>> => {
    const answer = await send(gateway, "POST", `/v1/datasets/${dataset}/get_datapoints`, { ids })
    expect(answer.status, JSON.stringify(answer.body)).toBe(200)
    return answer.body.datapoints
  }
  const list = async (dataset: string, query: Record<string, unknown> = {}): Promise<Array<any>> => {
    const answer = await send(gateway, "POST", `/v1/datasets/${dataset}/list_datapoints`, query)
    expect(answer.status, JSON.stringify(answer.body)).toBe(200)
    return answer.body.datapoints
  }
  const listIds = async (dataset: string, query: Record<string, unknown> = {}) => (await list(dataset, query)).map((d) => d.id)
  const update = (dataset: string, datapoints: ReadonlyArray<unknown>) =>
    send(gateway, "PATCH", `/v1/datasets/${dataset}/datapoints`, { datapoints })
  const updated = async (dataset: string, datapoints: ReadonlyArray<unknown>): Promise<Array<string>> => {
    const answer = await update(dataset, datapoints)
    expect(answer.status, JSON.stringify(answer.body)).toBe(200)
    return answer.body.ids
  }
  const datasets = async (): Promise<Array<any>> => {
    const answer = await send(gateway, "GET", "/v1/datasets")
    expect(answer.status, JSON.stringify(answer.body)).toBe(200)
    return answer.body.datasets
  }
  /** a 4xx whose message names `path`; then nothing is stored in `dataset` */
  const expectRefused = async (answer: Answer, status: number, path: string, dataset?: string) => {
    expect(answer.status, JSON.stringify(answer.body)).toBe(status)
    expect(answer.body.error).toContain(path)
    if (dataset !== undefined) {
      expect(await listIds(dataset)).toEqual([])
      expect((await datasets()).map((d) => d.name)).not.toContain(dataset)
    }
  }

  beforeAll(async () => {
    database = await freshDatabase(backend)
    gateway = await start()
  })
  afterAll(async () => {
    await gateway?.stop()
    await database?.drop()
  })

  it("creates chat and json datapoints: UUIDv7 ids in input order, stored as checked, the dataset listed", async () => {
    const episode = uuidv7()
    const ids = await create("created", [
      chatDatapoint("first", { tags: { team: "red" } }),
      jsonDatapoint("second", { name: "the json one", episode_id: episode }),
      chatDatapoint("third", {
        output: [{ type: "tool_call", id: "c2", name: "lookup", arguments: { q: "x" } }],
        additional_tools: [{ name: "lookup", description: "look up", parameters: { type: "object", properties: { q: { type: "string" } } } }],
        allowed_tools: ["get_temperature", "lookup"],
        tool_choice: { specific: "lookup" },
        parallel_tool_calls: true
      })
    ])
    expect(ids).toHaveLength(3)
    for (const id of ids) expect(id).toMatch(uuidV7Pattern)
    expect([...ids].sort()).toEqual(ids)

    const [chat, json, third] = await get("created", ids)
    expect(chat).toEqual({
      id: ids[0],
      type: "chat",
      dataset_name: "created",
      function_name: "assistant",
      input: { system: { assistant_name: "Ada" }, messages: [{ role: "user", content: "first" }] },
      // tool calls stored as an inference answers them
      output: [
        { type: "text", text: "Checking." },
        {
          type: "tool_call",
          id: "call_1",
          name: "get_temperature",
          arguments: { location: "Paris" },
          raw_name: "get_temperature",
          raw_arguments: JSON.stringify({ location: "Paris" })
        }
      ],
      episode_id: null,
      tags: { team: "red" },
      name: null,
      allowed_tools: null,
      tool_choice: null,
      parallel_tool_calls: false,
      additional_tools: null,
      source_inference_id: null,
      is_custom: true,
      staled_at: null,
      updated_at: expect.any(String),
      created_at: expect.any(String)
    })
    expect(Date.parse(chat.created_at)).toBe(parseInt(ids[0].slice(0, 8) + ids[0].slice(9, 13), 16))
    expect(json).toMatchObject({
      id: ids[1],
      type: "json",
      function_name: "extract",
      output: { answer: "42" },
      output_schema: null,
      episode_id: episode,
      name: "the json one",
      tags: {},
      is_custom: true,
      staled_at: null
    })
    expect(json).not.toHaveProperty("allowed_tools")
    expect(third).toMatchObject({
      allowed_tools: ["get_temperature", "lookup"],
      tool_choice: { specific: "lookup" },
      parallel_tool_calls: true,
      additional_tools: [expect.objectContaining({ name: "lookup" })],
      output: [{ type: "tool_call", id: "c2", name: "lookup", arguments: { q: "x" }, raw_name: "lookup", raw_arguments: `{"q":"x"}` }]
    })

    const dataset = (await datasets()).find((d) => d.name === "created")
    expect(dataset).toMatchObject({ name: "created", datapoint_count: 3, last_updated: expect.any(String) })
    expect([...dataset.functions].sort((a: any, b: any) => a.function_name.localeCompare(b.function_name))).toEqual([
      { function_name: "assistant", datapoint_count: 2 },
      { function_name: "extract", datapoint_count: 1 }
    ])
  })

  it("accepts the input blocks a function takes: arguments for schemas, templates of its variants, thoughts from the assistant", async () => {
    const ids = await create("inputs", [
      {
        type: "chat",
        function_name: "templated",
        input: {
          messages: [
            { role: "user", content: [{ type: "text", arguments: { city: "Oslo" } }, { type: "template", name: "greeting", arguments: { who: "you" } }] },
            { role: "assistant", content: [{ type: "thought", text: "hmm" }, { type: "text", text: "Cold." }] },
            { role: "user", content: [{ type: "raw_text", value: "raw" }] }
          ]
        }
      },
      { type: "chat", function_name: "plain", input: { system: "Be brief.", messages: [{ role: "user", content: "hi" }] }, output: null }
    ])
    const [templated, plain] = await get("inputs", ids)
    expect(templated.input.messages[0].content[0]).toEqual({ type: "text", arguments: { city: "Oslo" } })
    expect(templated.output).toBeNull()
    expect(plain.input).toEqual({ system: "Be brief.", messages: [{ role: "user", content: "hi" }] })
  })

  it("get_datapoints answers in the order asked, stale ones included, ids of no datapoint of the dataset left out", async () => {
    const ids = await create("got", [chatDatapoint("a"), chatDatapoint("b"), jsonDatapoint("c")])
    const [elsewhere] = await create("got_other", [chatDatapoint("d")])
    const deleted = await send(gateway, "DELETE", "/v1/datasets/got/datapoints", { ids: [ids[1]] })
    expect(deleted.body).toEqual({ num_deleted_datapoints: 1 })
    const found = await get("got", [ids[2], uuidv7(), ids[1], elsewhere, ids[0].toUpperCase()])
    expect(found.map((d) => d.id)).toEqual([ids[2], ids[1], ids[0]])
    expect(found[1].staled_at).toEqual(expect.any(String))
    expect(found[0].staled_at).toBeNull()
    expect(await get("got", [])).toEqual([])
    await expectRefused(await send(gateway, "POST", "/v1/datasets/got/get_datapoints", { ids: [ids[0], "nope"] }), 400, "ids[1]")
    await expectRefused(await send(gateway, "POST", "/v1/datasets/got/get_datapoints", {}), 400, "ids")
  })

  describe("list_datapoints", () => {
    const dataset = "listed"
    /** oldest first */
    const made: Array<{ id: string; created: string }> = []
    const newestFirst = (...indexes: ReadonlyArray<number>) => [...indexes].sort((a, b) => b - a).map((i) => made[i].id)
    const inOrder = (...indexes: ReadonlyArray<number>) => indexes.map((i) => made[i].id)

    beforeAll(async () => {
      const datapoints = [
        chatDatapoint("the quick brown fox", { tags: { team: "red", n: "0" } }),
        chatDatapoint("a lazy dog sleeps", { tags: { team: "red", n: "1" } }),
        chatDatapoint("quick quick fox and dog", { tags: { team: "blue", n: "2" } }),
        jsonDatapoint("nothing to see", { tags: { team: "blue", n: "3" } }),
        chatDatapoint("brown bear", { tags: { team: "green", n: "4", flag: "x" } })
      ]
      for (const datapoint of datapoints) {
        const [id] = await create(dataset, [datapoint])
        made.push({ id, created: "" })
        // distinct milliseconds, so that time filters tell them apart
        await sleep(5)
      }
      const stored = await get(dataset, made.map((m) => m.id))
      stored.forEach((datapoint, i) => (made[i].created = datapoint.created_at))
    })

    it("lists newest first, by function, with limit (default 20) and offset", async () => {
      expect(await listIds(dataset)).toEqual(newestFirst(0, 1, 2, 3, 4))
      expect(await listIds(dataset, { function_name: "extract" })).toEqual(newestFirst(3))
      expect(await listIds(dataset, { function_name: "assistant" })).toEqual(newestFirst(0, 1, 2, 4))
      expect(await listIds(dataset, { function_name: "missing" })).toEqual([])
      expect(await listIds(dataset, { limit: 2 })).toEqual(newestFirst(3, 4))
      expect(await listIds(dataset, { limit: 2, offset: 2 })).toEqual(newestFirst(1, 2))
      expect(await listIds(dataset, { offset: 4 })).toEqual(newestFirst(0))
      expect(await listIds("no_such_dataset")).toEqual([])
      const many = await create("many", Array.from({ length: 25 }, (_, i) => chatDatapoint(`n${i}`)))
      const page = await listIds("many")
      expect(page).toHaveLength(20)
      expect(page).toEqual([...many].reverse().slice(0, 20))
      for (const limit of [0, 1001, 1.5]) {
        await expectRefused(await send(gateway, "POST", `/v1/datasets/${dataset}/list_datapoints`, { limit }), 400, "limit")
      }
      await expectRefused(await send(gateway, "POST", `/v1/datasets/${dataset}/list_datapoints`, { offset: -1 }), 400, "offset")
    })

    it("filters on tags (= and !=), time, and their and/or/not", async () => {
      const filtered = (filter: unknown) => listIds(dataset, { filter })
      expect(await filtered({ type: "tag", key: "team", value: "red" })).toEqual(newestFirst(0, 1))
      expect(await filtered({ type: "tag", key: "team", value: "red", comparison_operator: "!=" })).toEqual(newestFirst(2, 3, 4))
      expect(await filtered({ type: "tag", key: "flag", value: "x" })).toEqual(newestFirst(4))
      expect(await filtered({ type: "not", child: { type: "tag", key: "flag", value: "x" } })).toEqual(newestFirst(0, 1, 2, 3))
      expect(await filtered({ type: "time", time: made[2].created, comparison_operator: ">=" })).toEqual(newestFirst(2, 3, 4))
      expect(await filtered({ type: "time", time: made[2].created, comparison_operator: "<" })).toEqual(newestFirst(0, 1))
      expect(await filtered({ type: "time", time: made[2].created, comparison_operator: "=" })).toEqual(newestFirst(2))
      expect(await filtered({ type: "time", time: made[2].created, comparison_operator: "!=" })).toEqual(newestFirst(0, 1, 3, 4))
      expect(await filtered({
        type: "and",
        children: [{ type: "tag", key: "team", value: "blue" }, { type: "time", time: made[3].created, comparison_operator: "<=" }]
      })).toEqual(newestFirst(2, 3))
      expect(await filtered({
        type: "or",
        children: [{ type: "tag", key: "n", value: "0" }, { type: "tag", key: "n", value: "4" }]
      })).toEqual(newestFirst(0, 4))
      expect(await filtered({ type: "and", children: [] })).toEqual(newestFirst(0, 1, 2, 3, 4))
      expect(await filtered({ type: "or", children: [] })).toEqual([])
      const bad = (filter: unknown) => send(gateway, "POST", `/v1/datasets/${dataset}/list_datapoints`, { filter })
      await expectRefused(await bad({ type: "time", time: "yesterday", comparison_operator: "<" }), 400, "filter.time")
      await expectRefused(await bad({ type: "not", child: { type: "tag", key: "a\u0000", value: "b" } }), 400, "filter.child.key")
      await expectRefused(await bad({ type: "metric", key: "a" }), 400, "filter")
      let deep: unknown = { type: "tag", key: "a", value: "b" }
      for (let i = 0; i < 40; i++) deep = { type: "not", child: deep }
      await expectRefused(await bad(deep), 400, "filter")
    })

    it("orders by timestamp either way", async () => {
      expect(await listIds(dataset, { order_by: [{ by: "timestamp", direction: "ascending" }] })).toEqual(inOrder(0, 1, 2, 3, 4))
      expect(await listIds(dataset, { order_by: [{ by: "timestamp", direction: "descending" }] })).toEqual(newestFirst(0, 1, 2, 3, 4))
      expect(await listIds(dataset, { order_by: [{ by: "timestamp", direction: "ascending" }], limit: 2, offset: 1 })).toEqual(inOrder(1, 2))
    })

    it("searches the words of the input and output, ranked by search_relevance", async () => {
      // 0 holds quick, brown and fox; 2 quick and fox; 4 brown
      expect(await listIds(dataset, { search_query: "Quick brown FOX" })).toEqual(newestFirst(0, 2, 4))
      expect(await listIds(dataset, { search_query: "quick brown fox", order_by: [{ by: "search_relevance" }] })).toEqual(inOrder(0, 2, 4))
      expect(await listIds(dataset, { search_query: "dog", order_by: [{ by: "search_relevance" }, { by: "timestamp", direction: "ascending" }] }))
        .toEqual(inOrder(1, 2))
      expect(await listIds(dataset, { search_query: "zebra" })).toEqual([])
      expect(await listIds(dataset, { search_query: "fox", filter: { type: "tag", key: "team", value: "blue" } })).toEqual(newestFirst(2))
      const listing = (query: unknown) => send(gateway, "POST", `/v1/datasets/${dataset}/list_datapoints`, query)
      await expectRefused(await listing({ order_by: [{ by: "search_relevance" }] }), 400, "order_by[0]")
      await expectRefused(await listing({ search_query: "   " }), 400, "search_query")
      await expectRefused(await listing({ order_by: [{ by: "name" }] }), 400, "order_by[0]")
    })

    it("pages after an id, oldest first", async () => {
      expect(await listIds(dataset, { after: made[1].id })).toEqual(inOrder(2, 3, 4))
      expect(await listIds(dataset, { after: made[1].id, limit: 2 })).toEqual(inOrder(2, 3))
      expect(await listIds(dataset, { after: made[4].id })).toEqual([])
      const listing = (query: unknown) => send(gateway, "POST", `/v1/datasets/${dataset}/list_datapoints`, query)
      await expectRefused(await listing({ after: "nope" }), 400, "after")
      await expectRefused(await listing({ after: made[1].id, order_by: [{ by: "timestamp", direction: "ascending" }] }), 400, "after")
    })
  })

  it("moves datapoints through their states: an update makes a new version and stales the old, a rename keeps the id, a delete stales", async () => {
    const dataset = "states"
    const [first, second, third] = await create(dataset, [chatDatapoint("one"), chatDatapoint("two"), jsonDatapoint("three")])
    const [before] = await get(dataset, [first])

    // update: a new live version with a new id, the old one stale
    const [next] = await updated(dataset, [{ id: first, type: "chat", tags: { v: "2" } }])
    expect(next).toMatch(uuidV7Pattern)
    expect(next).not.toBe(first)
    const [old, current] = await get(dataset, [first, next])
    expect(old).toMatchObject({ id: first, tags: {}, staled_at: expect.any(String) })
    expect(current).toMatchObject({
      id: next,
      tags: { v: "2" },
      input: before.input,
      output: before.output,
      staled_at: null,
      is_custom: true,
      source_inference_id: before.source_inference_id
    })
    expect((await listIds(dataset)).sort()).toEqual([next, second, third].sort())
    // the stale version cannot be updated again: 409, nothing written
    await expectRefused(await update(dataset, [{ id: first, type: "chat", tags: {} }]), 409, "datapoints[0].id")
    expect(await listIds(dataset)).toHaveLength(3)

    // rename: same id, in place, no new version
    const renamed = await send(gateway, "PATCH", `/v1/datasets/${dataset}/datapoints/metadata`, {
      datapoints: [{ id: second, name: "Second" }, { id: third }]
    })
    expect(renamed.status, JSON.stringify(renamed.body)).toBe(200)
    expect(renamed.body).toEqual({ ids: [second, third] })
    const [secondNow, thirdNow] = await get(dataset, [second, third])
    expect(secondNow).toMatchObject({ id: second, name: "Second", staled_at: null })
    expect(thirdNow).toMatchObject({ id: third, name: null, staled_at: null })
    expect(Date.parse(secondNow.updated_at)).toBeGreaterThanOrEqual(Date.parse(secondNow.created_at))
    expect((await listIds(dataset)).sort()).toEqual([next, second, third].sort())
    const cleared = await send(gateway, "PATCH", `/v1/datasets/${dataset}/datapoints/metadata`, { datapoints: [{ id: second, name: null }] })
    expect(cleared.status).toBe(200)
    expect((await get(dataset, [second]))[0].name).toBeNull()
    // a stale one has no live version to rename
    await expectRefused(
      await send(gateway, "PATCH", `/v1/datasets/${dataset}/datapoints/metadata`, { datapoints: [{ id: first, name: "x" }] }),
      404,
      "datapoints[0].id"
    )

    // delete: stale, still read by id, never listed; a second delete counts nothing
    const deleted = await send(gateway, "DELETE", `/v1/datasets/${dataset}/datapoints`, { ids: [second, uuidv7()] })
    expect(deleted.status).toBe(200)
    expect(deleted.body).toEqual({ num_deleted_datapoints: 1 })
    expect((await get(dataset, [second]))[0].staled_at).toEqual(expect.any(String))
    expect((await listIds(dataset)).sort()).toEqual([next, third].sort())
    expect((await send(gateway, "DELETE", `/v1/datasets/${dataset}/datapoints`, { ids: [second] })).body).toEqual({ num_deleted_datapoints: 0 })
    await expectRefused(await send(gateway, "DELETE", `/v1/datasets/${dataset}/datapoints`, { ids: ["nope"] }), 400, "ids[0]")

    // delete the dataset: every live datapoint stale, all still read by id
    const [elsewhere] = await create("states_other", [chatDatapoint("kept")])
    const dropped = await send(gateway, "DELETE", `/v1/datasets/${dataset}`)
    expect(dropped.status).toBe(200)
    expect(dropped.body).toEqual({ num_deleted_datapoints: 2 })
    expect(await listIds(dataset)).toEqual([])
    expect((await get(dataset, [first, next, second, third])).map((d) => d.staled_at === null)).toEqual([false, false, false, false])
    expect((await send(gateway, "DELETE", `/v1/datasets/${dataset}`)).body).toEqual({ num_deleted_datapoints: 0 })
    expect(await listIds("states_other")).toEqual([elsewhere])
    const summary = (await datasets()).find((d) => d.name === dataset)
    expect(summary === undefined || summary.datapoint_count === 0).toBe(true)
  })

  it("answers a datapoint's history for the UI: its versions newest first from any of their ids, stale ones marked", async () => {
    const dataset = "history"
    const [first, other] = await create(dataset, [chatDatapoint("one"), chatDatapoint("two")])
    const [second] = await updated(dataset, [{ id: first, type: "chat", name: "second" }])
    const [third] = await updated(dataset, [{ id: second, type: "chat", tags: { v: "3" } }])
    const history = (id: string, name = dataset) => send(gateway, "GET", `/v1/ui/datasets/${name}/datapoints/${id}/history`)

    for (const id of [first, second, third]) {
      const answer = await history(id)
      expect(answer.status, JSON.stringify(answer.body)).toBe(200)
      expect(answer.body.versions).toEqual(await get(dataset, [third, second, first]))
    }
    const versions = (await history(first)).body.versions
    expect(versions.map((version: any) => version.staled_at === null)).toEqual([true, false, false])
    expect(versions.map((version: any) => version.name)).toEqual(["second", "second", null])
    expect((await history(other)).body.versions.map((version: any) => version.id)).toEqual([other])

    // the history outlives a delete
    expect((await send(gateway, "DELETE", `/v1/datasets/${dataset}/datapoints`, { ids: [third] })).status).toBe(200)
    expect((await history(first)).body.versions.map((version: any) => version.staled_at === null)).toEqual([false, false, false])

    await expectRefused(await history(uuidv7()), 404, "datapoint_id")
    await expectRefused(await history(first, "elsewhere"), 404, "datapoint_id")
    await expectRefused(await history("nope"), 400, "datapoint_id")
    await expectRefused(await history(first, "..."), 400, "dataset_name")
  })

  it("updates by the rules: an omitted field stays, null clears, a value replaces, tags replace all", async () => {
    const dataset = "rules"
    const episode = uuidv7()
    const [chat, json] = await create(dataset, [
      chatDatapoint("rules", {
        tags: { a: "1", b: "2" },
        name: "named",
        episode_id: episode,
        allowed_tools: ["get_temperature"],
        tool_choice: "auto",
        parallel_tool_calls: true
      }),
      jsonDatapoint("json rules", { tags: { a: "1" }, name: "json" })
    ])
    const [original] = await get(dataset, [chat])

    const [chat2] = await updated(dataset, [{ id: chat, type: "chat", tags: { c: "3" }, name: null, tool_choice: null }])
    const [after] = await get(dataset, [chat2])
    expect(after).toMatchObject({
      tags: { c: "3" },
      name: null,
      tool_choice: null,
      allowed_tools: ["get_temperature"],
      parallel_tool_calls: true,
      episode_id: episode,
      input: original.input,
      output: original.output
    })

    const input = { system: { assistant_name: "Bo" }, messages: [{ role: "user", content: "changed" }] }
    const [chat3] = await updated(dataset, [{ id: chat2, type: "chat", input, output: null, allowed_tools: null, parallel_tool_calls: null, episode_id: null }])
    expect((await get(dataset, [chat3]))[0]).toMatchObject({
      input,
      output: null,
      allowed_tools: null,
      parallel_tool_calls: null,
      episode_id: null,
      tags: { c: "3" }
    })
    const [chat4] = await updated(dataset, [{ id: chat3, type: "chat", output: [{ type: "text", text: "new" }], name: "again" }])
    expect((await get(dataset, [chat4]))[0]).toMatchObject({ output: [{ type: "text", text: "new" }], name: "again", input })

    // json: a schema of its own, an output that fits it; then the output cleared
    const ownSchema = { type: "object", properties: { score: { type: "number" } }, required: ["score"] }
    await expectRefused(await update(dataset, [{ id: json, type: "json", output_schema: ownSchema }]), 400, "datapoints[0].output")
    const [json2] = await updated(dataset, [{ id: json, type: "json", output_schema: ownSchema, output: { score: 1 } }])
    expect((await get(dataset, [json2]))[0]).toMatchObject({ output: { score: 1 }, output_schema: ownSchema, tags: { a: "1" }, name: "json" })
    await expectRefused(await update(dataset, [{ id: json2, type: "json", output: { score: "high" } }]), 400, "datapoints[0].output")
    const [json3] = await updated(dataset, [{ id: json2, type: "json", output: null, tags: {} }])
    expect((await get(dataset, [json3]))[0]).toMatchObject({ output: null, output_schema: ownSchema, tags: {} })

    // several at once, in input order
    const both = await updated(dataset, [{ id: json3, type: "json", name: "j" }, { id: chat4, type: "chat", name: "c" }])
    expect((await get(dataset, both)).map((d) => d.name)).toEqual(["j", "c"])
    // the only live versions, in id order
    expect(await listIds(dataset, { after: "00000000-0000-0000-0000-000000000000" })).toEqual(both)
  })

  it("refuses updates naming no live datapoint of the dataset, or a datapoint twice, writing nothing", async () => {
    const dataset = "update_refused"
    const [a, b] = await create(dataset, [chatDatapoint("a"), jsonDatapoint("b")])
    const [elsewhere] = await create("update_refused_other", [chatDatapoint("c")])
    const unchanged = async () => expect((await listIds(dataset)).sort()).toEqual([a, b].sort())
    await expectRefused(await update(dataset, [{ id: a, type: "chat", name: "x" }, { id: uuidv7(), type: "chat" }]), 404, "datapoints[1].id")
    await unchanged()
    await expectRefused(await update(dataset, [{ id: elsewhere, type: "chat", name: "x" }]), 404, "datapoints[0].id")
    expect(await listIds("update_refused_other")).toEqual([elsewhere])
    await expectRefused(await update(dataset, [{ id: a, type: "chat", name: "x" }, { id: "nope", type: "chat" }]), 400, "datapoints[1].id")
    await expectRefused(await update(dataset, [{ id: a, type: "chat", name: "x" }, { id: a, type: "chat", name: "y" }]), 400, "datapoints[1].id")
    await expectRefused(await update(dataset, [{ id: b, type: "chat", name: "x" }]), 400, "datapoints[0].type")
    await expectRefused(await update(dataset, [{ id: a, type: "chat", tool_choice: { specific: "nope" } }]), 400, "datapoints[0].tool_choice")
    await expectRefused(await update(dataset, []), 400, "datapoints")
    await expectRefused(await send(gateway, "PATCH", `/v1/datasets/${dataset}/datapoints/metadata`, { datapoints: [] }), 400, "datapoints")
    await expectRefused(
      await send(gateway, "PATCH", `/v1/datasets/${dataset}/datapoints/metadata`, { datapoints: [{ id: a, name: "x" }, { id: uuidv7(), name: "y" }] }),
      404,
      "datapoints[1].id"
    )
    await unchanged()
    expect((await get(dataset, [a]))[0]).toMatchObject({ name: null, staled_at: null })
  })

  it("refuses datapoints that do not fit their function, naming the field, and stores none of them", async () => {
    const good = chatDatapoint("good")
    const refused = async (bad: Record<string, unknown>, status: number, path: string) => {
      const dataset = `refused_${Math.random().toString(36).slice(2, 10)}`
      const answer = await send(gateway, "POST", `/v1/datasets/${dataset}/datapoints`, { datapoints: [good, bad] })
      await expectRefused(answer, status, path, dataset)
    }
    const templated = (content: unknown) => ({ type: "chat", function_name: "templated", input: { messages: [{ role: "user", content }] } })
    await refused(chatDatapoint("x", { function_name: "nope" }), 404, "datapoints[1].function_name")
    await refused(jsonDatapoint("x", { function_name: "assistant" }), 400, "datapoints[1].type")
    await refused(chatDatapoint("x", { function_name: "extract" }), 400, "datapoints[1].type")
    await refused(chatDatapoint("x", { input: { system: { assistant_name: 5 }, messages: [] } }), 400, "datapoints[1].input.system")
    await refused(chatDatapoint("x", { input: { system: "a string", messages: [] } }), 400, "datapoints[1].input.system")
    await refused(templated("a string for a role with a schema"), 400, "datapoints[1].input.messages[0].content")
    await refused(templated([{ type: "text", text: "text for a role with a schema" }]), 400, "datapoints[1].input.messages[0].content[0].text")
    await refused(templated([{ type: "text", arguments: { town: "Oslo" } }]), 400, "datapoints[1].input.messages[0].content[0].arguments")
    await refused(templated([{ type: "template", name: "nope", arguments: {} }]), 400, "datapoints[1].input.messages[0].content[0].name")
    await refused(templated([{ type: "thought", text: "a user does not think aloud here" }]), 400, "datapoints[1].input.messages[0].content[0].type")
    await refused(
      { type: "chat", function_name: "plain", input: { messages: [{ role: "assistant", content: [{ type: "text", arguments: { a: 1 } }] }] } },
      400,
      "datapoints[1].input.messages[0].content[0].arguments"
    )
    await refused(jsonDatapoint("x", { output: { answer: 42 } }), 400, "datapoints[1].output")
    await refused(jsonDatapoint("x", { output: { score: 1 }, output_schema: { type: "object", required: ["answer"] } }), 400, "datapoints[1].output")
    await refused(jsonDatapoint("x", { output_schema: { type: "nonsense" } }), 400, "datapoints[1].output_schema")
    await refused(chatDatapoint("x", { output: [{ type: "text" }] }), 400, "datapoints[1].output[0]")
    await refused(chatDatapoint("x", { output: [{ type: "image", url: "x" }] }), 400, "datapoints[1].output[0]")
    await refused(chatDatapoint("x", { output: [{ type: "tool_call", id: "1", name: "nope", arguments: {} }] }), 400, "datapoints[1].output[0].name")
    await refused(
      chatDatapoint("x", { output: [{ type: "tool_call", id: "1", name: "get_temperature", arguments: { city: "Paris" } }] }),
      400,
      "datapoints[1].output[0].arguments"
    )
    // a tool the function does not offer, unless allowed
    await refused(
      chatDatapoint("x", { output: [{ type: "tool_call", id: "1", name: "get_humidity", arguments: { location: "Paris" } }] }),
      400,
      "datapoints[1].output[0].name"
    )
    await refused(chatDatapoint("x", { allowed_tools: ["nope"] }), 400, "datapoints[1].allowed_tools[0]")
    await refused(chatDatapoint("x", { tool_choice: { specific: "nope" } }), 400, "datapoints[1].tool_choice")
    await refused(chatDatapoint("x", { allowed_tools: ["get_humidity"] }), 400, "datapoints[1].output[1].name")
    await refused(chatDatapoint("x", { episode_id: "not-a-uuid" }), 400, "datapoints[1].episode_id")
    await refused(chatDatapoint("x", { tags: { a: "b\u0000" } }), 400, "datapoints[1].tags")
    await refused(chatDatapoint("x", { name: "a\u0000" }), 400, "datapoints[1].name")
    await refused(chatDatapoint("x", { unknown_field: 1 }), 400, "datapoints[1]")
    await refused(jsonDatapoint("x", { allowed_tools: [] }), 400, "datapoints[1]")
    await expectRefused(await send(gateway, "POST", "/v1/datasets/empty/datapoints", { datapoints: [] }), 400, "datapoints", "empty")

    // a configured tool the function does not list becomes callable by being allowed, as in an inference
    const [allowed] = await create("allowed", [
      chatDatapoint("x", {
        allowed_tools: ["get_humidity"],
        output: [{ type: "tool_call", id: "1", name: "get_humidity", arguments: { location: "Oslo" } }]
      })
    ])
    expect((await get("allowed", [allowed]))[0].output[0]).toMatchObject({ name: "get_humidity", raw_name: "get_humidity" })
  })

  it("answers 400 for a name that is not a dataset name, on every route", async () => {
    for (const name of ["has space", "...", "a".repeat(129), "semi;colon", "é"]) {
      for (const [method, route, body] of routesOf(name)) {
        const answer = await send(gateway, method, route, body)
        expect(answer.status, `${method} ${route}: ${JSON.stringify(answer.body)}`).toBe(400)
        expect(answer.body.error).toContain("dataset_name")
      }
    }
    expect((await datasets()).map((d) => d.name)).not.toContain("has space")
    // the longest name, and the other characters a name may hold
    for (const name of ["a".repeat(128), "Mixed-Case_1.2", ".hidden"]) {
      const [id] = await create(name, [chatDatapoint("named")])
      expect(await listIds(name)).toEqual([id])
    }
  })

  it("answers the same 400 for a name longer than any path segment the router used to match, on every route", async () => {
    const refusal = (name: string) =>
      `dataset_name: "${name.slice(0, 140)}" is not a dataset name (1 to 128 characters among letters, digits, \`_\`, \`-\` and \`.\`, not only dots)`
    // 1025 characters was the router's limit; 10,000 fit in Node's request head; "é" is 6 characters encoded
    for (const name of ["a".repeat(1025), "b".repeat(10_000), "é".repeat(1500)]) {
      const routes = [
        ...routesOf(name),
        ["GET", `/v1/ui/datasets/${encodeURIComponent(name)}/datapoints/${uuidv7()}/history`, undefined] as const
      ]
      for (const [method, route, body] of routes) {
        const answer = await send(gateway, method, route, body)
        expect(answer.status, `${method} ${route.slice(0, 60)}...: ${JSON.stringify(answer.body).slice(0, 200)}`).toBe(400)
        expect(answer.body).toEqual({ error: refusal(name) })
      }
    }
  })

  it("lets exactly one of concurrent updates of a datapoint win; the others get 409 and write nothing", async () => {
    const dataset = "raced"
    const [id] = await create(dataset, [chatDatapoint("race")])
    const answers = await Promise.all(Array.from({ length: 5 }, (_, i) => update(dataset, [{ id, type: "chat", tags: { writer: String(i) } }])))
    const won = answers.filter((answer) => answer.status === 200)
    const lost = answers.filter((answer) => answer.status === 409)
    expect(won, JSON.stringify(answers)).toHaveLength(1)
    expect(lost).toHaveLength(4)
    for (const answer of lost) expect(answer.body.error).toContain("datapoints[0].id")
    const live = await list(dataset)
    expect(live.map((d) => d.id)).toEqual(won[0].body.ids)
    expect(Object.keys(live[0].tags)).toEqual(["writer"])
    expect((await get(dataset, [id]))[0].staled_at).toEqual(expect.any(String))
  })

  it("keeps datasets across a restart of the gateway", async () => {
    const ids = await create("durable", [chatDatapoint("kept"), jsonDatapoint("also kept")])
    const [renewed] = await updated("durable", [{ id: ids[0], type: "chat", name: "renewed" }])
    const before = await get("durable", [...ids, renewed])
    expect(await gateway.stop()).toBe(0)
    gateway = await start()
    expect(await get("durable", [...ids, renewed])).toEqual(before)
    expect((await listIds("durable")).sort()).toEqual([ids[1], renewed].sort())
    expect((await datasets()).find((d) => d.name === "durable")).toMatchObject({ datapoint_count: 2 })
  })
})

describe("datasets without observability", () => {
  let gateway: RunningGateway
  beforeAll(async () => {
    gateway = await startGateway({ config: datasetsConfig, files: datasetsConfigFiles, env: { GATEWAY_ANALYTICS_DB_URL: undefined } })
  })
  afterAll(async () => {
    await gateway?.stop()
  })

  it("answers 503 on every route, naming what would turn it on", async () => {
    const answer = await send(gateway, "GET", "/v1/datasets")
    expect(answer.status).toBe(503)
    expect(answer.body.error).toContain("GATEWAY_ANALYTICS_DB_URL")
    for (const [method, route, body] of routesOf("offline").slice(0, 7)) {
      const other = await send(gateway, method, route, body)
      expect(other.status, `${method} ${route}: ${JSON.stringify(other.body)}`).toBe(503)
      expect(other.body.error).toContain("observability is disabled")
    }
  })
})

describe("datasets with authentication on", () => {
  let database: TestDatabase
  let gateway: RunningGateway
  beforeAll(async () => {
    database = await freshDatabase("postgres")
    gateway = await startGateway({
      config: `${datasetsConfig}\n[gateway.auth]\nenabled = true\n`,
      files: datasetsConfigFiles,
      env: { GATEWAY_ANALYTICS_DB_URL: database.url, GATEWAY_RELATIONAL_DB_URL: database.url }
    })
  })
  afterAll(async () => {
    await gateway?.stop()
    await database?.drop()
  })

  it("needs an API key on the dataset routes", async () => {
    expect((await call(gateway, "GET", "/v1/datasets")).status).toBe(401)
    expect((await call(gateway, "POST", "/v1/datasets/keyed/list_datapoints", { body: {} })).status).toBe(401)
    const key = await createKey(database.url)
    const listed = await call(gateway, "POST", "/v1/datasets/keyed/list_datapoints", { body: {}, key })
    expect(listed.status, listed.text).toBe(200)
    expect(listed.body).toEqual({ datapoints: [] })
  })

  it("answers a datapoint's history to an admin key only", async () => {
    const route = `/v1/ui/datasets/keyed/datapoints/${uuidv7()}/history`
    expect((await call(gateway, "GET", route)).status).toBe(401)
    expect((await call(gateway, "GET", route, { key: await createKey(database.url) })).status).toBe(403)
    const admin = await call(gateway, "GET", route, { key: await createKey(database.url, ["--admin"]) })
    expect(admin.status, admin.text).toBe(404)
  })
})
