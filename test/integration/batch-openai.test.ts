/**
 * Batches through the `openai` and `azure` provider clients, as the configuration makes them,
 * over real HTTP against a fake Batch API of each (`fakeBatchOpenAi.ts`): a batch that completes
 * (answers read as single calls, each request as sent), fails, expires, partly fails or is
 * cancelled on the provider's side; an outage while polling; a refused creation; the credential
 * on every exchange and never in a failure; and, for OpenAI, a provider in Responses API mode.
 */
import * as Result from "effect/Result"
import * as Effect from "effect/Effect"
import { afterAll, beforeEach, describe, expect, it } from "vitest"
import { HttpTransportLive } from "../../layers/HttpTransport.ts"
import { buildConfig } from "../../src/config/build.ts"
import type { ProviderConfig } from "../../src/config/types.ts"
import type { ModelRequest } from "../../src/inference/types.ts"
import { providerTypes } from "../../src/providers/registry.ts"
import { providerCall as providerCallResult } from "../../src/inference/providerCall.ts"
import { type BatchCall, type BatchClient, type BatchOutcome, type BatchPollCall, type ProviderCall } from "../../src/providers/types.ts"
import { ProviderFailure } from "../../src/providers/failure.ts"
import type { HttpTransport } from "../../src/transport.ts"
import {
  azureBatchFakeDeployment,
  azureBatchFakeKey,
  azureBatchGatewayConfig,
  fakeBatchFailure,
  fakeCancelledMessage,
  fakeExpiredMessage,
  type FakeBatchGatewayConfig,
  type FakeOpenAiBatch,
  fakeRequestError,
  fakeUsage,
  openAiBatchFakeKey,
  openAiBatchFakeModel,
  openAiBatchGatewayConfig,
  startAzureBatchFake,
  startOpenAiBatchFake
} from "../support/fakeBatchOpenAi.ts"

/** the call `providerCall` makes, or why it cannot be made */
const providerCall = <Request>(...args: Parameters<typeof providerCallResult<Request>>) => Result.merge(providerCallResult<Request>(...args))

/** the provider `p` of the model `batch_model` in a fake's configuration, with the fake's key in the environment (or `env`) */
const providerOf = (config: FakeBatchGatewayConfig, env: Readonly<Record<string, string>> = config.env): ProviderConfig => {
  const built = buildConfig({ sources: [{ path: "/cfg/gateway.toml", text: config.toml }], readFile: () => undefined, env })
  if ("errors" in built) throw new Error(built.errors.join("\n"))
  return built.config.models.get("batch_model")!.providers.get("p")!
}

const clientOf = (provider: ProviderConfig): BatchClient => providerTypes.get(provider.type)!.make(provider).batch!

const request = (text: string): ModelRequest => ({
  system: "Be brief.",
  messages: [{ role: "user", content: [{ type: "text", text }] }],
  params: { max_tokens: 30 },
  functionType: "chat",
  jsonMode: "off",
  providerTools: []
})

const callsOf = (provider: ProviderConfig, texts: ReadonlyArray<string>): Array<BatchCall> =>
  texts.map((text, index) => {
    const call = providerCall(request(text), "batch_model", provider, { name: "v", extraBody: [], extraHeaders: [] }, {
      bodyEdits: [],
      headerEdits: [],
      credentials: {}
    })
    if (!("request" in call)) throw new Error(call.message)
    return { id: `0192f0c8-0000-7000-8000-00000000000${index}`, call: call as ProviderCall }
  })

const pollCallOf = (call: ProviderCall): BatchPollCall => ({ apiKey: call.apiKey, qualifiedName: call.qualifiedName, extraHeaders: call.extraHeaders })

const run = <A, E>(effect: Effect.Effect<A, E, HttpTransport>): Promise<A> => Effect.runPromise(Effect.provide(effect, HttpTransportLive()))

/** a failure of `effect`, which must fail */
const failureOf = <A, E>(effect: Effect.Effect<A, E, HttpTransport>): Promise<E> => run(Effect.flip(effect))

const texts = ["Hi A", "Hi B", "Hi C", "Hi D"]

interface Subject {
  readonly name: string
  readonly start: () => Promise<FakeOpenAiBatch>
  readonly config: (fake: FakeOpenAiBatch) => FakeBatchGatewayConfig
  readonly key: string
  /** the credential as the server reads it from a request's headers */
  readonly sentKey: (headers: Readonly<Record<string, unknown>>) => unknown
  /** what every line's body names as its model */
  readonly model: string
}

