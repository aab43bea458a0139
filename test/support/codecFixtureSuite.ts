/**
 * A codec replayed on its recorded fixtures (`src/providers/<folder>/fixtures/`), through the
 * runner with an in-memory transport: the HTTP request each `ModelRequest` makes (to the byte),
 * what each recorded answer reads as, and the chunks of each recorded stream, whole and cut in
 * small pieces (across events and multi-byte characters), and, for a codec that counts tokens,
 * each count's request and what its answer reads as. Every provider codec's fixture test
 * is one call of `fixtureSuite`; what differs between them is in `FixtureSuiteOptions`.
 */
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import { describe, expect, it } from "vitest"
import type { ModelRequest, ProviderChunk } from "../../src/inference/types.ts"
import type { WireCodec } from "../../src/providers/codec.ts"
import { wireClient } from "../../src/providers/wireProvider.ts"
import { wireRequest } from "../../src/providers/wireRequest.ts"
import { type ProviderCall, qualifiedProviderName } from "../../src/providers/types.ts"
import { type HttpCall, HttpTransport } from "../../src/transport.ts"
import { byteReaderOf, forEachChunk } from "./providerStreams.ts"
import { countFixtures, type RequestFixture, requestFixtures, responseFixtures, type StreamFixture, streamFixtures } from "./providerFixtures.ts"

/** A recorded stream as the suite replays it: the bytes the provider sends, and what they read as. */
export interface ReplayedStream {
  readonly description: string
  readonly bytes: Uint8Array
  readonly chunks: StreamFixture["chunks"]
  readonly failure?: string | undefined
  /** checks that a chunk's `raw` is the provider's own text of its event */
  readonly expectRaw: (raw: string) => void
}

export interface FixtureSuiteOptions<Settings> {
  /** the provider table's settings (a request fixture may add its own, as `settings` or `call.settings`) */
  readonly settings: Settings
  /** the title of the `describe` blocks (the folder by default) */
  readonly label?: string
  /** only the fixtures so named (a folder shared by several codecs) */
  readonly only?: (name: string) => boolean
  /** the kinds of fixture the folder holds (all by default; a folder without `counts` has none) */
  readonly kinds?: ReadonlyArray<"requests" | "responses" | "streams" | "counts">
  /** the model of the client that replays answers and streams ("m" by default) */
  readonly model?: string
  /** the model and provider names of the replayed call (those of the expected `unknown` blocks; "m" and "p" by default) */
  readonly modelName?: string
  readonly providerName?: string
  /** the key of the replayed call, which no failure message may contain */
  readonly apiKey?: string | undefined
  /** the content type the client asks a stream in ("text/event-stream" by default) */
  readonly streamType?: string
  /** the URL a stream is asked at, when the suite should check it */
  readonly streamUrl?: string
  /** the stream fixtures as bytes (by default `streams/<name>.sse`, a transcript of server-sent events) */
  readonly streams?: (folder: string) => ReadonlyArray<readonly [string, ReplayedStream]>
  /** the sizes a stream is cut in (by default whole, up to 64 KiB, and 7 bytes) */
  readonly pieceSizes?: (bytes: Uint8Array) => ReadonlyArray<number>
}

const plainRequest: ModelRequest = {
  messages: [{ role: "user", content: [{ type: "text", text: "Hi" }] }],
  params: {},
  functionType: "chat",
  jsonMode: "off",
  providerTools: []
}

/** a transport that answers every call with `reply`, and keeps what it was sent */
const answering = (reply: { status: number; text: string } | { pieces: ReadonlyArray<Uint8Array> }, streamType: string) => {
  const sent: Array<HttpCall> = []
  const transport = HttpTransport.of({
    post: (call) => {
      sent.push(call)
      return "pieces" in reply ? Effect.die("not a whole answer") : Effect.succeed(reply)
    },
    postStream: (call, asked) => {
      sent.push(call)
      expect(asked).toBe(streamType)
      return "pieces" in reply
        ? Effect.succeed({ ok: true as const, status: 200, body: byteReaderOf(reply.pieces) })
        : Effect.die("not a stream")
    },
    download: () => Effect.die("not a download")
  })
  return { sent, transport }
}

