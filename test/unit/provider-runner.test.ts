/**
 * The runner on its own: what it does for every codec (status checks, error texts, redaction,
 * stream framing and its failures, `extra_body` failures as typed outcomes, credentials and
 * edit scopes), and a member of the Chat Completions family declared in a few lines.
 */
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import { describe, expect, it } from "vitest"
import type { ProviderConfig } from "../../src/config/types.ts"
import { InvalidRequest } from "../../src/errors.ts"
import { requestBodyEdit } from "../../src/inference/extraBody.ts"
import type { ProviderChunk } from "../../src/inference/types.ts"
import { hostedCodec, selfHostedCodec } from "../../src/providers/chatCompletionsFamily.ts"
import { openAiCodec } from "../../src/providers/openai/index.ts"
import { providerCall as providerCallResult } from "../../src/inference/providerCall.ts"
import { wireClient, wireProvider } from "../../src/providers/wireProvider.ts"
import { wireRequest } from "../../src/providers/wireRequest.ts"
import { type ProviderCall, qualifiedProviderName } from "../../src/providers/types.ts"
import { ProviderFailure } from "../../src/providers/failure.ts"
import { type HttpCall, type HttpStreamReply, HttpTransport, TransportError } from "../../src/transport.ts"
import { byteReaderOf, forEachChunk } from "../support/providerStreams.ts"
import { hiRequest } from "../support/modelRequests.ts"

/** the call `providerCall` makes, or why it cannot be made */
const providerCall = <Request>(...args: Parameters<typeof providerCallResult<Request>>) => Result.merge(providerCallResult<Request>(...args))

const key = "sk-live-secret-key-0123456789"

const request = hiRequest

const call = (fields: Partial<ProviderCall> = {}): ProviderCall => ({
  request,
  apiKey: key,
  extraBody: [],
  extraHeaders: [],
  modelName: "m",
  providerName: "p",
  qualifiedName: qualifiedProviderName("m", "p"),
  ...fields
})

const client = wireClient(openAiCodec, openAiCodec.target({}, "gpt-4o-mini"))

/** a transport that answers with `post` / `postStream`, and keeps what it was sent */
const transport = (answers: {
  post?: Effect.Effect<{ status: number; text: string }, TransportError>
  postStream?: Effect.Effect<HttpStreamReply, TransportError>
}) => {
  const sent: Array<HttpCall> = []
  const service = HttpTransport.of({
    post: (httpCall) => Effect.suspend(() => {
      sent.push(httpCall)
      return answers.post ?? Effect.die("unexpected post")
    }),
    postStream: (httpCall) => Effect.suspend(() => {
      sent.push(httpCall)
      return answers.postStream ?? Effect.die("unexpected postStream")
    }),
    download: () => Effect.die("unexpected download")
  })
  return { sent, service }
}

const inferWith = (answers: Parameters<typeof transport>[0], providerCall = call()) => {
  const { sent, service } = transport(answers)
  return Effect.runPromise(Effect.result(Effect.provideService(client.infer(providerCall), HttpTransport, service))).then(
    (result) => ({ result, sent })
  )
}

const failureOf = <A>(result: Result.Result<A, ProviderFailure | InvalidRequest>) => {
  if (Result.isSuccess(result)) throw new Error("expected a failure")
  return result.failure
}

/** the chunks of a stream answered with `events` (SSE text), and how it ended */
const streamOf = async (body: string, providerCall = call()) => {
  const { service } = transport({
    postStream: Effect.succeed({ ok: true, status: 200, body: byteReaderOf([new TextEncoder().encode(body)]) })
  })
  const chunks: Array<ProviderChunk> = []
  const end = await Effect.runPromise(Effect.provideService(
    Effect.flatMap(client.stream(providerCall), (started) =>
      Effect.result(forEachChunk(started, (chunk) => Effect.sync(() => chunks.push(chunk))))),
    HttpTransport,
    service
  ))
  return { chunks, end }
}

const textChunk = (text: string) => JSON.stringify({ choices: [{ index: 0, delta: { content: text }, finish_reason: null }] })

