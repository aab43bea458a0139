/**
 * Stored responses of the OpenAI Responses surface (issue 37, slice 8), through the official
 * `openai` SDK, on ClickHouse and on Postgres: a response is stored by default, read back
 * (`responses.retrieve`) as the create answered it, continued (`previous_response_id`: the
 * earlier input and output reach the provider before the new input), listed
 * (`responses.inputItems.list`) and deleted (then a 404, and `previous_response_id` a 400).
 * Two gateways share each database: the one that answered reads from memory (read-your-writes,
 * its write queue flushing slowly), the other from the store. Then `store: false`, two API keys
 * that cannot see each other's, and a gateway without a database.
 */
import OpenAI from "openai"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { type ApiKey, createKeys } from "../support/access.ts"
import { freshDatabase, type TestBackend, type TestDatabase } from "../support/databases.ts"
import { type FakeOpenAi, openAiProviderToml, startFakeOpenAi, textCompletion } from "../support/fakeOpenAi.ts"
import { type RunningGateway, startGateway } from "../support/gateway.ts"
import { observabilityToml, waitForInference } from "../support/observability.ts"

const config = (openai: FakeOpenAi, options: { readonly flushIntervalMs?: number; readonly auth?: boolean; readonly database?: boolean } = {}) => `
${options.database === false ? "" : observabilityToml({ flushIntervalMs: options.flushIntervalMs })}
${options.auth === true ? "[gateway.auth]\nenabled = true" : ""}

[models.gpt-fake]
routing = ["openai"]
${openAiProviderToml("gpt-fake", "openai", "gpt-4o", openai.apiBase, "none")}
`

const clientOf = (gateway: RunningGateway, key = "unused-without-auth") =>
  new OpenAI({ baseURL: `${gateway.url}/openai/v1`, apiKey: key, maxRetries: 0 })

/** the messages the provider was sent, as role and text */
const sentMessages = (openai: FakeOpenAi) =>
  openai.requests[openai.requests.length - 1].body.messages.map((message: any) => [
    message.role,
    typeof message.content === "string" ? message.content : message.content.map((part: any) => part.text).join("")
  ])

const failure = (promise: Promise<unknown>) => promise.then(() => undefined, (error: unknown) => error as InstanceType<typeof OpenAI.APIError>)

describe.each<TestBackend>(["clickhouse", "postgres"])("stored responses on %s", (backend) => {
  let openai: FakeOpenAi
  let database: TestDatabase
  // answers, its rows written late: what it reads comes from its memory
  let answering: RunningGateway
  // shares the database: what it reads comes from the store
  let reading: RunningGateway

  beforeAll(async () => {
    openai = await startFakeOpenAi()
    database = await freshDatabase(backend)
    const env = { GATEWAY_ANALYTICS_DB_URL: database.url }
    answering = await startGateway({ config: config(openai, { flushIntervalMs: 1500 }), env })
    reading = await startGateway({ config: config(openai), env })
  })
  afterAll(async () => {
    await Promise.all([answering?.stop(), reading?.stop()])
    await database?.drop()
    await openai?.close()
  })
  beforeEach(() => openai.reset())

  it("reads back, continues, lists and deletes a response", async () => {
    const client = clientOf(answering)
    openai.script.push({ kind: "json", body: textCompletion("Hello there") })
    const created = await client.responses.create({ model: "gpt-fake", instructions: "be brief", input: "first" })
    expect(created).toMatchObject({ store: true, status: "completed", output_text: "Hello there", previous_response_id: null })

    // read-your-writes: the row is not written yet, the next turn arrives at once
    openai.script.push({ kind: "json", body: textCompletion("Second answer") })
    const second = await client.responses.create({ model: "gpt-fake", previous_response_id: created.id, input: "second" })
    expect(sentMessages(openai)).toEqual([["user", "first"], ["assistant", "Hello there"], ["user", "second"]])
    expect(second).toMatchObject({ previous_response_id: created.id, output_text: "Second answer" })
    expect((second as any).gateway_episode_id).toBe((created as any).gateway_episode_id)

    const same = (response: OpenAI.Responses.Response) => ({
      id: response.id,
      created_at: response.created_at,
      model: response.model,
      status: response.status,
      output: response.output,
      usage: response.usage,
      store: (response as any).store
    })
    expect(same(await client.responses.retrieve(created.id))).toEqual(same(created))

    // from the store, in another gateway
    await waitForInference(reading, second.id)
    const other = clientOf(reading)
    expect(same(await other.responses.retrieve(created.id))).toEqual(same(created))
    expect(same(await other.responses.retrieve(second.id))).toEqual(same(second))

    openai.script.push({ kind: "json", body: textCompletion("Third answer") })
    await other.responses.create({ model: "gpt-fake", previous_response_id: second.id, input: "third" })
    expect(sentMessages(openai)).toEqual([["user", "first"], ["assistant", "Hello there"], ["user", "second"], ["assistant", "Second answer"], ["user", "third"]])

    // the whole conversation as stored, newest first by default
    const items = await other.responses.inputItems.list(second.id)
    expect(items.data.map((item: any) => [item.role, item.content[0].text])).toEqual([["user", "second"], ["assistant", "Hello there"], ["user", "first"]])
    const firstPage = await other.responses.inputItems.list(second.id, { order: "asc", limit: 2 })
    expect(firstPage.data.map((item: any) => item.content[0].text)).toEqual(["first", "Hello there"])
    expect(firstPage.has_more).toBe(true)
    const nextPage = await other.responses.inputItems.list(second.id, { order: "asc", limit: 2, after: firstPage.data[1].id })
    expect(nextPage.data.map((item: any) => item.content[0].text)).toEqual(["second"])
    expect(nextPage.has_more).toBe(false)

    const deleted = await fetch(`${answering.url}/openai/v1/responses/${created.id}`, { method: "DELETE" })
    expect(await deleted.json()).toEqual({ id: created.id, object: "response", deleted: true })
    for (const gateway of [client, other]) {
      const missing = await failure(gateway.responses.retrieve(created.id))
      expect(missing).toBeInstanceOf(OpenAI.NotFoundError)
      expect(missing?.message).toContain(`Response with id '${created.id}' not found.`)
      const continued = await failure(gateway.responses.create({ model: "gpt-fake", previous_response_id: created.id, input: "again" }))
      expect(continued).toBeInstanceOf(OpenAI.BadRequestError)
      expect(continued?.message).toContain(`previous_response_id: Previous response with id '${created.id}' not found.`)
    }
    expect(await failure(other.responses.delete(created.id))).toBeInstanceOf(OpenAI.NotFoundError)
    // the inference itself stays stored
    expect((await waitForInference(reading, created.id)).tags["gateway::response_store"]).toBe("true")
  })

  it("stores nothing readable with store: false; an unknown or malformed id is a 404", async () => {
    const client = clientOf(reading)
    const unstored = await client.responses.create({ model: "gpt-fake", input: "hi", store: false })
    expect((unstored as any).store).toBe(false)
    await waitForInference(reading, unstored.id)
    expect(await failure(client.responses.retrieve(unstored.id))).toBeInstanceOf(OpenAI.NotFoundError)
    const continued = await failure(client.responses.create({ model: "gpt-fake", previous_response_id: unstored.id, input: "again" }))
    expect(continued?.status).toBe(400)
    expect(await failure(client.responses.retrieve("resp_123"))).toBeInstanceOf(OpenAI.NotFoundError)
  })
})

