/**
 * The tag `gateway::api_key_public_id` (issue 5, "Authentication"): what a request made with a
 * key stores carries its public id, read back over HTTP (get_inferences with feedback,
 * list_inferences filtered by it), for plain and streamed inferences, the OpenAI endpoint and
 * feedback. Tags starting with `gateway::` are the gateway's own: a client that sets one gets a
 * 400, so it cannot pass as another key.
 *
 * Observability and the keys share one Postgres database, as they may.
 */
import OpenAI from "openai"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type ApiKey, call, createKeys, withKey } from "../support/access.ts"
import { freshDatabase, type TestDatabase } from "../support/databases.ts"
import { type RunningGateway, startGateway } from "../support/gateway.ts"
import { observabilityToml, waitForFeedback, waitForInference, waitForInferences } from "../support/observability.ts"

const keyTag = "gateway::api_key_public_id"

const config = (auth: boolean) => `
${observabilityToml()}
[gateway.auth]
enabled = ${auth}

[functions.chat]
type = "chat"
[functions.chat.variants.text]
type = "chat_completion"
model = "dummy::hello"
`

let database: TestDatabase
let gateway: RunningGateway
let open: RunningGateway
let alice: ApiKey
let bob: ApiKey

beforeAll(async () => {
  database = await freshDatabase("postgres")
  const env = { GATEWAY_RELATIONAL_DB_URL: database.url, GATEWAY_ANALYTICS_DB_URL: database.url }
  ;[alice, bob] = await createKeys(database.url, 2)
  ;[gateway, open] = await Promise.all([startGateway({ config: config(true), env }), startGateway({ config: config(false), env })])
})
afterAll(async () => {
  await Promise.all([gateway?.stop(), open?.stop()])
  await database?.drop()
})

const chatBody = (text: string, extra: Record<string, unknown> = {}) => ({
  function_name: "chat",
  input: { messages: [{ role: "user", content: text }] },
  ...extra
})

const sdk = (key: ApiKey) => new OpenAI({ baseURL: `${gateway.url}/openai/v1`, apiKey: key.key, maxRetries: 0 })