describe("runner: answers outside 2xx and transport failures", () => {
  it("names the status and the codec's explanation, cut at 1000 characters, without the key", async () => {
    const { result } = await inferWith({ post: Effect.succeed({ status: 500, text: `${key} ${"x".repeat(5000)}` }) })
    const failure = failureOf(result)
    expect(failure).toBeInstanceOf(ProviderFailure)
    expect(failure.message).toBe(`HTTP 500: [REDACTED] ${"x".repeat(1000 - "[REDACTED] ".length)}...`)
    const explained = await inferWith({ post: Effect.succeed({ status: 429, text: JSON.stringify({ error: { message: `slow down, Bearer ${key}` } }) }) })
    expect(failureOf(explained.result).message).toBe("HTTP 429: slow down, Bearer [REDACTED]")
  })

  it("keeps a transport failure's message (without the key) and whether it timed out", async () => {
    const { result } = await inferWith({ post: Effect.fail(new TransportError({ message: `request failed: ${key}`, timedOut: true })) })
    const failure = failureOf(result) as ProviderFailure
    expect(failure.message).toBe("request failed: [REDACTED]")
    expect(failure.timedOut).toBe(true)
  })

  it("sends the codec's request: its URL, its headers with the key, the body it built", async () => {
    const { result, sent } = await inferWith({ post: Effect.succeed({ status: 200, text: JSON.stringify({ choices: [{ message: { content: "ok" } }] }) }) })
    expect(Result.isSuccess(result)).toBe(true)
    expect(sent).toEqual([{
      url: "https://api.openai.com/v1/chat/completions",
      headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
      body: JSON.stringify({ model: "gpt-4o-mini", messages: [{ role: "user", content: "Hi" }] })
    }])
  })
})

describe("runner: extra_body edits that cannot be applied", () => {
  const bad = { pointer: "/messages/0/content/x", value: 1 }

  it("a configured edit fails this provider (the next may answer), before anything is sent", async () => {
    const { result, sent } = await inferWith({}, call({ extraBody: [bad] }))
    const failure = failureOf(result)
    expect(failure).toBeInstanceOf(ProviderFailure)
    expect(failure.message).toMatch(/goes through a value that is not an object or array/)
    expect(sent).toHaveLength(0)
  })

  it("a request's own edit is an InvalidRequest naming its field: a typed failure, not a defect", async () => {
    const edit = requestBodyEdit({ ...bad }, "extra_body[2]")
    const attempts: Array<Effect.Effect<unknown, ProviderFailure | InvalidRequest, HttpTransport>> = [
      client.infer(call({ extraBody: [edit] })),
      client.stream(call({ extraBody: [edit] }))
    ]
    for (const effect of attempts) {
      const { service, sent } = transport({})
      const failure = failureOf(await Effect.runPromise(Effect.result(Effect.provideService(effect, HttpTransport, service))))
      expect(failure).toBeInstanceOf(InvalidRequest)
      expect(failure.message).toMatch(/^extra_body\[2\]\.pointer: extra_body pointer "\/messages\/0\/content\/x" goes through/)
      expect(sent).toHaveLength(0)
    }
  })
})

