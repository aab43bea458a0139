/**
 * Gemini batches over real HTTP against the fake batch APIs (test/support/fakeBatchGemini.ts):
 * the provider client as the gateway builds it from configuration (the helpers' TOML), with the
 * live transport, for `google_ai_studio_gemini` (inline batch mode) and `gcp_vertex_gemini`
 * (Cloud Storage and batch prediction jobs): a batch completing, failing, expiring, partially
 * failing, cancelled upstream, an outage while polling, a refused creation, and the credential
 * on every exchange but in no failure message.
 */
import * as Result from "effect/Result"
import * as crypto from "node:crypto"
import * as Effect from "effect/Effect"
import * as ManagedRuntime from "effect/ManagedRuntime"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { HttpTransportLive } from "../../layers/HttpTransport.ts"
import { buildConfig } from "../../src/config/build.ts"
import type { ProviderConfig } from "../../src/config/types.ts"
import type { ModelRequest } from "../../src/inference/types.ts"
import { providerTypes } from "../../src/providers/registry.ts"
import { providerCall as providerCallResult } from "../../src/inference/providerCall.ts"
import { type BatchCall, type BatchOutcome, type BatchResult, type StartedBatch } from "../../src/providers/types.ts"
import { ProviderFailure } from "../../src/providers/failure.ts"
import type { HttpTransport } from "../../src/transport.ts"
import type { FakeBatchProvider } from "../support/fakeBatch.ts"
import {
  aiStudioBatchGatewayConfig,
  type FakeBatchGatewayConfig,
  startAiStudioBatchFake,
  startVertexBatchFake,
  vertexBatchGatewayConfig
} from "../support/fakeBatchGemini.ts"

/** the call `providerCall` makes, or why it cannot be made */
const providerCall = <Request>(...args: Parameters<typeof providerCallResult<Request>>) => Result.merge(providerCallResult<Request>(...args))

interface Harness<Fake extends FakeBatchProvider> {
  readonly type: string
  readonly start: () => Promise<Fake>
  readonly config: (fake: Fake) => FakeBatchGatewayConfig
  /** the secrets no failure message may hold */
  readonly secrets: (fake: Fake) => ReadonlyArray<string>
  /** whether an upstream request carried the credential */
  readonly authenticated: (request: FakeBatchProvider["requests"][number], fake: Fake) => boolean
  /** the body the provider received for one request, from the body the gateway built */
  readonly received: (rawRequest: string, id: string) => unknown
}

const studio: Harness<Awaited<ReturnType<typeof startAiStudioBatchFake>>> = {
  type: "google_ai_studio_gemini",
  start: () => startAiStudioBatchFake(),
  config: (fake) => aiStudioBatchGatewayConfig(fake),
  secrets: (fake) => [fake.apiKey],
  authenticated: (request, fake) => request.headers["x-goog-api-key"] === fake.apiKey,
  received: (rawRequest) => JSON.parse(rawRequest)
}

const vertex: Harness<Awaited<ReturnType<typeof startVertexBatchFake>>> = {
  type: "gcp_vertex_gemini",
  start: () => startVertexBatchFake(),
  config: (fake) => vertexBatchGatewayConfig(fake),
  secrets: (fake) => [JSON.parse(fake.serviceAccount).private_key, "ya29.batch-"],
  // the token endpoint is where the service account's signed assertion goes; everything else needs the token
  authenticated: (request) => request.path === "/token" || /^Bearer ya29\.batch-\d+$/.test(String(request.headers.authorization)),
  received: (rawRequest, id) => {
    const body = JSON.parse(rawRequest)
    return { ...body, labels: { ...body.labels, gateway_inference_id: id } }
  }
}

const request = (text: string): ModelRequest => ({
  messages: [{ role: "user", content: [{ type: "text", text }] }],
  params: {},
  functionType: "chat",
  jsonMode: "off",
  providerTools: []
})

const providerOf = (gateway: FakeBatchGatewayConfig): { model: string; provider: ProviderConfig } => {
  const built = buildConfig({ sources: [{ path: "/cfg/gateway.toml", text: gateway.toml }], readFile: () => undefined, env: gateway.env })
  if ("errors" in built) throw new Error(built.errors.join("\n"))
  const [model] = built.config.models.values()
  return { model: model.name, provider: [...model.providers.values()][0] }
}

