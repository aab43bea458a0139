/**
 * The `aws_bedrock` and `aws_sagemaker` codecs replayed on their recorded fixtures
 * (`src/providers/aws/fixtures/`), through the runner with an in-memory transport and no
 * authorizer (signing is tested apart): the HTTP request each `ModelRequest` makes, what each
 * recorded answer reads as, and the chunks of each recorded event stream, cut at many sizes.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Stream from "effect/Stream"
import { describe, expect, it } from "vitest"
import type { ProviderChunk } from "../../src/inference/types.ts"
import { bedrockCodec } from "../../src/providers/aws/bedrock.ts"
import { encodeEvent } from "../../src/providers/aws/eventStream.ts"
import { sageMakerCodec } from "../../src/providers/aws/sagemaker.ts"
import type { WireCodec } from "../../src/providers/codec.ts"
import { wireClient, wireRequest } from "../../src/providers/runner.ts"
import { type ProviderCall, qualifiedProviderName } from "../../src/providers/types.ts"
import { type HttpCall, HttpTransport } from "../../src/services.ts"

const fixturesDir = path.join(import.meta.dirname, "../../src/providers/aws/fixtures")
const read = (kind: string) =>
  fs.readdirSync(path.join(fixturesDir, kind)).filter((file) => file.endsWith(".json")).sort()
    .map((file) => [file.slice(0, -5), JSON.parse(fs.readFileSync(path.join(fixturesDir, kind, file), "utf8"))] as const)

const codecOf = (name: string): WireCodec<any, any, any> => name.startsWith("bedrock") ? bedrockCodec : sageMakerCodec
const settingsOf = (name: string) =>
  name.startsWith("bedrock")
    ? { model_id: "anthropic.claude-3-5-sonnet-20240620-v1:0", region: "us-east-1" }
    : { endpoint_name: "my-llama-endpoint", hosted_provider: "openai", region: "us-east-1" }

const callOf = (name: string): ProviderCall => {
  const [modelName, providerName] = name.startsWith("bedrock") ? ["claude", "bedrock"] : ["llama", "sagemaker"]
  return {
    request: { messages: [{ role: "user", content: [{ type: "text", text: "Hi" }] }], params: {}, functionType: "chat", jsonMode: "off", providerTools: [] },
    apiKey: undefined,
    extraBody: [],
    extraHeaders: [],
    modelName,
    providerName,
    qualifiedName: qualifiedProviderName(modelName, providerName)
  }
}

/** the codec without its authorizer: the request as built, before signing */
const unsigned = (codec: WireCodec<any, any, any>): WireCodec<any, any, any> => ({ ...codec, authorizer: undefined })

const answering = (reply: { status: number; text: string } | { pieces: ReadonlyArray<Uint8Array> }) => {
  const sent: Array<HttpCall> = []
  const transport = HttpTransport.of({
    post: (call) => {
      sent.push(call)
      return "pieces" in reply ? Effect.die("not a whole answer") : Effect.succeed(reply)
    },
    postStream: (call, streamType) => {
      sent.push(call)
      expect(streamType).toBe("application/vnd.amazon.eventstream")
      return "pieces" in reply
        ? Effect.succeed({ ok: true as const, status: 200, body: Stream.fromIterable(reply.pieces) })
        : Effect.die("not a stream")
    }
  })
  return { sent, transport }
}

const concat = (parts: ReadonlyArray<Uint8Array>): Uint8Array => {
  const all = new Uint8Array(parts.reduce((n, part) => n + part.length, 0))
  let at = 0
  for (const part of parts) {
    all.set(part, at)
    at += part.length
  }
  return all
}

const cut = (bytes: Uint8Array, size: number): ReadonlyArray<Uint8Array> => {
  const pieces: Array<Uint8Array> = []
  for (let at = 0; at < bytes.length; at += size) pieces.push(bytes.subarray(at, at + size))
  return pieces
}

describe("aws fixtures: requests", () => {
  for (const [name, fixture] of read("requests")) {
    it(`${name}: ${fixture.description}`, () => {
      const { call } = fixture
      const codec = codecOf(name)
      const built = wireRequest(codec, codec.target(call.settings, call.model, {}), {
        request: fixture.request,
        apiKey: undefined,
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

describe("aws fixtures: responses", () => {
  for (const [name, fixture] of read("responses")) {
    it(`${name}: ${fixture.description}`, async () => {
      const codec = codecOf(name)
      const client = wireClient(unsigned(codec), codec.target(settingsOf(name), "", {}))
      const text = JSON.stringify(fixture.body)
      const { sent, transport } = answering({ status: fixture.status, text })
      const result = await Effect.runPromise(Effect.result(Effect.provideService(client.infer(callOf(name)), HttpTransport, transport)))
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

/** a stream fixture's bytes as AWS sends them */
const streamBytes = (name: string, fixture: any): Uint8Array => {
  if (name.startsWith("bedrock")) {
    return concat(fixture.messages.map((message: any) =>
      encodeEvent({ eventType: message.eventType, messageType: message.messageType, payload: JSON.stringify(message.payload) })
    ))
  }
  const sse = new TextEncoder().encode(fixture.sse)
  const parts = cut(sse, fixture.payloadBytes).map((part) => encodeEvent({ eventType: "PayloadPart", payload: part }))
  if (fixture.exception !== undefined) {
    parts.push(encodeEvent({ eventType: fixture.exception.eventType, messageType: "exception", payload: JSON.stringify(fixture.exception.payload) }))
  }
  return concat(parts)
}

describe("aws fixtures: streams", () => {
  for (const [name, fixture] of read("streams")) {
    const bytes = streamBytes(name, fixture)
    for (const size of [bytes.length, 1, 3, 13, 64]) {
      it(`${name} (in pieces of ${size} bytes): ${fixture.description}`, async () => {
        const codec = codecOf(name)
        const client = wireClient(unsigned(codec), codec.target(settingsOf(name), "", {}))
        const { sent, transport } = answering({ pieces: cut(bytes, size) })
        const chunks: Array<ProviderChunk> = []
        const outcome = await Effect.runPromise(Effect.provideService(
          Effect.flatMap(client.stream(callOf(name)), (started) => {
            expect(started.rawRequest).toBe(sent[0].body)
            return Effect.result(Stream.runForEach(started.chunks, (chunk) => Effect.sync(() => chunks.push(chunk))))
          }),
          HttpTransport,
          transport
        ))
        expect(chunks.map(({ raw: _raw, ...chunk }) => JSON.parse(JSON.stringify(chunk)))).toEqual(fixture.chunks)
        if (fixture.failure === undefined) expect(Result.isSuccess(outcome)).toBe(true)
        else expect(Result.isFailure(outcome) && outcome.failure.message).toBe(fixture.failure)
      })
    }
  }
})