describe("stored responses with authentication", () => {
  let openai: FakeOpenAi
  let database: TestDatabase
  let gateway: RunningGateway
  let alice: ApiKey
  let bob: ApiKey

  beforeAll(async () => {
    openai = await startFakeOpenAi()
    database = await freshDatabase("postgres")
    ;[alice, bob] = await createKeys(database.url, 2)
    gateway = await startGateway({
      config: config(openai, { auth: true }),
      env: { GATEWAY_RELATIONAL_DB_URL: database.url, GATEWAY_ANALYTICS_DB_URL: database.url }
    })
  })
  afterAll(async () => {
    await gateway?.stop()
    await database?.drop()
    await openai?.close()
  })

  it("a key sees its own responses only", async () => {
    const asAlice = clientOf(gateway, alice.key)
    const asBob = clientOf(gateway, bob.key)
    const created = await asAlice.responses.create({ model: "gpt-fake", input: "mine" })
    expect((await asAlice.responses.retrieve(created.id)).id).toBe(created.id)
    expect(await failure(asBob.responses.retrieve(created.id))).toBeInstanceOf(OpenAI.NotFoundError)
    expect(await failure(asBob.responses.inputItems.list(created.id))).toBeInstanceOf(OpenAI.NotFoundError)
    expect(await failure(asBob.responses.delete(created.id))).toBeInstanceOf(OpenAI.NotFoundError)
    const continued = await failure(asBob.responses.create({ model: "gpt-fake", previous_response_id: created.id, input: "theirs" }))
    expect(continued?.message).toContain(`Previous response with id '${created.id}' not found.`)
    expect((await asAlice.responses.create({ model: "gpt-fake", previous_response_id: created.id, input: "still mine" })).status).toBe("completed")
  })
})

describe("responses without a database", () => {
  let openai: FakeOpenAi
  let gateway: RunningGateway

  beforeAll(async () => {
    openai = await startFakeOpenAi()
    gateway = await startGateway({ config: config(openai, { database: false }) })
  })
  afterAll(async () => {
    await gateway?.stop()
    await openai?.close()
  })

  it("stores nothing by default, warns when store: true is asked, and refuses the stored responses' fields and routes naming GATEWAY_ANALYTICS_DB_URL", async () => {
    const client = clientOf(gateway)
    const { data, response } = await client.responses.create({ model: "gpt-fake", input: "hi" }).withResponse()
    expect((data as any).store).toBe(false)
    expect(response.headers.get("gateway-warning")).toBeNull()
    const asked = await client.responses.create({ model: "gpt-fake", input: "hi", store: true }).withResponse()
    expect((asked.data as any).store).toBe(false)
    expect(asked.response.headers.get("gateway-warning")).toContain("GATEWAY_ANALYTICS_DB_URL")
    const continued = await failure(client.responses.create({ model: "gpt-fake", previous_response_id: data.id, input: "again" }))
    expect(continued).toBeInstanceOf(OpenAI.BadRequestError)
    expect(continued?.message).toContain("GATEWAY_ANALYTICS_DB_URL")
    const read = await failure(client.responses.retrieve(data.id))
    expect(read?.status).toBe(400)
    expect(read?.message).toContain("GATEWAY_ANALYTICS_DB_URL")
  })
})