describe("runner: streams", () => {
  it("reads events until [DONE], whatever follows it", async () => {
    const { chunks, end } = await streamOf(`data: ${textChunk("a")}\n\ndata: ${textChunk("b")}\n\ndata: [DONE]\n\ndata: not json\n\n`)
    expect(chunks.map((chunk) => chunk.content)).toEqual([[{ type: "text", id: "0", text: "a" }], [{ type: "text", id: "0", text: "b" }]])
    expect(Result.isSuccess(end)).toBe(true)
  })

  it("fails a stream that ends before its first event", async () => {
    for (const body of ["", ": just a comment\n\n", "data: [DONE]\n\n"]) {
      const { chunks, end } = await streamOf(body)
      expect(chunks).toEqual([])
      expect(failureOf(end).message).toBe("the provider's event stream ended without any event")
    }
  })

  it("fails with the codec's explanation of an event it cannot read, after the chunks before it", async () => {
    const { chunks, end } = await streamOf(`data: ${textChunk("a")}\n\ndata: {oops\n\n`)
    expect(chunks).toHaveLength(1)
    expect(failureOf(end).message).toBe("the provider streamed a chunk that is not JSON")
  })

  it("fails before the stream starts on a 2xx that is not an event stream, or an error status", async () => {
    const start = (reply: HttpStreamReply) => {
      const { service } = transport({ postStream: Effect.succeed(reply) })
      return Effect.runPromise(Effect.result(Effect.provideService(client.stream(call()), HttpTransport, service)))
    }
    expect(failureOf(await start({ ok: false, status: 200, contentType: "text/html", text: `<html>${key}</html>` })).message).toBe(
      `HTTP 200 with content type "text/html" where an event stream (text/event-stream) was expected: <html>[REDACTED]</html>`
    )
    expect(failureOf(await start({ ok: false, status: 503, text: JSON.stringify({ error: "overloaded" }) })).message).toBe("HTTP 503: overloaded")
  })

  it("fails mid-stream with the transport's failure, without the key", async () => {
    const { service } = transport({
      postStream: Effect.succeed({
        ok: true,
        status: 200,
        body: byteReaderOf(
          [new TextEncoder().encode(`data: ${textChunk("a")}\n\n`)],
          new TransportError({ message: `connection reset (${key})`, timedOut: false })
        )
      })
    })
    const chunks: Array<ProviderChunk> = []
    const end = await Effect.runPromise(Effect.provideService(
      Effect.flatMap(client.stream(call()), (started) =>
        Effect.result(forEachChunk(started, (chunk) => Effect.sync(() => chunks.push(chunk))))),
      HttpTransport,
      service
    ))
    expect(chunks).toHaveLength(1)
    expect(failureOf(end).message).toBe("connection reset ([REDACTED])")
  })
})

describe("runner: the call of one provider (credentials and edit scopes)", () => {
  const provider = (credential: ProviderConfig["credential"]): ProviderConfig => ({
    name: "p",
    type: "openai",
    modelName: "gpt",
    credential,
    extraBody: [{ pointer: "/a", value: "provider" }],
    extraHeaders: [],
    timeouts: {},
    settings: {}
  })
  const variant = { name: "v", extraBody: [{ pointer: "/b", value: "variant" }], extraHeaders: [] }
  const extras = {
    bodyEdits: [
      { scope: {}, edit: { pointer: "/c", value: "every call" } },
      { scope: { model_name: "m", provider_name: "p" }, edit: { pointer: "/d", value: "this provider" } },
      { scope: { model_name: "m", provider_name: "other" }, edit: { pointer: "/e", value: "another provider" } },
      { scope: { variant_name: "w" }, edit: { pointer: "/f", value: "another variant" } }
    ],
    headerEdits: [],
    credentials: { USER_KEY: "from-the-request" }
  }

  it("takes the key from the environment (at start-up), the request, or nowhere", () => {
    expect((providerCall(request, "m", provider({ kind: "static", value: "k" }), variant, extras) as ProviderCall).apiKey).toBe("k")
    expect((providerCall(request, "m", provider({ kind: "dynamic", name: "USER_KEY" }), variant, extras) as ProviderCall).apiKey)
      .toBe("from-the-request")
    expect((providerCall(request, "m", provider({ kind: "none" }), variant, extras) as ProviderCall).apiKey).toBeUndefined()
  })

  it("a missing request credential is the caller's mistake, a missing variable this provider's failure", () => {
    const missing = providerCall(request, "m", provider({ kind: "dynamic", name: "OTHER" }), variant, extras)
    expect(missing).toBeInstanceOf(InvalidRequest)
    expect((missing as InvalidRequest).message).toBe(
      `credentials.OTHER: missing; provider "p" of model "m" reads its API key from dynamic::OTHER`
    )
    const unset = providerCall(request, "m", provider({ kind: "missing", what: "environment variable KEY_VAR is not set" }), variant, extras)
    expect(unset).toEqual(new ProviderFailure({ message: "environment variable KEY_VAR is not set", timedOut: false }))
  })

  it("orders the edits: the provider's, the variant's, then the request's whose scope matches", () => {
    const made = providerCall(request, "m", provider({ kind: "none" }), variant, extras) as ProviderCall
    expect(made.extraBody.map((edit) => "value" in edit && edit.value)).toEqual(["provider", "variant", "every call", "this provider"])
    expect(made.qualifiedName).toBe(qualifiedProviderName("m", "p"))
  })
})

