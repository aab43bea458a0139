/**
 * A codec replayed on its recorded fixtures (`src/providers/<type>/fixtures/`), through the
 * runner with an in-memory transport: the HTTP request each `ModelRequest` makes (to the byte),
 * what each recorded answer reads as, and the chunks of each recorded stream, whole and cut in
 * pieces of 7 bytes. For the codecs of the Responses API, Azure and Mistral.
 */
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Stream from "effect/Stream"
import { describe, expect, it } from "vitest"
import type { ModelRequest, ProviderChunk } from "../../src/inference/types.ts"
import type { WireCodec } from "../../src/providers/codec.ts"
import { wireClient, wireRequest } from "../../src/providers/runner.ts"
import { type ProviderCall, qualifiedProviderName } from "../../src/providers/types.ts"
import { type HttpCall, HttpTransport } from "../../src/services.ts"
import { requestFixtures, responseFixtures, streamFixtures } from "./providerFixtures.ts"

const plainRequest: ModelRequest = {
  messages: [{ role: "user", content: [{ type: "text", text: "Hi" }] }],
  params: {},
  functionType: "chat",
  jsonMode: "off",
  providerTools: []
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

const cut = (text: string, size: number): ReadonlyArray<Uint8Array> => {
  const bytes = new TextEncoder().encode(text)
  const pieces: Array<Uint8Array> = []
  for (let at = 0; at < bytes.length; at += size) pieces.push(bytes.subarray(at, at + size))
  return pieces
}

/**
 * The fixture tests of `codec` from `src/providers/<folder>/fixtures`; `settings` are the
 * provider table's (a request fixture may add its own), `apiKey` the key the fixtures echo.
 */
export const fixtureSuite = <Settings, Target>(
  folder: string,
  codec: WireCodec<Settings, Target, string>,
  settings: Settings,
  apiKey = "test-key-123"
): void => {
  const call: ProviderCall = {
    request: plainRequest,
    apiKey,
    extraBody: [],
    extraHeaders: [],
    modelName: "m",
    providerName: "p",
    qualifiedName: qualifiedProviderName("m", "p")
  }
  const client = wireClient(codec, codec.target(settings, "m"))

  describe(`${folder} fixtures: requests`, () => {
    for (const [name, fixture] of requestFixtures(folder)) {
      it(`${name}: ${fixture.description}`, () => {
        const own = (fixture as { readonly settings?: Partial<Settings> }).settings
        const target = codec.target({ ...settings, ...own }, fixture.call.model)
        const built = wireRequest(codec, target, {
          request: fixture.request,
          apiKey: fixture.call.apiKey,
          extraBody: fixture.call.extraBody,
          extraHeaders: fixture.call.extraHeaders,
          modelName: fixture.call.modelName,
          providerName: fixture.call.providerName,
          qualifiedName: qualifiedProviderName(fixture.call.modelName, fixture.call.providerName)
        }, fixture.call.stream)
        if (!("body" in built)) throw new Error(built.message)
        expect(built.url).toBe(fixture.http.url)
        expect(built.headers).toEqual(fixture.http.headers)
        expect(built.body).toBe(JSON.stringify(fixture.http.body))
      })
    }
  })

  describe(`${folder} fixtures: responses`, () => {
    for (const [name, fixture] of responseFixtures(folder)) {
      it(`${name}: ${fixture.description}`, async () => {
        const text = JSON.stringify(fixture.body)
        const { sent, transport } = answering({ status: fixture.status, text })
        const result = await Effect.runPromise(Effect.result(Effect.provideService(client.infer(call), HttpTransport, transport)))
        expect(sent).toHaveLength(1)
        if (fixture.failure !== undefined) {
          if (Result.isSuccess(result)) throw new Error("expected a failure")
          expect(result.failure.message).toBe(fixture.failure)
          expect(result.failure.message).not.toContain(apiKey)
        } else {
          if (Result.isFailure(result)) throw new Error(result.failure.message)
          expect(result.success).toEqual({ ...fixture.parsed, rawRequest: sent[0].body, rawResponse: text })
        }
      })
    }
  })

  describe(`${folder} fixtures: streams`, () => {
    for (const [name, fixture] of streamFixtures(folder)) {
      for (const size of [1 << 16, 7]) {
        it(`${name} (in pieces of ${size} bytes): ${fixture.description}`, async () => {
          const { sent, transport } = answering({ pieces: cut(fixture.transcript, size) })
          const chunks: Array<ProviderChunk> = []
          const outcome = await Effect.runPromise(Effect.provideService(
            Effect.flatMap(client.stream(call), (started) => {
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
}