const subjects: ReadonlyArray<Subject> = [
  {
    name: "openai",
    start: () => startOpenAiBatchFake(),
    config: (fake) => openAiBatchGatewayConfig(fake),
    key: openAiBatchFakeKey,
    sentKey: (headers) => String(headers.authorization).replace(/^Bearer /, ""),
    model: openAiBatchFakeModel
  },
  {
    name: "azure",
    start: () => startAzureBatchFake(),
    config: (fake) => azureBatchGatewayConfig(fake),
    key: azureBatchFakeKey,
    sentKey: (headers) => headers["api-key"],
    model: azureBatchFakeDeployment
  }
]

describe.each(subjects)("$name batches", (subject) => {
  const started = subject.start()
  let fake: FakeOpenAiBatch
  let provider: ProviderConfig
  let client: BatchClient
  beforeEach(async () => {
    fake = await started
    fake.reset()
    provider = providerOf(subject.config(fake))
    client = clientOf(provider)
  })
  afterAll(async () => (await started).close())

  /** starts a batch of `texts`, then polls it until it ends (at most `polls` times) */
  const runBatch = async (batchTexts: ReadonlyArray<string> = texts, polls = 5) => {
    const calls = callsOf(provider, batchTexts)
    const batch = await run(client.start(calls))
    const outcomes: Array<BatchOutcome> = []
    for (let i = 0; i < polls; i++) {
      const outcome = await run(client.poll(batch.handle, pollCallOf(calls[0].call)))
      outcomes.push(outcome)
      if (outcome.status !== "pending") break
    }
    return { calls, batch, outcomes, last: outcomes[outcomes.length - 1] }
  }

  const completed = (outcome: BatchOutcome) => {
    if (outcome.status !== "completed") throw new Error(`expected a completed batch, got ${JSON.stringify(outcome)}`)
    return outcome.results
  }

  const answerOf = (text: string) => ({
    output: [{ type: "text", text: `answer to ${text}` }],
    usage: { input_tokens: fakeUsage(`answer to ${text}`).input, output_tokens: fakeUsage(`answer to ${text}`).output },
    finishReason: "stop"
  })

  it("completes: each request sent as the single call's body, each answer read into output blocks and usage", async () => {
    fake.pollsUntilDone = 2
    const { calls, batch, outcomes, last } = await runBatch()
    expect(outcomes.map((outcome) => outcome.status)).toEqual(["pending", "pending", "completed"])
    expect(fake.batches).toHaveLength(1)
    expect(batch.handle.providerBatchId).toBe(fake.batches[0].id)
    const received = fake.batches[0].requests
    expect(received.map((line) => line.id)).toEqual(calls.map((call) => call.id))
    expect(received.map((line) => line.body)).toEqual(batch.rawRequests.map((raw) => JSON.parse(raw)))
    expect(received.every((line) => line.body.model === subject.model)).toBe(true)
    const results = completed(last)
    expect(results.map((result) => result.id)).toEqual(calls.map((call) => call.id))
    results.forEach((result, index) => {
      expect(result).toMatchObject({ ok: true, response: answerOf(texts[index]) })
      if (result.ok) expect(JSON.parse(result.response.rawResponse).object).toBe("chat.completion")
    })
  })

  it("fails as a whole with the provider's reason", async () => {
    fake.ending = "fail"
    const { last } = await runBatch()
    expect(last).toEqual({ status: "failed", message: `the provider's batch failed: token_limit_exceeded: ${fakeBatchFailure}` })
  })

  it("expires: the requests that ran answered, the others with the provider's expiry error", async () => {
    fake.ending = "expire"
    const results = completed((await runBatch()).last)
    expect(results.map((result) => result.ok)).toEqual([true, false, true, false])
    expect(results[0]).toMatchObject({ response: answerOf("Hi A") })
    expect(results[1]).toMatchObject({ ok: false, message: `${fakeExpiredMessage} (batch_expired)` })
  })

  it("completes with some requests refused: each refusal with its status and the provider's message", async () => {
    fake.ending = "partial"
    const results = completed((await runBatch()).last)
    expect(results.map((result) => result.ok)).toEqual([true, false, true, false])
    expect(results[3]).toMatchObject({ ok: false, message: `HTTP 400: ${fakeRequestError}` })
    expect(results[2]).toMatchObject({ response: answerOf("Hi C") })
  })

  it("is cancelled on the provider's side: what ran answered, the others with the cancellation", async () => {
    fake.ending = "cancel"
    fake.pollsUntilDone = 2
    const { outcomes, last } = await runBatch()
    // `cancelling` is still running
    expect(outcomes.map((outcome) => outcome.status)).toEqual(["pending", "pending", "completed"])
    const results = completed(last)
    expect(results.map((result) => result.ok)).toEqual([true, false, true, false])
    expect(results[1]).toMatchObject({ ok: false, message: `${fakeCancelledMessage} (batch_cancelled)` })
  })

  it("fails a poll during an outage with the provider's status, and completes on the next poll once it is over", async () => {
    fake.pollsUntilDone = 0
    const calls = callsOf(provider, texts.slice(0, 2))
    const batch = await run(client.start(calls))
    fake.outage = true
    const failure = await failureOf(client.poll(batch.handle, pollCallOf(calls[0].call)))
    expect(failure).toBeInstanceOf(ProviderFailure)
    expect(failure).toMatchObject({ status: 503, message: "HTTP 503: The server is overloaded or not ready yet." })
    fake.outage = false
    const results = completed(await run(client.poll(batch.handle, pollCallOf(calls[0].call))))
    expect(results.map((result) => result.ok)).toEqual([true, true])
  })

  it("fails to start when the provider refuses the batch, with its status and message", async () => {
    fake.refuseCreation = true
    fake.creationRefusal = { status: 400, message: "Enqueued token limit reached for this deployment. Please try submitting fewer batches." }
    const failure = await failureOf(client.start(callsOf(provider, texts)))
    expect(failure).toBeInstanceOf(ProviderFailure)
    expect(failure).toMatchObject({ status: 400, message: "HTTP 400: Enqueued token limit reached for this deployment. Please try submitting fewer batches." })
    expect(fake.batches).toHaveLength(0)
  })

  it("sends the credential on every exchange, and never shows a refused one", async () => {
    await runBatch(texts.slice(0, 1))
    expect(fake.requests.length).toBeGreaterThanOrEqual(4)
    for (const sent of fake.requests) expect(subject.sentKey(sent.headers)).toBe(subject.key)

    const wrongKey = "sk-wrong-batch-key-0123456789"
    const config = subject.config(fake)
    const wrong = providerOf(config, Object.fromEntries(Object.keys(config.env).map((name) => [name, wrongKey])))
    const failure = await failureOf(clientOf(wrong).start(callsOf(wrong, texts)))
    expect(failure).toMatchObject({ status: 401 })
    expect(failure.message).not.toContain(wrongKey)
  })
})