describe("requests made with a key store its public id", () => {
  it("plain and streamed inferences on /inference, each with the id of its own key, next to the client's tags", async () => {
    const plain = await call(gateway, "POST", "/inference", { key: alice, body: chatBody("plain", { tags: { team: "red" } }) })
    expect(plain.status, plain.text).toBe(200)
    const other = await call(gateway, "POST", "/inference", { key: bob, body: chatBody("other key") })
    expect(other.status, other.text).toBe(200)

    const streamed = await fetch(`${gateway.url}/inference`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${alice.key}` },
      body: JSON.stringify(chatBody("streamed", { stream: true, tags: { team: "blue" } }))
    })
    expect(streamed.status).toBe(200)
    const events = (await streamed.text()).split("\n\n").filter((block) => block.startsWith("data: {"))
    const streamedId = JSON.parse(events[0].slice("data: ".length)).inference_id

    const [a, b, s] = await waitForInferences(withKey(gateway, alice), [plain.body.inference_id, other.body.inference_id, streamedId])
    expect(a.tags).toEqual({ team: "red", [keyTag]: alice.publicId })
    expect(b.tags).toEqual({ [keyTag]: bob.publicId })
    expect(s.tags).toEqual({ team: "blue", [keyTag]: alice.publicId })
  })

  it("inferences through the OpenAI endpoint, plain and streamed, with the SDK", async () => {
    const completion = await sdk(bob).chat.completions.create({
      model: "gateway::function_name::chat",
      messages: [{ role: "user", content: "via the SDK" }],
      "gateway::tags": { source: "sdk" }
    } as OpenAI.ChatCompletionCreateParamsNonStreaming)
    const stream = await sdk(alice).chat.completions.create({
      model: "gateway::function_name::chat",
      messages: [{ role: "user", content: "streamed via the SDK" }],
      stream: true
    })
    let streamedId: string | undefined
    for await (const chunk of stream) streamedId ??= chunk.id
    const [plain, streamed] = await waitForInferences(withKey(gateway, alice), [completion.id, streamedId!])
    expect(plain.tags).toEqual({ source: "sdk", [keyTag]: bob.publicId })
    expect(streamed.tags).toEqual({ [keyTag]: alice.publicId })
  })

  it("feedback carries the id of the key that sent it, not that of the inference's", async () => {
    const inference = await call(gateway, "POST", "/inference", { key: alice, body: chatBody("to be judged") })
    expect(inference.status, inference.text).toBe(200)
    const id = inference.body.inference_id
    await waitForInference(withKey(gateway, alice), id)
    const feedback = await call(gateway, "POST", "/feedback", {
      key: bob,
      body: { metric_name: "comment", inference_id: id, value: "well put", tags: { reviewer: "bob" } }
    })
    expect(feedback.status, feedback.text).toBe(200)
    const [stored] = await waitForFeedback(withKey(gateway, bob), id, (rows) => rows.length === 1)
    expect(stored.tags).toEqual({ reviewer: "bob", [keyTag]: bob.publicId })
  })

  it("list_inferences filters on the tag", async () => {
    const ids: Array<string> = []
    for (const key of [alice, bob, bob]) {
      const answer = await call(gateway, "POST", "/inference", { key, body: chatBody("listed", { tags: { batch: "list" } }) })
      expect(answer.status).toBe(200)
      ids.push(answer.body.inference_id)
    }
    await waitForInferences(withKey(gateway, alice), ids)
    const listed = await call(gateway, "POST", "/v1/inferences/list_inferences", {
      key: alice,
      body: {
        function_name: "chat",
        filters: {
          type: "and",
          children: [{ type: "tag", key: "batch", value: "list" }, { type: "tag", key: keyTag, value: bob.publicId }]
        }
      }
    })
    expect(listed.status, listed.text).toBe(200)
    expect(listed.body.inferences.map((row: any) => row.inference_id).sort()).toEqual(ids.slice(1).sort())
  })
})

describe("tags starting with gateway:: are the gateway's own", () => {
  const impersonation = { [keyTag]: "aaaaaaaaaaaa" }

  it("/inference and /feedback refuse them with a 400 naming the tag, with or without authentication", async () => {
    for (const [target, key] of [[gateway, alice], [open, undefined]] as const) {
      for (const tags of [impersonation, { "gateway::anything": "x" }, { ok: "1", "gateway::": "" }]) {
        const inference = await call(target, "POST", "/inference", { key, body: chatBody("spoof", { tags }) })
        expect(inference.status, inference.text).toBe(400)
        const name = Object.keys(tags).find((tag) => tag.startsWith("gateway::"))!
        expect(inference.body.error).toBe(`tags.${name}: tags starting with "gateway::" are reserved for the gateway`)
        const feedback = await call(target, "POST", "/feedback", {
          key,
          body: { metric_name: "comment", episode_id: "0190c3d4-0000-7000-8000-000000000000", value: "x", tags }
        })
        expect(feedback.status, feedback.text).toBe(400)
        expect(feedback.body.error).toContain("are reserved for the gateway")
      }
    }
  })

  it("the OpenAI endpoint refuses them in gateway::tags in its shape; the SDK raises BadRequestError", async () => {
    const answer = await call(gateway, "POST", "/openai/v1/chat/completions", {
      key: alice,
      body: { model: "gateway::function_name::chat", messages: [{ role: "user", content: "spoof" }], "gateway::tags": impersonation }
    })
    expect(answer.status, answer.text).toBe(400)
    expect(answer.body.error).toMatchObject({ type: "invalid_request_error" })
    expect(answer.body.error.message).toContain(`gateway::tags.${keyTag}`)
    const error = await sdk(alice).chat.completions.create({
      model: "gateway::function_name::chat",
      messages: [{ role: "user", content: "spoof" }],
      "gateway::tags": impersonation
    } as OpenAI.ChatCompletionCreateParamsNonStreaming).then(() => undefined, (caught: unknown) => caught)
    expect(error).toBeInstanceOf(OpenAI.BadRequestError)
  })

  it("without authentication nothing stores a key id", async () => {
    const answer = await call(open, "POST", "/inference", { body: chatBody("anonymous", { tags: { who: "nobody" } }) })
    expect(answer.status, answer.text).toBe(200)
    const stored = await waitForInference(open, answer.body.inference_id)
    expect(stored.tags).toEqual({ who: "nobody" })
  })
})

