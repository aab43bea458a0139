/**
 * Observability conformance, part 2 (spec 4.3, issue 3 "POST /feedback"), against ClickHouse
 * and Postgres alike: metrics at both levels, comments, demonstrations for chat and json,
 * each stored and read back; every refusal (unknown target, metric, value, level, malformed
 * body) answered with a message and nothing stored; dryrun answers but stores nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { v7 as uuidv7 } from "uuid"
import { freshDatabase, type TestDatabase } from "../support/databases.ts"
import { rawRequest, type RunningGateway, startGateway } from "../support/gateway.ts"
import {
  backends,
  getInferences,
  observabilityToml,
  userInput,
  uuidV7Pattern,
  waitForFeedback,
  waitForInference
} from "../support/observability.ts"

const files = {
  "tools/get_temperature.json": JSON.stringify({
    type: "object",
    properties: { location: { type: "string" }, units: { type: "string", enum: ["celsius", "fahrenheit"] } },
    required: ["location"],
    additionalProperties: false
  }),
  "schemas/answer.json": JSON.stringify({
    type: "object",
    properties: { answer: { type: "string" } },
    required: ["answer"],
    additionalProperties: false
  })
}

const config = (flushIntervalMs = 20) => `
${observabilityToml({ flushIntervalMs })}

[metrics.thumbs_up]
type = "boolean"
level = "inference"
optimize = "max"

[metrics.score]
type = "float"
level = "inference"
optimize = "max"

[metrics.solved]
type = "boolean"
level = "episode"
optimize = "max"

[metrics.rating]
type = "float"
level = "episode"
optimize = "max"

[tools.get_temperature]
description = "Get the current temperature of a place"
parameters = "tools/get_temperature.json"
strict = true

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
`

describe.each(backends)("observability on %s: feedback", (backend) => {
  let database: TestDatabase
  let gateway: RunningGateway
  /** a chat inference (weather) and a json inference (extract), both stored */
  let chat: { id: string; episode: string }
  let json: { id: string; episode: string }

  const infer = async (body: Record<string, unknown>) => {
    const response = await gateway.post("/inference", body)
    expect(response.status, JSON.stringify(response.body)).toBe(200)
    return { id: response.body.inference_id as string, episode: response.body.episode_id as string }
  }

  const feedback = (body: unknown) => gateway.post("/feedback", body)

  /** sends feedback that must be accepted; its id */
  const accepted = async (body: Record<string, unknown>): Promise<string> => {
    const response = await feedback(body)
    expect(response.status, JSON.stringify(response.body)).toBe(200)
    expect(Object.keys(response.body)).toEqual(["feedback_id"])
    expect(response.body.feedback_id).toMatch(uuidV7Pattern)
    return response.body.feedback_id
  }

  const refused = async (body: unknown, status: number, ...mentions: ReadonlyArray<string>) => {
    const response = await feedback(body)
    expect(response.status, `${JSON.stringify(body)} -> ${JSON.stringify(response.body)}`).toBe(status)
    expect(typeof response.body.error).toBe("string")
    expect(response.body.error.length).toBeGreaterThan(0)
    for (const mention of mentions) expect(response.body.error).toContain(mention)
    return response.body.error as string
  }

  /** the stored feedback of an inference once `ids` are all there */
  const storedFeedback = (inferenceId: string, ids: ReadonlyArray<string>) =>
    waitForFeedback(gateway, inferenceId, (rows) => ids.every((id) => rows.some((row) => row.feedback_id === id)))

  beforeAll(async () => {
    database = await freshDatabase(backend)
    gateway = await startGateway({ config: config(), files, env: { GATEWAY_ANALYTICS_DB_URL: database.url } })
    chat = await infer({ function_name: "weather", input: userInput("Weather in Brooklyn?") })
    json = await infer({ function_name: "extract", input: userInput("Say hello") })
    await waitForInference(gateway, chat.id)
    await waitForInference(gateway, json.id)
  })
  afterAll(async () => {
    await gateway?.stop()
    await database?.drop()
  })

  it("boolean and float metrics at inference and episode level are stored with their value and tags", async () => {
    const thumbs = await accepted({ metric_name: "thumbs_up", inference_id: chat.id, value: true, tags: { reviewer: "ann" } })
    const score = await accepted({ metric_name: "score", inference_id: chat.id, value: 0.75 })
    const negative = await accepted({ metric_name: "score", inference_id: chat.id, value: -12.5, tags: { pass: "2" } })
    const solved = await accepted({ metric_name: "solved", episode_id: chat.episode, value: false, tags: { by: "bot" } })
    const rating = await accepted({ metric_name: "rating", episode_id: chat.episode, value: 4 })

    const rows = await storedFeedback(chat.id, [thumbs, score, negative, solved, rating])
    const byId = new Map(rows.map((row) => [row.feedback_id, row]))
    expect(byId.get(thumbs)).toMatchObject({ metric_name: "thumbs_up", value: true, tags: { reviewer: "ann" }, target_id: chat.id })
    expect(byId.get(score)).toMatchObject({ metric_name: "score", value: 0.75, tags: {}, target_id: chat.id })
    expect(byId.get(negative)).toMatchObject({ metric_name: "score", value: -12.5, tags: { pass: "2" } })
    expect(byId.get(solved)).toMatchObject({ metric_name: "solved", value: false, tags: { by: "bot" }, target_id: chat.episode })
    expect(byId.get(rating)).toMatchObject({ metric_name: "rating", value: 4, target_id: chat.episode })
    // a timestamp that is the feedback id's
    expect(Date.parse(byId.get(thumbs).timestamp)).toBeGreaterThan(Date.now() - 60_000)
    // the other inference has none of it
    const [other] = await getInferences(gateway, [json.id], { include_feedback: true })
    expect(other.feedback).toEqual([])
  })

  it("comments on an inference and on an episode are stored", async () => {
    const text = "Too long; said 'it' twice.\nSecond line \\ with ✓ and \"quotes\""
    const onInference = await accepted({ metric_name: "comment", inference_id: json.id, value: text, tags: { source: "ui" } })
    const onEpisode = await accepted({ metric_name: "comment", episode_id: json.episode, value: "the whole episode was fine" })
    const rows = await storedFeedback(json.id, [onInference, onEpisode])
    expect(rows.find((row) => row.feedback_id === onInference)).toMatchObject({
      metric_name: "comment",
      value: text,
      tags: { source: "ui" },
      target_id: json.id
    })
    expect(rows.find((row) => row.feedback_id === onEpisode)).toMatchObject({
      metric_name: "comment",
      value: "the whole episode was fine",
      target_id: json.episode
    })
  })

  it("demonstrations for a chat function (a string; text and tool call blocks) and a json function are stored", async () => {
    const asString = await accepted({ metric_name: "demonstration", inference_id: chat.id, value: "It is 20 degrees in Brooklyn." })
    const blocks = [
      { type: "text", text: "Let me look that up." },
      { type: "tool_call", id: "call_9", name: "get_temperature", arguments: { location: "Brooklyn", units: "celsius" } }
    ]
    const asBlocks = await accepted({ metric_name: "demonstration", inference_id: chat.id, value: blocks, tags: { by: "expert" } })
    const asJson = await accepted({ metric_name: "demonstration", inference_id: json.id, value: { answer: "Hi there" } })

    const chatRows = await storedFeedback(chat.id, [asString, asBlocks])
    expect(chatRows.find((row) => row.feedback_id === asString)).toMatchObject({
      metric_name: "demonstration",
      value: [{ type: "text", text: "It is 20 degrees in Brooklyn." }]
    })
    expect(chatRows.find((row) => row.feedback_id === asBlocks)).toMatchObject({
      metric_name: "demonstration",
      tags: { by: "expert" }
    })
    expect(chatRows.find((row) => row.feedback_id === asBlocks).value).toMatchObject(blocks)
    const jsonRows = await storedFeedback(json.id, [asJson])
    expect(jsonRows.find((row) => row.feedback_id === asJson)).toMatchObject({ metric_name: "demonstration", value: { answer: "Hi there" } })
  })

  it("a json demonstration must fit the schema the inference was checked against (an output_schema override too)", async () => {
    await refused({ metric_name: "demonstration", inference_id: json.id, value: { answer: 5 } }, 400, "value")
    await refused({ metric_name: "demonstration", inference_id: json.id, value: { answer: "x", extra: 1 } }, 400)
    await refused({ metric_name: "demonstration", inference_id: json.id, value: "just text" }, 400)

    const override = { type: "object", properties: { count: { type: "integer" } }, required: ["count"] }
    const overridden = await infer({ function_name: "extract", input: userInput("count"), output_schema: override })
    await refused({ metric_name: "demonstration", inference_id: overridden.id, value: { answer: "Hi" } }, 400)
    const fits = await accepted({ metric_name: "demonstration", inference_id: overridden.id, value: { count: 3 } })
    const rows = await storedFeedback(overridden.id, [fits])
    expect(rows).toHaveLength(1)
    expect(rows[0].value).toEqual({ count: 3 })
  })

  it("a chat demonstration must be text or tool calls of the function's tools with fitting arguments", async () => {
    await refused({ metric_name: "demonstration", inference_id: chat.id, value: 42 }, 400, "value")
    await refused({ metric_name: "demonstration", inference_id: chat.id, value: { text: "hi" } }, 400, "value")
    await refused({ metric_name: "demonstration", inference_id: chat.id, value: [{ type: "image", url: "x" }] }, 400, "value[0]")
    await refused({ metric_name: "demonstration", inference_id: chat.id, value: [{ type: "text" }] }, 400, "value[0]")
    await refused(
      { metric_name: "demonstration", inference_id: chat.id, value: [{ type: "tool_call", id: "1", name: "launch_rocket", arguments: {} }] },
      400,
      "launch_rocket"
    )
    await refused(
      { metric_name: "demonstration", inference_id: chat.id, value: [{ type: "tool_call", id: "1", name: "get_temperature", arguments: { location: 12 } }] },
      400,
      "get_temperature"
    )
    // a demonstration is for an inference, not an episode
    await refused({ metric_name: "demonstration", episode_id: chat.episode, value: "text" }, 400)
  })

  it("feedback sent right after the inference, before its row is written, is accepted and stored", async () => {
    // a gateway that holds its rows for 2.5 s, longer than feedback waits for a target to appear
    const slow = await startGateway({
      config: config(2_500),
      files,
      env: { GATEWAY_ANALYTICS_DB_URL: database.url }
    })
    try {
      const response = await slow.post("/inference", { function_name: "weather", input: userInput("quick") })
      expect(response.status).toBe(200)
      const fresh = { id: response.body.inference_id as string, episode: response.body.episode_id as string }
      const sent = Date.now()
      const answers = await Promise.all([
        slow.post("/feedback", { metric_name: "thumbs_up", inference_id: fresh.id, value: false }),
        slow.post("/feedback", { metric_name: "comment", inference_id: fresh.id, value: "fast" }),
        slow.post("/feedback", { metric_name: "solved", episode_id: fresh.episode, value: true }),
        slow.post("/feedback", { metric_name: "comment", episode_id: fresh.episode, value: "episode" }),
        slow.post("/feedback", { metric_name: "demonstration", inference_id: fresh.id, value: "better" })
      ])
      for (const answer of answers) {
        expect(answer.status, JSON.stringify(answer.body)).toBe(200)
        expect(answer.body.feedback_id).toMatch(uuidV7Pattern)
      }
      // answered at once, from the queue, while the inference was not written yet
      expect(Date.now() - sent).toBeLessThan(1_000)
      expect(await getInferences(slow, [fresh.id])).toEqual([])
      const rows = await storedFeedback(fresh.id, answers.map((answer) => answer.body.feedback_id))
      expect(rows).toHaveLength(5)
    } finally {
      await slow.stop()
    }
  })

  it("an unknown inference or episode id is a 400 naming the id", async () => {
    const unknownInference = uuidv7()
    const unknownEpisode = uuidv7()
    const started = Date.now()
    // in parallel: each takes about 1.5 s, the time allowed for a write in flight
    await Promise.all([
      refused({ metric_name: "thumbs_up", inference_id: unknownInference, value: true }, 400, unknownInference),
      refused({ metric_name: "comment", inference_id: unknownInference, value: "x" }, 400, unknownInference),
      refused({ metric_name: "demonstration", inference_id: unknownInference, value: "x" }, 400, unknownInference),
      refused({ metric_name: "solved", episode_id: unknownEpisode, value: true }, 400, unknownEpisode),
      refused({ metric_name: "comment", episode_id: unknownEpisode, value: "x" }, 400, unknownEpisode),
      // an inference id is not an episode id
      refused({ metric_name: "rating", episode_id: chat.id, value: 1 }, 400, chat.id)
    ])
    expect(Date.now() - started).toBeLessThan(10_000)
  })

  it("unknown metric 404; wrong value type, both or neither id, wrong level, ids that are not UUIDv7: 400", async () => {
    await refused({ metric_name: "no_such_metric", inference_id: chat.id, value: true }, 404, "no_such_metric")
    await refused({ metric_name: "thumbs_up", inference_id: chat.id, value: "yes" }, 400, "value")
    await refused({ metric_name: "thumbs_up", inference_id: chat.id, value: 1 }, 400, "value")
    await refused({ metric_name: "score", inference_id: chat.id, value: "0.5" }, 400, "value")
    await refused({ metric_name: "score", inference_id: chat.id, value: true }, 400, "value")
    await refused({ metric_name: "score", inference_id: chat.id, value: null }, 400, "value")
    await refused({ metric_name: "rating", episode_id: chat.episode, value: [1] }, 400, "value")
    await refused({ metric_name: "comment", inference_id: chat.id, value: 5 }, 400, "value")
    await refused({ metric_name: "comment", inference_id: chat.id, value: { text: "x" } }, 400, "value")
    await refused({ metric_name: "thumbs_up", inference_id: chat.id, episode_id: chat.episode, value: true }, 400, "inference_id", "episode_id")
    await refused({ metric_name: "comment", inference_id: chat.id, episode_id: chat.episode, value: "x" }, 400)
    await refused({ metric_name: "thumbs_up", value: true }, 400, "inference_id", "episode_id")
    await refused({ metric_name: "comment", value: "x" }, 400)
    await refused({ metric_name: "thumbs_up", episode_id: chat.episode, value: true }, 400, "thumbs_up")
    await refused({ metric_name: "solved", inference_id: chat.id, value: true }, 400, "solved")
    await refused({ metric_name: "score", episode_id: chat.episode, value: 1 }, 400)
    await refused({ metric_name: "rating", inference_id: chat.id, value: 1 }, 400)
    await refused({ metric_name: "thumbs_up", inference_id: "not-a-uuid", value: true }, 400, "not-a-uuid")
    await refused({ metric_name: "thumbs_up", inference_id: "0b6f2b3c-4a1e-4f0e-9c3d-2a8f7e6d5c4b", value: true }, 400)
  })

  it("malformed bodies of every kind get a 400 with a message, and nothing is stored", async () => {
    const target = await infer({ function_name: "weather", input: userInput("malformed") })
    await waitForInference(gateway, target.id)
    const malformed: Array<[string, string]> = [
      ["not JSON", "{metric_name: comment"],
      ["truncated JSON", `{"metric_name":"comment","inference_id":"${target.id}","value":"x"`],
      ["empty", ""],
      ["whitespace", "   \n"],
      ["an array", JSON.stringify([{ metric_name: "comment", inference_id: target.id, value: "x" }])],
      ["a string", JSON.stringify("comment")],
      ["a number", "42"],
      ["null", "null"],
      ["an unknown field", JSON.stringify({ metric_name: "comment", inference_id: target.id, value: "x", colour: "red" })],
      ["a misspelt field", JSON.stringify({ metric: "comment", inference_id: target.id, value: "x" })],
      ["missing metric_name", JSON.stringify({ inference_id: target.id, value: "x" })],
      ["metric_name not a string", JSON.stringify({ metric_name: 7, inference_id: target.id, value: "x" })],
      ["metric_name null", JSON.stringify({ metric_name: null, inference_id: target.id, value: "x" })],
      ["inference_id not a string", JSON.stringify({ metric_name: "comment", inference_id: 123, value: "x" })],
      ["episode_id not a string", JSON.stringify({ metric_name: "comment", episode_id: ["x"], value: "x" })],
      ["tags not an object", JSON.stringify({ metric_name: "comment", inference_id: target.id, value: "x", tags: "a=b" })],
      ["tags not flat", JSON.stringify({ metric_name: "comment", inference_id: target.id, value: "x", tags: { a: { b: "c" } } })],
      ["a tag value not a string", JSON.stringify({ metric_name: "comment", inference_id: target.id, value: "x", tags: { a: 1 } })],
      ["dryrun not a boolean", JSON.stringify({ metric_name: "comment", inference_id: target.id, value: "x", dryrun: "no" })]
    ]
    for (const [what, body] of malformed) {
      const response = await rawRequest(`${gateway.url}/feedback`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body
      })
      expect(response.status, `${what}: ${response.text}`).toBe(400)
      const parsed = JSON.parse(response.text)
      expect(Object.keys(parsed), what).toEqual(["error"])
      expect(typeof parsed.error, what).toBe("string")
      expect(parsed.error.length, what).toBeGreaterThan(0)
    }
    const missingMetric = await refused({ inference_id: target.id, value: "x" }, 400)
    expect(missingMetric).toContain("metric_name")
    const unknownField = await refused({ metric_name: "comment", inference_id: target.id, value: "x", colour: "red" }, 400)
    expect(unknownField).toContain("colour")

    // a valid feedback afterwards is the only one stored for the target
    const valid = await accepted({ metric_name: "comment", inference_id: target.id, value: "the only one" })
    const rows = await storedFeedback(target.id, [valid])
    expect(rows.map((row) => row.feedback_id)).toEqual([valid])
  })

  it("dryrun feedback answers with an id but stores nothing", async () => {
    const target = await infer({ function_name: "weather", input: userInput("dry feedback") })
    const dry = await Promise.all([
      accepted({ metric_name: "thumbs_up", inference_id: target.id, value: true, dryrun: true }),
      accepted({ metric_name: "comment", inference_id: target.id, value: "dry", dryrun: true }),
      accepted({ metric_name: "solved", episode_id: target.episode, value: true, dryrun: true }),
      accepted({ metric_name: "demonstration", inference_id: target.id, value: "dry", dryrun: true })
    ])
    expect(new Set(dry).size).toBe(4)
    // a dryrun is still checked
    await refused({ metric_name: "thumbs_up", inference_id: target.id, value: "yes", dryrun: true }, 400)
    const wet = await accepted({ metric_name: "comment", inference_id: target.id, value: "stored", dryrun: false })
    // writes are in order: once the later one is stored, the dryruns would have been too
    const rows = await storedFeedback(target.id, [wet])
    expect(rows.map((row) => row.feedback_id)).toEqual([wet])
  })
})