describe("azure batch uploads", () => {
  it("waits until Azure has processed the upload before creating the batch, on the resource's api-version", async () => {
    const fake = await startAzureBatchFake()
    try {
      const provider = providerOf(azureBatchGatewayConfig(fake))
      await run(clientOf(provider).start(callsOf(provider, texts.slice(0, 1))))
      expect(fake.requests.map((sent) => `${sent.method} ${sent.path.replace(/file-[0-9a-f]+/, "{file}")}`)).toEqual([
        "POST /openai/files?api-version=2024-10-21",
        "GET /openai/files/{file}?api-version=2024-10-21",
        "GET /openai/files/{file}?api-version=2024-10-21",
        "POST /openai/batches?api-version=2024-10-21"
      ])
    } finally {
      await fake.close()
    }
  })
})

describe("openai batches in Responses API mode", () => {
  it("sends /v1/responses lines and reads the Response objects", async () => {
    const fake = await startOpenAiBatchFake()
    try {
      const provider = providerOf(openAiBatchGatewayConfig(fake, { apiType: "responses" }))
      const client = clientOf(provider)
      const calls = callsOf(provider, ["Hi R"])
      const batch = await run(client.start(calls))
      expect(fake.batches[0].requests[0].body).toMatchObject({ model: openAiBatchFakeModel, input: [{ role: "user" }], store: false })
      await run(client.poll(batch.handle, pollCallOf(calls[0].call)))
      const results = await run(client.poll(batch.handle, pollCallOf(calls[0].call)))
      expect(results).toMatchObject({
        status: "completed",
        results: [{ ok: true, response: { output: [{ type: "text", text: "answer to Hi R" }], usage: { input_tokens: 11, output_tokens: 4 } } }]
      })
    } finally {
      await fake.close()
    }
  })
})
