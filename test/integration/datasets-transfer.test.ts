/**
 * Datasets built from stored inferences, and datasets exported and imported as JSON Lines,
 * through real HTTP against a real gateway on ClickHouse and Postgres alike: from_inferences by
 * ids and by query (function, tags, metrics, limit and offset, paged past one page), with the
 * inference's output, its latest demonstration or none; the 400s and 404s, with nothing stored;
 * export -> import round trips, import all or nothing, and the bounds of an import body.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { v7 as uuidv7 } from "uuid"
import { answerSchema, temperatureSchema } from "../support/dummyConfig.ts"
import { freshDatabase, type TestDatabase } from "../support/databases.ts"
import { type RunningGateway, startGateway } from "../support/gateway.ts"
import { backends, getInferences, listInferences, observabilityToml, userInput, waitForFeedback, waitForInferences } from "../support/observability.ts"
import { batch, chatInference, idAt, openStore, type OpenStore, run, write } from "../support/storeFixtures.ts"

const humidityTool = {
  name: "get_humidity",
  description: "Get the humidity of a place",
  parameters: { type: "object", properties: { place: { type: "string" } }, required: ["place"] },
  strict: false
}

const config = `
${observabilityToml()}

[metrics.good]
type = "boolean"
level = "inference"
optimize = "max"

[metrics.score]
type = "float"
level = "inference"
optimize = "max"

[tools.get_temperature]
description = "Get the current temperature of a place"
parameters = "tools/get_temperature.json"
strict = true

[functions.chat]
type = "chat"
[functions.chat.variants.text]
type = "chat_completion"
model = "dummy::hello"

[functions.weather]
type = "chat"
tools = ["get_temperature"]
[functions.weather.variants.tool]
type = "chat_completion"
model = "dummy::offered_tool"

[functions.extract]
type = "json"
output_schema = "schemas/answer.json"
[functions.extract.variants.json]
type = "chat_completion"
model = "dummy::json"
weight = 1
[functions.extract.variants.prose]
type = "chat_completion"
model = "dummy::hello"
weight = 0
`

const files = {
  "tools/get_temperature.json": JSON.stringify(temperatureSchema),
  "schemas/answer.json": JSON.stringify(answerSchema)
}

/** export-only fields and what an import gives anew: left out when comparing contents */
const content = (datapoint: Record<string, unknown>) => {
  const { id: _id, dataset_name: _d, created_at: _c, updated_at: _u, staled_at: _s, is_custom: _i, source_inference_id: _src, ...rest } = datapoint
  return rest
}

