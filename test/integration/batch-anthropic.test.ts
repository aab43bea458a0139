/**
 * The `anthropic` provider's batches over real HTTP, against a fake Message Batches API
 * (test/support/fakeBatchAnthropic.ts): the client made from a provider configuration as the
 * gateway makes it, `start` and `poll` through the real transport, for every way a batch ends,
 * an outage while polling, refused creations, and the credential on every exchange.
 */
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import type { ProviderConfig } from "../../src/config/types.ts"
import type { ModelRequest } from "../../src/inference/types.ts"
import { providerTypes } from "../../src/providers/registry.ts"
import { providerCall as providerCallResult } from "../../src/inference/providerCall.ts"
import { type BatchCall, type BatchOutcome, type BatchPollCall, type ProviderCall } from "../../src/providers/types.ts"
import { ProviderFailure } from "../../src/providers/failure.ts"
import type { HttpTransport } from "../../src/transport.ts"
import { HttpTransportLive } from "../../layers/HttpTransport.ts"
import {
  type FakeAnthropicBatch,
  partialErrorMessage,
  refusedBatchMessage,
  startAnthropicBatchFake
} from "../support/fakeBatchAnthropic.ts"

/** the call `providerCall` makes, or why it cannot be made */
const providerCall = <Request>(...args: Parameters<typeof providerCallResult<Request>>) => Result.merge(providerCallResult<Request>(...args))

let fake: FakeAnthropicBatch

beforeAll(async () => {
  fake = await startAnthropicBatchFake({ apiKey: "sk-ant-batch-secret-42" })
})
afterAll(() => fake.close())
beforeEach(() => fake.reset())

const providerConfig = (apiKey: string): ProviderConfig => ({
  name: "anthropic",
  type: "anthropic",
  modelName: "claude-sonnet-4-5",
  credential: { kind: "static", value: apiKey },
  // a configured edit: each request of the batch carries it
  extraBody: [{ pointer: "/metadata", value: { user_id: "batch-user" } }],
  extraHeaders: [],
  timeouts: {},
  settings: { api_base: fake.url }
})

const clientFor = (apiKey: string) => providerTypes.get("anthropic")!.make(providerConfig(apiKey)).batch!

const request = (text: string): ModelRequest => ({
  messages: [{ role: "user", content: [{ type: "text", text }] }],
  params: { max_tokens: 64 },
  functionType: "chat",
  jsonMode: "off",
  providerTools: []
})

const callFor = (text: string, apiKey: string): ProviderCall => {
  const made = providerCall(request(text), "claude", providerConfig(apiKey), { name: "v", extraBody: [], extraHeaders: [] }, {
    bodyEdits: [],
    headerEdits: [],
    credentials: {}
  })
  if (!("qualifiedName" in made)) throw new Error("the call could not be made")
  return made
}

const texts = ["alpha", "beta", "gamma", "delta"]
const ids = texts.map((_, index) => `00000000-0000-7000-8000-00000000000${index}`)
const callsFor = (apiKey = fake.apiKey): ReadonlyArray<BatchCall> => texts.map((text, index) => ({ id: ids[index], call: callFor(text, apiKey) }))
const pollCall = (apiKey = fake.apiKey): BatchPollCall => ({ apiKey, qualifiedName: callFor("x", apiKey).qualifiedName, extraHeaders: [] })

const run = <A, E>(effect: Effect.Effect<A, E, HttpTransport>) => Effect.runPromise(Effect.result(Effect.provide(effect, HttpTransportLive())))
const succeeded = async <A, E>(effect: Effect.Effect<A, E, HttpTransport>): Promise<A> => Result.getOrThrow(await run(effect))
const failed = async <A, E>(effect: Effect.Effect<A, E, HttpTransport>): Promise<E> => {
  const result = await run(effect)
  if (Result.isSuccess(result)) throw new Error(`a failure was expected, got ${JSON.stringify(result.success)}`)
  return result.failure
}

/** starts a batch of the four calls and polls it until it is no longer pending (at most `maxPolls` times) */
const startAndFinish = async (maxPolls = 5) => {
  const client = clientFor(fake.apiKey)
  const started = await succeeded(client.start(callsFor()))
  const outcomes: Array<BatchOutcome> = []
  for (let poll = 0; poll < maxPolls; poll++) {
    const outcome = await succeeded(client.poll(started.handle, pollCall()))
    outcomes.push(outcome)
    if (outcome.status !== "pending") break
  }
  return { started, outcomes, last: outcomes[outcomes.length - 1] }
}

const completedResults = (outcome: BatchOutcome) => {
  if (outcome.status !== "completed") throw new Error(`completed expected, got ${JSON.stringify(outcome)}`)
  return outcome.results
}

