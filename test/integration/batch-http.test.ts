/**
 * Batch inference over real HTTP against a real gateway on ClickHouse and on Postgres (the
 * relational database on Postgres), with the dummy provider's batch mode: a batch submitted,
 * read back completed (whole and one inference), its inferences stored as regular ones with
 * their model inferences and the batch tag, the 400s of a batch that cannot be sent (nothing
 * stored), unknown ids, and the 503s without a database. Provider batch APIs (pending,
 * failures, expiry, outages, background polls, several gateways) are in batch-providers.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { freshDatabase, type TestDatabase } from "../support/databases.ts"
import { type RunningGateway, startGateway } from "../support/gateway.ts"
import { backends, getInferences, listInferences, observabilityToml, uuidV7Pattern } from "../support/observability.ts"

const config = `
${observabilityToml()}
[gateway.batch]
poll_interval_s = 0

[tools.get_temperature]
description = "Temperature"
parameters = "temperature.json"

[models.text]
routing = ["dummy"]
[models.text.providers.dummy]
type = "dummy"
model_name = "hello"

[functions.weather]
type = "chat"
tools = ["get_temperature"]
user_schema = "user.json"
[functions.weather.variants.only]
type = "chat_completion"
model = "text"
user_template = "user.minijinja"

[functions.extract]
type = "json"
output_schema = "answer.json"
[functions.extract.variants.json]
type = "chat_completion"
model = "dummy::json"

[functions.unbatched]
type = "chat"
[functions.unbatched.variants.mistral]
type = "chat_completion"
model = "mistral::mistral-small"
`

const files = {
  "temperature.json": JSON.stringify({ type: "object", properties: { location: { type: "string" } }, required: ["location"] }),
  "user.json": JSON.stringify({ type: "object", properties: { city: { type: "string" } }, required: ["city"] }),
  "user.minijinja": "Weather in {{ city }}?",
  "answer.json": JSON.stringify({ type: "object", properties: { answer: { type: "string" } }, required: ["answer"] })
}

const cityInput = (city: unknown) => ({ messages: [{ role: "user", content: [{ type: "text", arguments: { city } }] }] })

describe.each(backends)("batch inference over HTTP on %s", (backend) => {
  let analytics: TestDatabase
  let relational: TestDatabase
  let gateway: RunningGateway

  beforeAll(async () => {
    analytics = await freshDatabase(backend)
    relational = backend === "postgres" ? analytics : await freshDatabase("postgres")
    gateway = await startGateway({
      config,
      files,
      env: { GATEWAY_ANALYTICS_DB_URL: analytics.url, GATEWAY_RELATIONAL_DB_URL: relational.url, MISTRAL_API_KEY: "unused" }
    })
  }, 60_000)

  afterAll(async () => {
    await gateway?.stop()
    await analytics?.drop()
    if (relational !== analytics) await relational?.drop()
  })

  it("says in /status that background tasks run", async () => {
    expect((await gateway.get("/status")).body).toMatchObject({ status: "ok", background_tasks: "pg-boss" })
  })

  it("submits a batch, answers its ids in input order, and reads it back completed with every inference stored", async () => {
    const submitted = await gateway.post("/batch_inference", {
      function_name: "weather",
      inputs: [cityInput("Paris"), cityInput("Oslo"), cityInput("Lima")],
      tags: [{ team: "a" }, null, { team: "c" }]
    })
    expect(submitted.status, JSON.stringify(submitted.body)).toBe(200)
    const { batch_id, inference_ids, episode_ids } = submitted.body
    expect(batch_id).toMatch(uuidV7Pattern)
    expect(inference_ids).toHaveLength(3)
    expect(episode_ids).toHaveLength(3)
    for (const id of [...inference_ids, ...episode_ids]) expect(id).toMatch(uuidV7Pattern)

    const read = await gateway.get(`/batch_inference/${batch_id}`)
    expect(read.status, JSON.stringify(read.body)).toBe(200)
    expect(read.body.status).toBe("completed")
    expect(read.body.batch_id).toBe(batch_id)
    expect(read.body.inferences.map((inference: any) => inference.inference_id)).toEqual(inference_ids)
    expect(read.body.inferences.map((inference: any) => inference.episode_id)).toEqual(episode_ids)
    for (const inference of read.body.inferences) {
      expect(inference.variant_name).toBe("only")
      expect(inference.content).toEqual([{ type: "text", text: "Hello from the dummy provider. This answer is always the same." }])
      expect(inference.usage).toEqual({ input_tokens: 10, output_tokens: 10 })
      expect(inference.finish_reason).toBe("stop")
    }

    // one inference of the batch
    const one = await gateway.get(`/batch_inference/${batch_id}/inference/${inference_ids[1]}`)
    expect(one.status).toBe(200)
    expect(one.body).toEqual({ status: "completed", batch_id, inferences: [read.body.inferences[1]] })

    // stored as regular inferences, with their model inferences and the batch's tag
    const stored = await getInferences(gateway, inference_ids, { include_model_inferences: true })
    expect(stored.map((inference) => inference.inference_id).sort()).toEqual([...inference_ids].sort())
    const paris = stored.find((inference) => inference.inference_id === inference_ids[0])
    expect(paris.tags).toMatchObject({ "gateway::batch_id": batch_id, team: "a" })
    expect(paris.input).toEqual(cityInput("Paris"))
    expect(paris.model_inferences).toHaveLength(1)
    expect(JSON.parse(paris.model_inferences[0].raw_request).messages).toEqual([{ role: "user", content: [{ type: "text", text: "Weather in Paris?" }] }])
    const tagged = await listInferences(gateway, { function_name: "weather", filters: { type: "tag", key: "gateway::batch_id", value: batch_id, comparison_operator: "=" } })
    expect(tagged.map((inference: any) => inference.inference_id).sort()).toEqual([...inference_ids].sort())

    // a later read answers from the database, the same
    expect((await gateway.get(`/batch_inference/${batch_id}`)).body).toEqual(read.body)
  })

  it("runs json functions, each output parsed against its input's schema", async () => {
    const submitted = await gateway.post("/batch_inference", {
      function_name: "extract",
      inputs: [{ messages: [{ role: "user", content: "one" }] }, { messages: [{ role: "user", content: "two" }] }],
      output_schemas: [null, { type: "object", properties: { answer: { type: "integer" } }, required: ["answer"] }]
    })
    expect(submitted.status, JSON.stringify(submitted.body)).toBe(200)
    const read = await gateway.get(`/batch_inference/${submitted.body.batch_id}`)
    expect(read.body.inferences.map((inference: any) => inference.output)).toEqual([
      { raw: "{\"answer\":\"Hello\"}", parsed: { answer: "Hello" } },
      { raw: "{\"answer\":\"Hello\"}", parsed: null }
    ])
  })

  it.each([
    [{ function_name: "weather", inputs: [cityInput("Paris"), cityInput(7)] }, 400, /^inputs\[1\]\.messages\[0\]\.content\[0\]\.arguments/],
    [{ function_name: "weather", inputs: [cityInput("Paris"), { messages: [{ role: "robot", content: "hi" }] }] }, 400, /^inputs\[1\]\.messages\[0\]\.role: /],
    [{ function_name: "weather", inputs: cityInput("Paris") }, 400, /^inputs: /],
    [{ function_name: "weather", inputs: [cityInput("Paris")], episode_ids: [null, null] }, 400, /^episode_ids: has 2 entries for 1 inputs/],
    [{ function_name: "weather", inputs: [cityInput("Paris")], stream: true }, 400, /^stream: /],
    [{ function_name: "weather", inputs: [cityInput("Paris")], cache_options: { enabled: "on" } }, 400, /^cache_options: /],
    [{ function_name: "weather", inputs: [] }, 400, /^inputs: a batch needs at least one input/],
    [{ function_name: "unbatched", inputs: [{ messages: [{ role: "user", content: "hi" }] }] }, 400, /provider "mistral" .*has no batch API/],
    [{ function_name: "weather", inputs: [cityInput("Paris")], extra_body: [] }, 400, /^extra_body: unknown field/],
    [{ function_name: "nope", inputs: [cityInput("Paris")] }, 404, /unknown function "nope"/],
    [{ function_name: "weather", variant_name: "nope", inputs: [cityInput("Paris")] }, 404, /unknown variant "nope"/]
  ])("refuses %j, storing nothing", async (body, status, message) => {
    const before = await listInferences(gateway, { function_name: body.function_name === "nope" ? "weather" : body.function_name, limit: 1000 })
    const response = await gateway.post("/batch_inference", body)
    expect(response.status, JSON.stringify(response.body)).toBe(status)
    expect(response.body.error).toMatch(message)
    const after = await listInferences(gateway, { function_name: body.function_name === "nope" ? "weather" : body.function_name, limit: 1000 })
    expect(after.length).toBe(before.length)
  })

  it("answers 404 for an unknown batch, a malformed id, and an inference not in the batch", async () => {
    const submitted = await gateway.post("/batch_inference", { function_name: "weather", inputs: [cityInput("Paris")] })
    const { batch_id } = submitted.body
    const unknown = "0192e3c4-0000-7000-8000-000000000000"
    for (const path of [`/batch_inference/${unknown}`, "/batch_inference/not-a-uuid", `/batch_inference/${batch_id}/inference/${unknown}`, `/batch_inference/${batch_id}/inference/x`]) {
      const response = await gateway.get(path)
      expect(response.status, path).toBe(404)
      expect(response.body.error).toMatch(/unknown batch|has no inference/)
    }
  })
})

describe("batch inference without its databases", () => {
  let gateway: RunningGateway
  let analytics: TestDatabase

  beforeAll(async () => {
    analytics = await freshDatabase("postgres")
  })
  afterAll(async () => {
    await gateway?.stop()
    await analytics?.drop()
  })

  it("answers 503 naming GATEWAY_RELATIONAL_DB_URL without a relational database, and GATEWAY_ANALYTICS_DB_URL without an analytics one", async () => {
    gateway = await startGateway({ config, files, env: { GATEWAY_ANALYTICS_DB_URL: analytics.url, GATEWAY_RELATIONAL_DB_URL: undefined, MISTRAL_API_KEY: "unused" } })
    const submitted = await gateway.post("/batch_inference", { function_name: "weather", inputs: [cityInput("Paris")] })
    expect(submitted.status).toBe(503)
    expect(submitted.body.error).toContain("GATEWAY_RELATIONAL_DB_URL")
    const read = await gateway.get("/batch_inference/0192e3c4-0000-7000-8000-000000000000")
    expect(read.status).toBe(503)
    expect((await gateway.get("/status")).body.background_tasks).toBe("off")
    expect(read.body.error).toContain("GATEWAY_RELATIONAL_DB_URL")
    await gateway.stop()

    gateway = await startGateway({ config, files, env: { GATEWAY_ANALYTICS_DB_URL: undefined, GATEWAY_RELATIONAL_DB_URL: analytics.url, MISTRAL_API_KEY: "unused" } })
    const without = await gateway.post("/batch_inference", { function_name: "weather", inputs: [cityInput("Paris")] })
    expect(without.status).toBe(503)
    expect(without.body.error).toContain("GATEWAY_ANALYTICS_DB_URL")
  }, 60_000)
})
