/**
 * The `anthropic` codec replayed on its recorded fixtures (`src/providers/anthropic/fixtures/`),
 * through the runner with an in-memory transport: the HTTP request each `ModelRequest` makes,
 * what each recorded answer reads as, and the chunks of each recorded stream.
 */
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Stream from "effect/Stream"
import { describe, expect, it } from "vitest"
import type { ProviderChunk } from "../../src/inference/types.ts"
import { anthropicCodec } from "../../src/providers/anthropic/index.ts"
import { wireClient, wireRequest } from "../../src/providers/runner.ts"
import { type ProviderCall, qualifiedProviderName } from "../../src/providers/types.ts"
import { type HttpCall, HttpTransport } from "../../src/services.ts"
import { requestFixtures, responseFixtures, streamFixtures } from "../support/providerFixtures.ts"

const apiKey = "sk-ant-test-key-123"
const client = wireClient(anthropicCodec, anthropicCodec.target({}, "claude-sonnet-4-5"))

const plainCall: ProviderCall = {
  request: { messages: [{ role: "user", content: [{ type: "text", text: "Hi" }] }], params: {}, functionType: "chat", jsonMode: "off", providerTools: [] },
  apiKey,
  extraBody: [],
  extraHeaders: [],
  modelName: "claude",
  providerName: "anthropic",
  qualifiedName: qualifiedProviderName("claude", "anthropic")
}

const answering = (reply: { status: number; text: string } | { pieces: ReadonlyArray<Uint8Array> }) => {
  const sent: Array<HttpCall> = []
  const transport = HttpTransport.of({
    post: (call) => {
      sent.push(call)
      return "pieces" in reply ? Effect.die("not a whole answer") : Effect.succeed(reply)
    },
    postStream: (call) => {
      sent.push(call)
      return "pieces" in reply
        ? Effect.succeed({ ok: true as const, status: 200, body: Stream.fromIterable(reply.pieces) })
        : Effect.die("not a stream")
    }
  })
  return { sent, transport }
}

const cut = (text: string, size: number): ReadonlyArray<Uint8Array> => {
  const bytes = new TextEncoder().encode(text)
  const pieces: Array<Uint8Array> = []
  for (let at = 0; at < bytes.length; at += size) pieces.push(bytes.subarray(at, at + size))
  return pieces
}

describe("anthropic fixtures: requests", () => {
  for (const [name, fixture] of requestFixtures("anthropic")) {
    it(`${name}: ${fixture.description}`, () => {
      const { call } = fixture
      const built = wireRequest(anthropicCodec, anthropicCodec.target({}, call.model), {
        request: fixture.request,
        apiKey: call.apiKey,
        extraBody: call.extraBody,
        extraHeaders: call.extraHeaders,
        modelName: call.modelName,
        providerName: call.providerName,
        qualifiedName: qualifiedProviderName(call.modelName, call.providerName)
      }, call.stream)
      if (!("body" in built)) throw new Error(built.message)
      expect(built.url).toBe(fixture.http.url)
      expect(built.headers).toEqual(fixture.http.headers)
      expect(built.body).toBe(JSON.stringify(fixture.http.body))
    })
  }
})

describe("anthropic fixtures: responses", () => {
  for (const [name, fixture] of responseFixtures("anthropic")) {
    it(`${name}: ${fixture.description}`, async () => {
      const text = JSON.stringify(fixture.body)
      const { sent, transport } = answering({ status: fixture.status, text })
      const result = await Effect.runPromise(Effect.result(Effect.provideService(client.infer(plainCall), HttpTransport, transport)))
      expect(sent).toHaveLength(1)
      if (fixture.failure !== undefined) {
        if (Result.isSuccess(result)) throw new Error("expected a failure")
        expect(result.failure.message).toBe(fixture.failure)
      } else {
        if (Result.isFailure(result)) throw new Error(result.failure.message)
        expect(result.success).toEqual({ ...fixture.parsed, rawRequest: sent[0].body, rawResponse: text })
      }
    })
  }
})

describe("anthropic fixtures: streams", () => {
  for (const [name, fixture] of streamFixtures("anthropic")) {
    for (const size of [1 << 16, 7]) {
      it(`${name} (in pieces of ${size} bytes): ${fixture.description}`, async () => {
        const { sent, transport } = answering({ pieces: cut(fixture.transcript, size) })
        const chunks: Array<ProviderChunk> = []
        const outcome = await Effect.runPromise(Effect.provideService(
          Effect.flatMap(client.stream(plainCall), (started) => {
            expect(started.rawRequest).toBe(sent[0].body)
            return Effect.result(Stream.runForEach(started.chunks, (chunk) => Effect.sync(() => chunks.push(chunk))))
          }),
          HttpTransport,
          transport
        ))
        expect(chunks.map(({ raw: _raw, ...chunk }) => JSON.parse(JSON.stringify(chunk)))).toEqual(fixture.chunks)
        for (const chunk of chunks) expect(fixture.transcript).toContain(`data: ${chunk.raw}\n`)
        if (fixture.failure === undefined) expect(Result.isSuccess(outcome)).toBe(true)
        else expect(Result.isFailure(outcome) && outcome.failure.message).toBe(fixture.failure)
      })
    }
  }
})