describe("anthropic batches against the Message Batches API", () => {
  it("a batch that completes: each request sent as its single-call body, each answer parsed with its usage", async () => {
    const { started, outcomes, last } = await startAndFinish()
    expect(outcomes.map((outcome) => outcome.status)).toEqual(["pending", "completed"])
    expect(started.handle.providerBatchId).toMatch(/^msgbatch_01[0-9A-Za-z]{22}$/)
    const [created] = fake.batches
    expect(created.id).toBe(started.handle.providerBatchId)
    expect(created.requests.map((item) => item.id)).toEqual(ids)
    expect(created.requests[0].body).toEqual({
      model: "claude-sonnet-4-5",
      max_tokens: 64,
      messages: [{ role: "user", content: [{ type: "text", text: "alpha" }] }],
      metadata: { user_id: "batch-user" }
    })
    // the raw request of each inference is the body Anthropic received for it
    expect(started.rawRequests.map((raw) => JSON.parse(raw))).toEqual(created.requests.map((item) => item.body))
    const results = completedResults(last)
    expect(results.map((result) => result.id)).toEqual(ids)
    for (const [index, result] of results.entries()) {
      if (!result.ok) throw new Error(result.message)
      expect(result.response.output).toEqual([{ type: "text", text: `answer to ${texts[index]}` }])
      expect(result.response.usage).toEqual({ input_tokens: 20, output_tokens: 3, cached_input_tokens: 0 })
      expect(result.response.finishReason).toBe("stop")
      expect(JSON.parse(result.response.rawResponse)).toMatchObject({ type: "message", usage: { service_tier: "batch" } })
    }
    expect(fake.requests.map((sent) => `${sent.method} ${sent.path}`)).toEqual([
      "POST /v1/messages/batches",
      `GET /v1/messages/batches/${created.id}`,
      `GET /v1/messages/batches/${created.id}`,
      `GET /v1/messages/batches/${created.id}/results`
    ])
  })

  it("a batch whose every request is refused for the same reason fails, saying why", async () => {
    fake.ending = "fail"
    const { last } = await startAndFinish()
    expect(last).toEqual({ status: "failed", message: `every request of the batch was refused: invalid_request_error: ${refusedBatchMessage}` })
  })

  it("a batch that expires: the answered requests' results, the others failed as expired", async () => {
    fake.ending = "expire"
    const results = completedResults((await startAndFinish()).last)
    expect(results.map((result) => result.ok)).toEqual([true, false, true, false])
    expect(results[1]).toEqual({ id: ids[1], ok: false, message: "the batch expired (24 hours after its creation) before this request ran" })
    expect(results[2].ok && results[2].response.output).toEqual([{ type: "text", text: "answer to gamma" }])
  })

  it("a batch that partially fails: each refused request carries Anthropic's error", async () => {
    fake.ending = "partial"
    const results = completedResults((await startAndFinish()).last)
    expect(results.map((result) => result.ok)).toEqual([true, false, true, false])
    expect(results[3]).toEqual({ id: ids[3], ok: false, message: `Anthropic refused this request: invalid_request_error: ${partialErrorMessage}` })
  })

  it("a batch cancelled on Anthropic's side: pending while canceling, then the requests that ran and the cancelled ones", async () => {
    fake.ending = "cancel"
    fake.pollsUntilDone = 2
    const { outcomes, last } = await startAndFinish()
    expect(outcomes.map((outcome) => outcome.status)).toEqual(["pending", "pending", "completed"])
    const results = completedResults(last)
    expect(results.map((result) => result.ok)).toEqual([true, false, true, false])
    expect(results[1]).toEqual({ id: ids[1], ok: false, message: "the batch was cancelled before this request ran" })
  })

  it("an outage while polling fails the poll with the status; once it ends, the next poll completes", async () => {
    fake.pollsUntilDone = 0
    const client = clientFor(fake.apiKey)
    const started = await succeeded(client.start(callsFor()))
    fake.outage = true
    const failure = await failed(client.poll(started.handle, pollCall()))
    expect(failure).toBeInstanceOf(ProviderFailure)
    expect(failure).toMatchObject({ status: 503, message: "HTTP 503: api_error: Service Unavailable" })
    fake.outage = false
    expect(completedResults(await succeeded(client.poll(started.handle, pollCall())))).toHaveLength(4)
  })

  it("a refused creation fails with Anthropic's status and message: a wrong key, a body it rejects, a server error", async () => {
    const wrongKey = "sk-ant-wrong-key-7"
    const unauthorized = await failed(clientFor(wrongKey).start(callsFor(wrongKey)))
    expect(unauthorized).toMatchObject({ status: 401, message: "HTTP 401: authentication_error: invalid x-api-key" })
    const twice = [...callsFor().slice(0, 2), { id: ids[0], call: callFor("again", fake.apiKey) }]
    const rejected = await failed(clientFor(fake.apiKey).start(twice))
    expect(rejected).toMatchObject({ status: 400, message: `HTTP 400: invalid_request_error: requests: custom_id ${ids[0]} is not unique within the batch` })
    fake.refuseCreation = true
    expect(await failed(clientFor(fake.apiKey).start(callsFor()))).toMatchObject({ status: 500 })
    expect(fake.batches).toHaveLength(0)
  })

  it("the credential and Anthropic's version go with every exchange, and never into a failure's message", async () => {
    const { last } = await startAndFinish()
    expect(last.status).toBe("completed")
    expect(fake.requests.length).toBeGreaterThanOrEqual(4)
    for (const sent of fake.requests) {
      expect(sent.headers["x-api-key"]).toBe(fake.apiKey)
      expect(sent.headers["anthropic-version"]).toBe("2023-06-01")
    }
    // Anthropic's answer about an unknown batch names it: a batch id that is the key is not echoed back
    const unknown = await failed(clientFor(fake.apiKey).poll({ providerBatchId: fake.apiKey, data: { ids } }, pollCall()))
    expect(unknown).toMatchObject({ status: 404 })
    expect(unknown.message).toContain("not_found_error: message batch")
    expect(unknown.message).not.toContain(fake.apiKey)
  })
})
