/**
 * The members of the Chat Completions family replayed on their recorded fixtures
 * (`src/providers/<type>/fixtures/`, where a member differs from OpenAI), through the runner with
 * an in-memory transport: the HTTP request each `ModelRequest` makes, what each recorded answer
 * reads as, and the chunks of each recorded stream.
 */
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Stream from "effect/Stream"
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "vitest"
import type { ProviderChunk } from "../../src/inference/types.ts"
import { deepSeekCodec, groqCodec, tgiCodec } from "../../src/providers/chatCompletionsMembers.ts"
import type { WireCodec } from "../../src/providers/codec.ts"
import type { FamilyTarget } from "../../src/providers/chatCompletionsFamily.ts"
import { wireClient, wireRequest } from "../../src/providers/runner.ts"
import { type ProviderCall, qualifiedProviderName } from "../../src/providers/types.ts"
import { type HttpCall, HttpTransport } from "../../src/services.ts"
import { requestFixtures, responseFixtures, streamFixtures } from "../support/providerFixtures.ts"

const members: ReadonlyArray<readonly [WireCodec<any, FamilyTarget, string>, object]> = [
  [deepSeekCodec, {}],
  [groqCodec, {}],
  [tgiCodec, { api_base: "http://tgi.internal:8080/v1/" }]
]

const apiKey = "sk-fixture-key"

const plainCall: ProviderCall = {
  request: { messages: [{ role: "user", content: [{ type: "text", text: "Hi" }] }], params: {}, functionType: "chat", jsonMode: "off", providerTools: [] },
  apiKey,
  extraBody: [],
  extraHeaders: [],
  modelName: "m",
  providerName: "p",
  qualifiedName: qualifiedProviderName("m", "p")
}

/** a transport that answers every call with `reply`, and keeps what it was sent */
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

/** `text` as the network may cut it: pieces of `size` bytes */
const cut = (text: string, size: number): ReadonlyArray<Uint8Array> => {
  const bytes = new TextEncoder().encode(text)
  const pieces: Array<Uint8Array> = []
  for (let at = 0; at < bytes.length; at += size) pieces.push(bytes.subarray(at, at + size))
  return pieces
}

const has = (type: string, kind: string) => fs.existsSync(path.join(import.meta.dirname, "../../src/providers", type, "fixtures", kind))

for (const [codec, settings] of members) {
  const type = codec.type
  const client = wireClient(codec, codec.target(settings, "recorded-model"))

  describe.runIf(has(type, "requests"))(`${type} fixtures: requests`, () => {
    for (const [name, fixture] of has(type, "requests") ? requestFixtures(type) : []) {
      it(`${name}: ${fixture.description}`, () => {
        const { call } = fixture
        const built = wireRequest(codec, codec.target(settings, call.model), {
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

  describe.runIf(has(type, "responses"))(`${type} fixtures: responses`, () => {
    for (const [name, fixture] of has(type, "responses") ? responseFixtures(type) : []) {
      it(`${name}: ${fixture.description}`, async () => {
        const text = JSON.stringify(fixture.body)
        const { sent, transport } = answering({ status: fixture.status, text })
        const result = await Effect.runPromise(Effect.result(Effect.provideService(client.infer(plainCall), HttpTransport, transport)))
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

  describe.runIf(has(type, "streams"))(`${type} fixtures: streams`, () => {
    for (const [name, fixture] of has(type, "streams") ? streamFixtures(type) : []) {
      for (const size of [1 << 16, 7]) {
        it(`${name} (in pieces of ${size} bytes): ${fixture.description}`, async () => {
          const { transport } = answering({ pieces: cut(fixture.transcript, size) })
          const chunks: Array<ProviderChunk> = []
          const outcome = await Effect.runPromise(Effect.provideService(
            Effect.flatMap(client.stream(plainCall), (started) =>
              Effect.result(Stream.runForEach(started.chunks, (chunk) => Effect.sync(() => chunks.push(chunk))))),
            HttpTransport,
            transport
          ))
          expect(chunks.map(({ raw: _raw, ...chunk }) => JSON.parse(JSON.stringify(chunk)))).toEqual(fixture.chunks)
          expect(Result.isSuccess(outcome)).toBe(true)
        })
      }
    }
  })
}