/** `bytes` as the network may cut them: pieces of `size` bytes */
export const cut = (bytes: Uint8Array, size: number): ReadonlyArray<Uint8Array> => {
  const pieces: Array<Uint8Array> = []
  for (let at = 0; at < bytes.length; at += size) pieces.push(bytes.subarray(at, at + size))
  return pieces
}

/** the `.sse` transcripts of `folder`: each chunk's raw text is the data of one of its events */
export const sseStreams = (folder: string): ReadonlyArray<readonly [string, ReplayedStream]> =>
  streamFixtures(folder).map(([name, fixture]) => {
    // the line ending the provider frames its events with (Gemini's are CRLF)
    const eol = fixture.transcript.includes("\r\n") ? "\r\n" : "\n"
    return [name, {
      description: fixture.description,
      bytes: new TextEncoder().encode(fixture.transcript),
      chunks: fixture.chunks,
      failure: fixture.failure,
      expectRaw: (raw) => expect(fixture.transcript).toContain(`data: ${raw}${eol}`)
    }]
  })

const defaultSizes = () => [1 << 16, 7]

/** The fixture tests of `codec` from `src/providers/<folder>/fixtures`. */
export const fixtureSuite = <Settings, Target, Event>(
  folder: string,
  codec: WireCodec<Settings, Target, Event>,
  options: FixtureSuiteOptions<Settings>
): void => {
  const {
    settings,
    label = folder,
    only = () => true,
    kinds = ["requests", "responses", "streams", "counts"],
    model = "m",
    modelName = "m",
    providerName = "p",
    apiKey = "test-key-123",
    streamType = "text/event-stream",
    streamUrl,
    streams = sseStreams,
    pieceSizes = defaultSizes
  } = options
  const call: ProviderCall = {
    request: plainRequest,
    apiKey,
    extraBody: [],
    extraHeaders: [],
    modelName,
    providerName,
    qualifiedName: qualifiedProviderName(modelName, providerName)
  }
  const client = wireClient(codec, codec.target(settings, model, {}))
  const kept = <T>(fixtures: ReadonlyArray<readonly [string, T]>) => fixtures.filter(([name]) => only(name))
  /** the target of a fixture's call: the suite's settings with the fixture's own */
  const targetOf = (fixture: { readonly settings?: unknown; readonly call: { readonly settings?: unknown; readonly model: string } }) => {
    const own = (fixture.settings ?? fixture.call.settings ?? {}) as Partial<Settings>
    return codec.target({ ...settings, ...own }, fixture.call.model, {})
  }
  /** a fixture's call as `providerCall` makes it: the provider's edits, then the caller's */
  const callOf = (fixtureCall: Omit<RequestFixture["call"], "stream">, request: ModelRequest): ProviderCall => {
    const caller = fixtureCall.caller
    return {
      request,
      apiKey: fixtureCall.apiKey,
      extraBody: [...fixtureCall.extraBody, ...caller?.extraBody ?? []],
      extraHeaders: [...fixtureCall.extraHeaders, ...caller?.extraHeaders ?? []],
      modelName: fixtureCall.modelName,
      providerName: fixtureCall.providerName,
      qualifiedName: qualifiedProviderName(fixtureCall.modelName, fixtureCall.providerName),
      caller
    }
  }

  if (kinds.includes("requests")) {
    describe(`${label} fixtures: requests`, () => {
      for (const [name, fixture] of kept(requestFixtures(folder))) {
        it(`${name}: ${fixture.description}`, () => {
          const built = wireRequest(codec, targetOf(fixture), callOf(fixture.call, fixture.request), fixture.call.stream)
          if (!("body" in built)) throw new Error(built.message)
          expect(built.url).toBe(fixture.http.url)
          expect(built.headers).toEqual(fixture.http.headers)
          // to the byte: the order of the fields is what the provider receives (and what is stored)
          expect(built.body).toBe(JSON.stringify(fixture.http.body))
        })
      }
    })
  }

  if (kinds.includes("responses")) {
    describe(`${label} fixtures: responses`, () => {
      for (const [name, fixture] of kept(responseFixtures(folder))) {
        it(`${name}: ${fixture.description}`, async () => {
          const text = JSON.stringify(fixture.body)
          const { sent, transport } = answering({ status: fixture.status, text }, streamType)
          const result = await Effect.runPromise(Effect.result(Effect.provideService(client.infer(call), HttpTransport, transport)))
          expect(sent).toHaveLength(1)
          if (fixture.failure !== undefined) {
            if (Result.isSuccess(result)) throw new Error("expected a failure")
            expect(result.failure.message).toBe(fixture.failure)
            if (apiKey !== undefined) expect(result.failure.message).not.toContain(apiKey)
          } else {
            if (Result.isFailure(result)) throw new Error(result.failure.message)
            expect(result.success).toEqual({ ...fixture.parsed, rawRequest: sent[0].body, rawResponse: text })
          }
        })
      }
    })
  }

  if (kinds.includes("streams")) {
    describe(`${label} fixtures: streams`, () => {
      for (const [name, fixture] of kept(streams(folder))) {
        for (const size of pieceSizes(fixture.bytes)) {
          it(`${name} (in pieces of ${size} bytes): ${fixture.description}`, async () => {
            const { sent, transport } = answering({ pieces: cut(fixture.bytes, size) }, streamType)
            const chunks: Array<ProviderChunk> = []
            const outcome = await Effect.runPromise(Effect.provideService(
              Effect.flatMap(client.stream(call), (started) => {
                expect(started.rawRequest).toBe(sent[0].body)
                return Effect.result(forEachChunk(started, (chunk) => Effect.sync(() => chunks.push(chunk))))
              }),
              HttpTransport,
              transport
            ))
            expect(sent).toHaveLength(1)
            if (streamUrl !== undefined) expect(sent[0].url).toBe(streamUrl)
            expect(chunks.map(({ raw: _raw, ...chunk }) => JSON.parse(JSON.stringify(chunk)))).toEqual(fixture.chunks)
            for (const chunk of chunks) fixture.expectRaw(chunk.raw)
            if (fixture.failure === undefined) expect(Result.isSuccess(outcome)).toBe(true)
            else expect(Result.isFailure(outcome) && outcome.failure.message).toBe(fixture.failure)
          })
        }
      }
    })
  }

  const counts = kinds.includes("counts") ? kept(countFixtures(folder)) : []
  if (counts.length > 0) {
    describe(`${label} fixtures: token counts`, () => {
      for (const [name, fixture] of counts) {
        it(`${name}: ${fixture.description}`, async () => {
          const count = wireClient(codec, targetOf(fixture)).countTokens
          if (count === undefined) throw new Error(`the ${codec.type} codec counts no tokens`)
          const answer = fixture.answer ?? { status: 500, body: "not asked" }
          const { sent, transport } = answering({ status: answer.status, text: JSON.stringify(answer.body) }, streamType)
          const result = await Effect.runPromise(Effect.result(Effect.provideService(count(callOf(fixture.call, fixture.request)), HttpTransport, transport)))
          expect(sent).toHaveLength(fixture.http === undefined ? 0 : 1)
          if (fixture.http !== undefined) {
            expect(sent[0].url).toBe(fixture.http.url)
            expect(sent[0].headers).toEqual(fixture.http.headers)
            expect(sent[0].body).toBe(JSON.stringify(fixture.http.body))
          }
          if (fixture.failure !== undefined) {
            expect(Result.isFailure(result) && result.failure.message).toBe(fixture.failure)
            if (fixture.call.apiKey !== undefined) expect(JSON.stringify(result)).not.toContain(fixture.call.apiKey)
          } else {
            if (Result.isFailure(result)) throw new Error(result.failure.message)
            expect(result.success).toBe(fixture.count)
          }
        })
      }
    })
  }
}