describe.each(backends)("datasets on %s: from_inferences, export and import", (backend) => {
  let database: TestDatabase
  let gateway: RunningGateway
  let direct: OpenStore
  /** inferences of `chat`, oldest first: 0 and 1 rated good, 2 rated bad; 0 has two demonstrations */
  const chat: Array<string> = []
  let extractParsed: string
  let extractProse: string
  let weather: string
  /** an inference of a function the configuration no longer has, written straight into the store */
  let gone: string
  /** `bulk` chat inferences written straight into the store, oldest first */
  const bulk: Array<string> = []
  const bulkCount = 2500

  const post = (path: string, body: unknown) => gateway.post(path, body)
  const fromInferences = (dataset: string, body: unknown) => post(`/v1/datasets/${dataset}/from_inferences`, body)
  const getDatapoints = async (dataset: string, ids: ReadonlyArray<string>) => {
    const response = await post(`/v1/datasets/${dataset}/get_datapoints`, { ids })
    expect(response.status, JSON.stringify(response.body)).toBe(200)
    return response.body.datapoints as Array<any>
  }
  const listDatapoints = async (dataset: string, body: Record<string, unknown> = {}) => {
    const response = await post(`/v1/datasets/${dataset}/list_datapoints`, { limit: 1000, ...body })
    expect(response.status, JSON.stringify(response.body)).toBe(200)
    return response.body.datapoints as Array<any>
  }
  /** from_inferences expecting a 200: the new ids */
  const created = async (dataset: string, body: unknown): Promise<Array<string>> => {
    const response = await fromInferences(dataset, body)
    expect(response.status, JSON.stringify(response.body)).toBe(200)
    return response.body.ids
  }
  const exportText = async (dataset: string) => {
    const response = await fetch(`${gateway.url}/v1/datasets/${dataset}/datapoints/export`)
    return { status: response.status, contentType: response.headers.get("content-type"), text: await response.text() }
  }
  const importText = async (dataset: string, text: string) => {
    const response = await fetch(`${gateway.url}/v1/datasets/${dataset}/datapoints/import`, {
      method: "POST",
      headers: { "content-type": "application/jsonl" },
      body: text
    })
    const body = await response.text()
    return { status: response.status, body: JSON.parse(body) }
  }
  const sourcesOf = (datapoints: ReadonlyArray<any>) => datapoints.map((datapoint) => datapoint.source_inference_id)

  beforeAll(async () => {
    database = await freshDatabase(backend)
    gateway = await startGateway({ config, files, env: { GATEWAY_ANALYTICS_DB_URL: database.url } })
    const infer = async (body: Record<string, unknown>) => {
      const response = await post("/inference", body)
      expect(response.status, JSON.stringify(response.body)).toBe(200)
      return response.body.inference_id as string
    }
    const teams = ["red", "red", "blue", "green"]
    for (let i = 0; i < 4; i++) chat.push(await infer({ function_name: "chat", input: userInput(`message ${i}`), tags: { team: teams[i], n: String(i) } }))
    extractParsed = await infer({ function_name: "extract", variant_name: "json", input: userInput("extract this"), tags: { team: "red" } })
    extractProse = await infer({ function_name: "extract", variant_name: "prose", input: userInput("extract that") })
    weather = await infer({
      function_name: "weather",
      input: userInput("weather in Paris?"),
      additional_tools: [humidityTool],
      parallel_tool_calls: true
    })
    await waitForInferences(gateway, [...chat, extractParsed, extractProse, weather])

    const feedback = async (inference_id: string, metric_name: string, value: unknown) => {
      const response = await post("/feedback", { inference_id, metric_name, value })
      expect(response.status, JSON.stringify(response.body)).toBe(200)
    }
    await feedback(chat[0], "good", true)
    await feedback(chat[1], "good", true)
    await feedback(chat[2], "good", false)
    await feedback(chat[0], "score", 0.9)
    await feedback(chat[1], "score", 0.2)
    await feedback(chat[0], "demonstration", "an older demonstration")
    await feedback(chat[0], "demonstration", "the latest demonstration")
    await feedback(extractParsed, "demonstration", { answer: "Demonstrated" })
    await feedback(weather, "demonstration", [{ type: "tool_call", name: "get_temperature", arguments: { location: "Paris" } }])
    await waitForFeedback(gateway, chat[0], (found) => found.length === 4)
    await waitForFeedback(gateway, chat[1], (found) => found.length === 2)
    await waitForFeedback(gateway, chat[2], (found) => found.length === 1)
    await waitForFeedback(gateway, extractParsed, (found) => found.length === 1)
    await waitForFeedback(gateway, weather, (found) => found.length === 1)

    // straight into the store (the gateway migrated it): more than two pages of inferences, and one of a function now gone
    direct = await openStore(backend, database.url)
    const start = Date.now() - 3600_000
    for (let i = 0; i < bulkCount; i++) bulk.push(idAt(start + i))
    await run(write(direct.store, batch({
      inferences: bulk.map((id, i) => chatInference({ id, functionName: "chat", input: userInput(`bulk ${i}`), tags: { bulk: "yes" }, toolParams: undefined }))
    })))
    gone = uuidv7()
    await run(write(direct.store, batch({ inferences: [chatInference({ id: gone, functionName: "retired", tags: { team: "red" } })] })))
  })
  afterAll(async () => {
    await direct?.close()
    await gateway?.stop()
    await database?.drop()
  })

  it("by ids, with the inferences' outputs: one datapoint each, in order, tied to its inference", async () => {
    const stored = await getInferences(gateway, [chat[1], extractParsed, extractProse, weather])
    const ids = await created("by_ids", { type: "inference_ids", inference_ids: [chat[1], extractParsed, extractProse, weather] })
    expect(ids).toHaveLength(4)
    for (const id of ids) expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
    const datapoints = await getDatapoints("by_ids", ids)
    expect(datapoints.map((datapoint) => datapoint.id)).toEqual(ids)
    expect(sourcesOf(datapoints)).toEqual([chat[1], extractParsed, extractProse, weather])
    for (let i = 0; i < 4; i++) {
      expect(datapoints[i]).toMatchObject({
        dataset_name: "by_ids",
        function_name: stored[i].function_name,
        type: stored[i].type,
        input: stored[i].input,
        episode_id: stored[i].episode_id,
        tags: stored[i].tags,
        is_custom: false,
        staled_at: null,
        name: null
      })
    }
    // chat: the output blocks; json: the parsed value, none when it did not parse
    expect(datapoints[0].output).toEqual(stored[0].output)
    expect(datapoints[1].output).toEqual({ answer: "Hello" })
    expect(datapoints[1].output_schema).toEqual(answerSchema)
    expect(stored[2].output.parsed).toBeNull()
    expect(datapoints[2].output).toBeNull()
    // the tools of the request: the configured one is the function's, the added one the datapoint's own
    expect(datapoints[3].output).toEqual(stored[3].output)
    expect(datapoints[3].output[0]).toMatchObject({ type: "tool_call", name: "get_temperature", arguments: { location: "Brooklyn", units: "celsius" } })
    expect(datapoints[3]).toMatchObject({ additional_tools: [humidityTool], parallel_tool_calls: true, tool_choice: "auto", allowed_tools: null })
  })

  it("by ids, with demonstrations: the latest one, inferences without one skipped", async () => {
    const ids = await created("demonstrated", {
      type: "inference_ids",
      inference_ids: [chat[0], chat[1], extractParsed, weather],
      output_source: "demonstration"
    })
    expect(ids).toHaveLength(3)
    const datapoints = await getDatapoints("demonstrated", ids)
    expect(sourcesOf(datapoints)).toEqual([chat[0], extractParsed, weather])
    expect(datapoints[0].output).toEqual([{ type: "text", text: "the latest demonstration" }])
    expect(datapoints[1].output).toEqual({ answer: "Demonstrated" })
    expect(datapoints[2].output).toEqual([{
      type: "tool_call",
      id: expect.any(String),
      name: "get_temperature",
      arguments: { location: "Paris" },
      raw_name: "get_temperature",
      raw_arguments: JSON.stringify({ location: "Paris" })
    }])
    for (const datapoint of datapoints) expect(datapoint.is_custom).toBe(false)
  })

  it("by ids, without outputs", async () => {
    const ids = await created("no_outputs", { type: "inference_ids", inference_ids: [chat[0], extractParsed], output_source: "none" })
    const datapoints = await getDatapoints("no_outputs", ids)
    expect(sourcesOf(datapoints)).toEqual([chat[0], extractParsed])
    expect(datapoints.map((datapoint) => datapoint.output)).toEqual([null, null])
    expect(await created("no_outputs_empty", { type: "inference_ids", inference_ids: [] })).toEqual([])
  })

  it("by ids: 400 for an id that is not a UUIDv7 or repeats, 404 for an unknown one or a function no longer configured; nothing stored", async () => {
    const cases: Array<[unknown, number, ReadonlyArray<string>]> = [
      [{ type: "inference_ids", inference_ids: [chat[0], "not-an-id"] }, 400, ["inference_ids[1]", "not-an-id"]],
      [{ type: "inference_ids", inference_ids: [chat[0], "0b6f2b3c-4a1e-4f0e-9c3d-2a8f7e6d5c4b"] }, 400, ["inference_ids[1]"]],
      [{ type: "inference_ids", inference_ids: [chat[0], chat[1], chat[0]] }, 400, ["inference_ids[2]", "inference_ids[0]"]],
      [{ type: "inference_ids", inference_ids: [chat[0], chat[1], missingId] }, 404, ["inference_ids[2]", missingId]],
      [{ type: "inference_ids", inference_ids: [chat[0], gone] }, 404, ["inference_ids[1]", "retired"]],
      [{ type: "inference_ids", inference_ids: [chat[0]], output_source: "mine" }, 400, ["output_source"]],
      [{ type: "inference_ids" }, 400, ["inference_ids"]],
      [{ type: "by_magic", inference_ids: [] }, 400, ["type"]],
      [{ type: "inference_ids", inference_ids: [chat[0]], extra: 1 }, 400, ["extra"]]
    ]
    for (const [body, status, mentions] of cases) {
      const response = await fromInferences("refused", body)
      expect(response.status, JSON.stringify([body, response.body])).toBe(status)
      for (const mention of mentions) expect(response.body.error).toContain(mention)
    }
    const badName = await fromInferences("no%20spaces", { type: "inference_ids", inference_ids: [chat[0]] })
    expect(badName.status).toBe(400)
    expect(badName.body.error).toContain("dataset_name")
    expect(await listDatapoints("refused")).toEqual([])
  })

  it("by ids, past one page: every id found before anything is written, then all of them in order", async () => {
    const ids = bulk.slice(0, 1500)
    const refused = await fromInferences("bulk_by_ids", { type: "inference_ids", inference_ids: [...ids.slice(0, 1400), missingId, ...ids.slice(1400)] })
    expect(refused.status, JSON.stringify(refused.body)).toBe(404)
    expect(refused.body.error).toContain("inference_ids[1400]")
    expect(await listDatapoints("bulk_by_ids")).toEqual([])
    const made = await created("bulk_by_ids", { type: "inference_ids", inference_ids: ids })
    expect(made).toHaveLength(1500)
    expect(sourcesOf(await getDatapoints("bulk_by_ids", [made[0], made[999], made[1000], made[1499]]))).toEqual([ids[0], ids[999], ids[1000], ids[1499]])
    const tooMany = await fromInferences("bulk_by_ids", { type: "inference_ids", inference_ids: Array.from({ length: 100_001 }, () => missingId) })
    expect(tooMany.status).toBe(400)
    expect(tooMany.body.error).toContain("100000")
  })

  it("by query: the inferences list_inferences finds with the same parameters, newest first", async () => {
    const cases: ReadonlyArray<Record<string, unknown>> = [
      { function_name: "chat", filters: { type: "tag", key: "team", value: "red" } },
      { function_name: "chat", filters: { type: "not", child: { type: "tag", key: "bulk", value: "yes" } }, limit: 2, offset: 1 },
      { filters: { type: "tag", key: "team", value: "red" } },
      { function_name: "extract", variant_name: "prose" },
      { function_name: "chat", episode_id: (await getInferences(gateway, [chat[0]]))[0].episode_id }
    ]
    for (const [index, query] of cases.entries()) {
      const expected = (await listInferences(gateway, { ...query, limit: query.limit ?? 1000 }))
        .map((inference) => inference.inference_id)
        // the retired function gives no datapoint
        .filter((id) => id !== gone)
      expect(expected.length, JSON.stringify(query)).toBeGreaterThan(0)
      const ids = await created(`query_${index}`, { type: "inference_query", ...query })
      expect(sourcesOf(await getDatapoints(`query_${index}`, ids)), JSON.stringify(query)).toEqual(expected)
    }
  })

  it("by query, with metric filters and demonstrations", async () => {
    const good = await created("rated_good", {
      type: "inference_query",
      function_name: "chat",
      filters: { type: "boolean_metric", metric_name: "good", value: true }
    })
    expect(sourcesOf(await getDatapoints("rated_good", good))).toEqual([chat[1], chat[0]])
    const scored = await created("scored", {
      type: "inference_query",
      filters: { type: "float_metric", metric_name: "score", value: 0.5, comparison_operator: ">" }
    })
    expect(sourcesOf(await getDatapoints("scored", scored))).toEqual([chat[0]])
    // only inferences with a demonstration count, and `limit` counts them
    const demonstrated = await created("query_demonstrated", { type: "inference_query", output_source: "demonstration", limit: 2 })
    const datapoints = await getDatapoints("query_demonstrated", demonstrated)
    expect(sourcesOf(datapoints)).toEqual([weather, extractParsed])
    expect(datapoints[1].output).toEqual({ answer: "Demonstrated" })
  })

  it("by query, past one page: limit and offset over thousands of inferences", async () => {
    const all = await created("bulk_all", { type: "inference_query", filters: { type: "tag", key: "bulk", value: "yes" } })
    expect(all).toHaveLength(bulkCount)
    expect(new Set(all).size).toBe(bulkCount)
    const some = await created("bulk_some", { type: "inference_query", function_name: "chat", filters: { type: "tag", key: "bulk", value: "yes" }, limit: 2100, offset: 150 })
    expect(some).toHaveLength(2100)
    const newestFirst = [...bulk].reverse()
    const first = await getDatapoints("bulk_some", some.slice(0, 3))
    const last = await getDatapoints("bulk_some", some.slice(-3))
    expect(sourcesOf(first)).toEqual(newestFirst.slice(150, 153))
    expect(sourcesOf(last)).toEqual(newestFirst.slice(2247, 2250))
    // the datapoints of a page boundary (the 850th and 851st) follow each other
    expect(sourcesOf(await getDatapoints("bulk_some", some.slice(849, 852)))).toEqual(newestFirst.slice(999, 1002))
  })

  it("by query: 400 for bad filters and parameters, 404 for an unknown function; nothing stored", async () => {
    const cases: Array<[Record<string, unknown>, number, ReadonlyArray<string>]> = [
      [{ filters: { type: "and", children: [{ type: "time", time: "yesterday", comparison_operator: ">" }] } }, 400, ["filters.children[0].time", "yesterday"]],
      [{ filters: { type: "tag", key: "team" } }, 400, ["filters"]],
      [{ filters: { type: "boolean_metric", metric_name: "nope", value: true } }, 400, ["filters.metric_name", "nope"]],
      [{ filters: { type: "float_metric", metric_name: "good", value: 1, comparison_operator: ">" } }, 400, ["filters.type"]],
      [{ filters: deepFilter(40) }, 400, ["filters"]],
      [{ limit: 0 }, 400, ["limit"]],
      [{ limit: 100_001 }, 400, ["limit"]],
      [{ offset: -1 }, 400, ["offset"]],
      [{ episode_id: "nope" }, 400, ["episode_id"]],
      [{ function_name: "missing" }, 404, ["function_name", "missing"]]
    ]
    for (const [query, status, mentions] of cases) {
      const response = await fromInferences("refused_query", { type: "inference_query", ...query })
      expect(response.status, JSON.stringify([query, response.body])).toBe(status)
      for (const mention of mentions) expect(response.body.error).toContain(mention)
    }
    expect(await listDatapoints("refused_query")).toEqual([])
  })

  it("export, then import into another dataset: the same datapoints with new ids, oldest first", async () => {
    const fromChat = await created("round_trip", { type: "inference_query", function_name: "chat", filters: { type: "tag", key: "team", value: "red" } })
    const fromOthers = await created("round_trip", { type: "inference_ids", inference_ids: [extractParsed, extractProse, weather] })
    const byHand = await post("/v1/datasets/round_trip/datapoints", {
      datapoints: [{ type: "chat", function_name: "chat", input: userInput("by hand"), output: [{ type: "text", text: "written" }], name: "handmade", tags: { k: "v" } }]
    })
    expect(byHand.status, JSON.stringify(byHand.body)).toBe(200)
    const original = [...fromChat, ...fromOthers, ...byHand.body.ids]

    const exported = await exportText("round_trip")
    expect(exported.status).toBe(200)
    expect(exported.contentType).toContain("application/jsonl")
    expect(exported.text.endsWith("\n")).toBe(true)
    const lines = exported.text.split("\n").slice(0, -1).map((line) => JSON.parse(line))
    // oldest first: the order they were made in
    expect(lines.map((line) => line.id)).toEqual(original)
    expect(lines).toEqual(await getDatapoints("round_trip", original))

    const imported = await importText("round_trip_copy", exported.text)
    expect(imported.status, JSON.stringify(imported.body)).toBe(200)
    expect(imported.body.ids).toHaveLength(original.length)
    for (const id of imported.body.ids) expect(original).not.toContain(id)
    const copies = await getDatapoints("round_trip_copy", imported.body.ids)
    expect(copies.map(content)).toEqual(lines.map(content))
    for (const copy of copies) {
      expect(copy.dataset_name).toBe("round_trip_copy")
      expect(copy.source_inference_id).toBeNull()
    }
    // and back out the same way
    const again = await exportText("round_trip_copy")
    expect(again.text.split("\n").slice(0, -1).map((line) => content(JSON.parse(line)))).toEqual(lines.map(content))
  })

  it("export of thousands of datapoints streams them all; an empty or unknown dataset is an empty file", async () => {
    await created("bulk_export", { type: "inference_query", filters: { type: "tag", key: "bulk", value: "yes" } })
    const exported = await exportText("bulk_export")
    expect(exported.status).toBe(200)
    const lines = exported.text.split("\n").slice(0, -1).map((line) => JSON.parse(line))
    expect(lines).toHaveLength(bulkCount)
    const ids = lines.map((line) => line.id)
    expect(ids).toEqual([...ids].sort())
    // made newest inference first
    expect(sourcesOf(lines)).toEqual([...bulk].reverse())

    const empty = await exportText("never_written")
    expect(empty).toEqual({ status: 200, contentType: expect.stringContaining("application/jsonl"), text: "" })
    // a dataset whose datapoints are all deleted
    expect(await created("emptied", { type: "inference_ids", inference_ids: [chat[3]] })).toHaveLength(1)
    const removed = await fetch(`${gateway.url}/v1/datasets/emptied`, { method: "DELETE" })
    expect(removed.status).toBe(200)
    expect((await exportText("emptied")).text).toBe("")
    expect((await exportText("bad%20name")).status).toBe(400)
  })

  it("import: blank lines skipped, create's fields taken, all or nothing naming the line at fault", async () => {
    const good = (text: string) => JSON.stringify({ type: "chat", function_name: "chat", input: userInput(text), output: [{ type: "text", text: "ok" }] })
    const json = JSON.stringify({ type: "json", function_name: "extract", input: userInput("j"), output: { answer: "A" } })
    const accepted = await importText("imported", `\n${good("one")}\r\n\n${json}\n${good("three")}`)
    expect(accepted.status, JSON.stringify(accepted.body)).toBe(200)
    const datapoints = await getDatapoints("imported", accepted.body.ids)
    expect(datapoints.map((datapoint) => datapoint.input)).toEqual([userInput("one"), userInput("j"), userInput("three")])
    expect(datapoints[1].output).toEqual({ answer: "A" })

    const refusals: Array<[string, number, ReadonlyArray<string>]> = [
      // one bad datapoint in the middle: checked as create checks it (an unknown function is a 404 there)
      [`${good("a")}\n${JSON.stringify({ type: "chat", function_name: "missing", input: userInput("b") })}\n${good("c")}`, 404, ["line 2", "missing"]],
      [`${good("a")}\n${good("b")}\n${JSON.stringify({ type: "json", function_name: "extract", input: userInput("c"), output: { answer: 3 } })}`, 400, ["line 3", "output"]],
      // counted with the blank lines
      [`${good("a")}\n\n${good("b")}\n{"type": "chat",`, 400, ["line 4", "JSON"]],
      [`${good("a")}\n[1, 2]`, 400, ["line 2", "object"]],
      [`${good("a")}\n${JSON.stringify({ type: "chat", function_name: "chat", input: userInput("b"), surprise: true })}`, 400, ["line 2", "surprise"]],
      [`${good("a")}\n${JSON.stringify({ type: "chat", input: userInput("b") })}`, 400, ["line 2", "function_name"]],
      ["", 400, ["no datapoint"]],
      ["\n \n\r\n", 400, ["no datapoint"]]
    ]
    for (const [body, status, mentions] of refusals) {
      const response = await importText("import_refused", body)
      expect(response.status, JSON.stringify([body, response.body])).toBe(status)
      for (const mention of mentions) expect(response.body.error).toContain(mention)
    }
    expect(await listDatapoints("import_refused")).toEqual([])
  })
})