describe("the Chat Completions family: a member declared in a few lines", () => {
  const codec = selfHostedCodec({
    type: "example-server",
    defaultCredential: { kind: "none" },
    params: { max_tokens: "max_new_tokens", seed: null },
    defaults: { temperature: 0.7 },
    streamUsage: false,
    auth: { header: "api-key", prefix: "" },
    headers: { "x-title": "gateway" }
  })
  const definition = wireProvider(codec)
  const config = (settings: Record<string, unknown>): ProviderConfig => ({
    name: "local",
    type: "example-server",
    modelName: "llama",
    credential: { kind: "none" },
    extraBody: [],
    extraHeaders: [],
    timeouts: {},
    settings
  })

  it("renames, drops and defaults parameters, streams without stream_options, authenticates its own way", () => {
    const built = wireRequest(codec, codec.target({ api_base: "http://127.0.0.1:8000/v1" }, "llama"), call({
      request: { ...request, params: { max_tokens: 64, seed: 1, top_p: 0.5 } }
    }), true) as HttpCall
    expect(built.url).toBe("http://127.0.0.1:8000/v1/chat/completions")
    expect(built.headers).toEqual({ "content-type": "application/json", "x-title": "gateway", "api-key": key })
    expect(JSON.parse(built.body)).toEqual({
      model: "llama",
      messages: [{ role: "user", content: "Hi" }],
      temperature: 0.7,
      max_new_tokens: 64,
      top_p: 0.5,
      stream: true
    })
    const unset = wireRequest(codec, codec.target({ api_base: "http://h/v1/" }, "llama"), call({ apiKey: undefined, request: { ...request, params: { temperature: 0 } } }), false) as HttpCall
    expect(JSON.parse(unset.body).temperature).toBe(0)
    expect(unset.headers).toEqual({ "content-type": "application/json", "x-title": "gateway" })
  })

  it("requires api_base in its settings when it has no default; a hosted member's is optional", () => {
    // the configuration decodes a provider table with these fields (and the common ones)
    const decode = (fields: Schema.Struct.Fields, settings: unknown) => Schema.is(Schema.Struct(fields))(settings)
    expect(decode(definition.settingsFields, {})).toBe(false)
    expect(decode(definition.settingsFields, { api_base: "http://h/v1" })).toBe(true)
    const hosted = wireProvider(hostedCodec({ type: "example-cloud", defaultApiBase: "https://api.example.com/v1", defaultCredential: { kind: "env", name: "EXAMPLE_API_KEY" } }))
    expect(decode(hosted.settingsFields, {})).toBe(true)
    expect(hosted.defaultCredential).toEqual({ kind: "env", name: "EXAMPLE_API_KEY" })
  })

  it("a client without the settings it requires (a short-hand of a self-hosted type) fails its calls saying so", async () => {
    const { service, sent } = transport({ post: Effect.succeed({ status: 200, text: JSON.stringify({ choices: [{ message: { content: "ok" } }] }) }) })
    const run = (settings: Record<string, unknown>) =>
      Effect.runPromise(Effect.result(Effect.provideService(definition.make(config(settings)).infer(call()), HttpTransport, service)))
    expect(Result.isSuccess(await run({ api_base: "http://h/v1" }))).toBe(true)
    expect(failureOf(await run({})).message).toBe(
      `provider "local" (type example-server) lacks the settings its type requires (api_base): configure it in a [models.<name>.providers.<name>] table`
    )
    expect(sent).toHaveLength(1)
  })
})