const suite = <Fake extends FakeBatchProvider>(harness: Harness<Fake>) =>
  describe(`${harness.type} batches against its fake`, () => {
    let fake: Fake
    let runtime: ManagedRuntime.ManagedRuntime<HttpTransport, never>
    let model: string
    let provider: ProviderConfig
    const failures: Array<ProviderFailure> = []

    beforeAll(async () => {
      fake = await harness.start()
      runtime = ManagedRuntime.make(HttpTransportLive())
      ;({ model, provider } = providerOf(harness.config(fake)))
    })
    afterAll(async () => {
      // every failure any test saw: none holds the credential
      for (const failure of failures) for (const secret of harness.secrets(fake)) expect(failure.message).not.toContain(secret)
      await runtime?.dispose()
      await fake?.close()
    })
    beforeEach(() => {
      fake.reset()
      fake.pollsUntilDone = 0
    })

    const client = () => providerTypes.get(harness.type)!.make(provider).batch!
    const calls = (...texts: ReadonlyArray<string>): ReadonlyArray<BatchCall> =>
      texts.map((text) => {
        const call = providerCall(request(text), model, provider, { name: "v", extraBody: [], extraHeaders: [] }, { bodyEdits: [], headerEdits: [], credentials: {} })
        if (call instanceof ProviderFailure || !("request" in call)) throw new Error("no call")
        return { id: crypto.randomUUID(), call }
      })
    const pollCall = () => {
      const { call } = calls("x")[0]
      return { apiKey: call.apiKey, qualifiedName: call.qualifiedName, extraHeaders: [] }
    }
    const start = (batch: ReadonlyArray<BatchCall>) => runtime.runPromise(client().start(batch) as Effect.Effect<StartedBatch, ProviderFailure, HttpTransport>)
    const poll = (started: StartedBatch) => runtime.runPromise(client().poll(started.handle, pollCall()))
    const failureOf = async (effect: Effect.Effect<unknown, unknown, HttpTransport>) => {
      const failure = await runtime.runPromise(Effect.flip(effect))
      if (!(failure instanceof ProviderFailure)) throw new Error(`expected a ProviderFailure, got ${String(failure)}`)
      failures.push(failure)
      return failure
    }
    const resultsOf = (outcome: BatchOutcome): ReadonlyArray<BatchResult> => {
      if (outcome.status !== "completed") throw new Error(`expected a completed batch, got ${JSON.stringify(outcome)}`)
      return outcome.results
    }

    it("a batch that completes: pending first, then each answer parsed (text, usage), each raw request the body the provider received", async () => {
      fake.pollsUntilDone = 1
      const batch = calls("alpha", "beta")
      const started = await start(batch)
      expect(fake.batches).toHaveLength(1)
      expect(started.handle.providerBatchId).toBe(fake.batches[0].id)
      expect(fake.batches[0].requests.map((sent) => sent.id)).toEqual(batch.map((call) => call.id))
      started.rawRequests.forEach((raw, index) => expect(fake.batches[0].requests[index].body).toEqual(harness.received(raw, batch[index].id)))
      expect(await poll(started)).toEqual({ status: "pending" })
      const results = resultsOf(await poll(started))
      expect(results.map((result) => result.id)).toEqual(batch.map((call) => call.id))
      for (const [index, text] of ["alpha", "beta"].entries()) {
        const result = results[index]
        if (!result.ok) throw new Error(result.message)
        expect(result.response.output).toEqual([{ type: "text", text: `answer to ${text}` }])
        expect(result.response.usage).toEqual({ input_tokens: 12, output_tokens: 7 })
        expect(result.response.finishReason).toBe("stop")
      }
    })

    it("a batch that fails as a whole: failed, with the provider's reason", async () => {
      fake.ending = "fail"
      const outcome = await poll(await start(calls("alpha", "beta")))
      expect(outcome.status).toBe("failed")
      expect(outcome.status === "failed" && outcome.message).toMatch(/^the provider's batch failed: .*(invalid|JSONL)/)
    })

    it("a batch that expires: the answers it made, the other requests said expired", async () => {
      fake.ending = "expire"
      const results = resultsOf(await poll(await start(calls("one", "two", "three"))))
      expect(results.map((result) => result.ok)).toEqual([true, false, true])
      expect(results[1]).toMatchObject({ ok: false, message: "the batch expired before this request ran" })
    })

    it("a batch where some requests fail: their errors, the others' answers", async () => {
      fake.ending = "partial"
      const results = resultsOf(await poll(await start(calls("one", "two"))))
      expect(results[0]).toMatchObject({ ok: true })
      expect(results[1]).toMatchObject({ ok: false })
      expect(!results[1].ok && results[1].message).toContain("invalid argument")
    })

    it("a batch cancelled on the provider's side: the answers it made, the others said cancelled", async () => {
      fake.ending = "cancel"
      const results = resultsOf(await poll(await start(calls("one", "two"))))
      expect(results[0]).toMatchObject({ ok: true })
      expect(results[1]).toMatchObject({ ok: false, message: "the batch was cancelled on the provider's side before this request ran" })
    })

    it("an outage while polling fails the poll with the provider's status; the next poll after it completes", async () => {
      const started = await start(calls("alpha"))
      fake.outage = true
      const failure = await failureOf(client().poll(started.handle, pollCall()))
      expect(failure.status).toBe(503)
      expect(failure.message).toContain("HTTP 503")
      fake.outage = false
      expect(resultsOf(await poll(started))[0]).toMatchObject({ ok: true })
    })

    it("a refused creation fails the start with the provider's status and message", async () => {
      fake.refuseCreation = true
      const failure = await failureOf(client().start(calls("alpha")))
      expect(failure.status).toBe(500)
      expect(failure.message).toMatch(/^HTTP 500: INTERNAL: /)
      expect(fake.batches).toHaveLength(0)
    })

    it("a 4xx on creation (a model the provider does not have) fails the start with its status and message", async () => {
      const other = providerOf({ ...harness.config(fake), toml: harness.config(fake).toml.replace("gemini-2.5-flash", "no-such-model") })
      const call = providerCall(request("alpha"), other.model, other.provider, { name: "v", extraBody: [], extraHeaders: [] }, { bodyEdits: [], headerEdits: [], credentials: {} })
      if (call instanceof ProviderFailure || !("request" in call)) throw new Error("no call")
      const failure = await failureOf(providerTypes.get(harness.type)!.make(other.provider).batch!.start([{ id: crypto.randomUUID(), call }]))
      expect(failure.status).toBe(404)
      expect(failure.message).toMatch(/^HTTP 404: NOT_FOUND: .*no-such-model.*(not found|is not found)/)
    })

    it("the credential goes with every exchange", async () => {
      const started = await start(calls("alpha"))
      await poll(started)
      expect(fake.requests.length).toBeGreaterThan(1)
      for (const received of fake.requests) expect(harness.authenticated(received, fake), `${received.method} ${received.path}`).toBe(true)
    })
  })

suite(studio)
suite(vertex)

describe("gcp_vertex_gemini batches: Cloud Storage", () => {
  it("the input file lands under input_uri_prefix; the job reads it and writes under output_uri_prefix", async () => {
    const fake = await startVertexBatchFake()
    const runtime = ManagedRuntime.make(HttpTransportLive())
    try {
      fake.pollsUntilDone = 0
      const { model, provider } = providerOf(vertexBatchGatewayConfig(fake))
      const call = providerCall(request("alpha"), model, provider, { name: "v", extraBody: [], extraHeaders: [] }, { bodyEdits: [], headerEdits: [], credentials: {} })
      if (call instanceof ProviderFailure || !("request" in call)) throw new Error("no call")
      const id = crypto.randomUUID()
      const client = providerTypes.get("gcp_vertex_gemini")!.make(provider).batch!
      const started = await runtime.runPromise(client.start([{ id, call }]) as Effect.Effect<StartedBatch, ProviderFailure, HttpTransport>)
      expect([...fake.objects.keys()]).toEqual([`gateway-batches/input/gateway-batch-${id}.jsonl`])
      await runtime.runPromise(client.poll(started.handle, { apiKey: call.apiKey, qualifiedName: call.qualifiedName, extraHeaders: [] }))
      expect([...fake.objects.keys()][1]).toMatch(/^gateway-batches\/output\/prediction-model-[^/]+\/predictions\.jsonl$/)
    } finally {
      await runtime.dispose()
      await fake.close()
    }
  })
})