/** a filter nested `depth` levels deep */
const deepFilter = (depth: number): unknown => depth === 0 ? { type: "tag", key: "k", value: "v" } : { type: "not", child: deepFilter(depth - 1) }

const missingId = uuidv7()

describe("datasets import: the bound of its body", () => {
  let gateway: RunningGateway
  beforeAll(async () => {
    // observability off: a body within the bound is read, then refused with a 503
    gateway = await startGateway({
      config: `
[gateway]
max_request_body_bytes = 100000
max_request_bytes_in_flight = 200000
`,
      env: { GATEWAY_ANALYTICS_DB_URL: undefined }
    })
  })
  afterAll(async () => {
    await gateway?.stop()
  })

  const importBytes = async (bytes: number) => {
    const line = JSON.stringify({ type: "chat", function_name: "chat", input: userInput("x".repeat(900)) }) + "\n"
    const body = line.repeat(Math.ceil(bytes / line.length)).slice(0, bytes)
    const response = await fetch(`${gateway.url}/v1/datasets/any/datapoints/import`, { method: "POST", body })
    return { status: response.status, body: await response.json() as { error: string } }
  }

  it("takes bodies larger than a JSON request's (here up to the bytes in flight), 413 past that", async () => {
    // over max_request_body_bytes, within max_request_bytes_in_flight: read, then no database to write to
    expect((await importBytes(150_000)).status).toBe(503)
    const tooLarge = await importBytes(250_000)
    expect(tooLarge.status).toBe(413)
    expect(tooLarge.body.error).toContain("200000")
    // JSON requests keep their bound
    const big = await fetch(`${gateway.url}/v1/datasets/any/from_inferences`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ type: "inference_ids", inference_ids: Array.from({ length: 4000 }, () => uuidv7()) })
    })
    expect(big.status).toBe(413)
  })
})
