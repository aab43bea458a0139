/**
 * The `anthropic` batch hooks on their recorded fixtures
 * (`src/providers/anthropic/fixtures/batch/`), through the runner with an in-memory transport:
 * the creation request to the byte, what each `message_batch` object and results file polls as.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import { describe, expect, it } from "vitest"
import type { ModelRequest } from "../../src/inference/types.ts"
import { anthropicBatch, readResults } from "../../src/providers/anthropic/batch.ts"
import { anthropicCodec } from "../../src/providers/anthropic/index.ts"
import { wireClient } from "../../src/providers/wireProvider.ts"
import { type BatchPollCall, qualifiedProviderName } from "../../src/providers/types.ts"
import { ProviderFailure } from "../../src/providers/failure.ts"
import { type HttpCall, HttpTransport } from "../../src/transport.ts"
import { downloadOf } from "../support/providerStreams.ts"

const folder = path.join(import.meta.dirname, "../../src/providers/anthropic/fixtures/batch")
const fixture = (name: string): any => JSON.parse(fs.readFileSync(path.join(folder, name), "utf8"))
const text = (name: string): string => fs.readFileSync(path.join(folder, name), "utf8")

const create = fixture("create.json")
const apiKey: string = create.call.apiKey
const qualifiedName = qualifiedProviderName(create.call.modelName, create.call.providerName)
const pollCall: BatchPollCall = { apiKey, qualifiedName, extraHeaders: [] }
const ids: ReadonlyArray<string> = fixture("results-mixed.json").ids
const handle = { providerBatchId: "msgbatch_01HkcTjaV5uDC8jWR4ZsDV8d", data: { ids } }
const statusUrl = `https://api.anthropic.com/v1/messages/batches/${handle.providerBatchId}`

/** a transport answering each URL with its text (a status for an absent one: 404), keeping what it was sent */
const answering = (answers: Readonly<Record<string, string>>) => {
  const sent: Array<HttpCall> = []
  const post = (call: HttpCall) => {
    sent.push(call)
    const answer = answers[call.url]
    return Effect.succeed(answer === undefined ? { status: 404, text: "{}" } : { status: 200, text: answer })
  }
  // results files are downloaded a line at a time, in small reads here
  const transport = HttpTransport.of({ post, postStream: () => Effect.die("batches do not stream"), download: downloadOf(post) })
  return { sent, transport }
}

const client = wireClient(anthropicCodec, anthropicCodec.target({}, create.call.model))

const poll = (answers: Readonly<Record<string, string>>, polled = handle) => {
  const { sent, transport } = answering(answers)
  const outcome = Effect.runPromise(Effect.result(Effect.provideService(client.batch!.poll(polled, pollCall), HttpTransport, transport)))
  return outcome.then((result) => ({ result, sent }))
}

const batchText = (name: string) => JSON.stringify(fixture(name).batch)

describe("anthropic batch: creation", () => {
  it(create.description, async () => {
    const { sent, transport } = answering({ [create.http.url]: JSON.stringify(create.answer) })
    const calls = create.calls.map(({ id, request }: { id: string; request: ModelRequest }) => ({
      id,
      call: { request, apiKey, extraBody: [], extraHeaders: [], modelName: create.call.modelName, providerName: create.call.providerName, qualifiedName }
    }))
    const started = await Effect.runPromise(Effect.provideService(client.batch!.start(calls), HttpTransport, transport))
    expect(sent).toHaveLength(1)
    expect(sent[0].method).toBe(create.http.method)
    expect(sent[0].url).toBe(create.http.url)
    expect(sent[0].headers).toEqual(create.http.headers)
    expect(JSON.parse(sent[0].body)).toEqual(create.http.body)
    expect(started.handle).toEqual(create.handle)
    // each request's raw request is its Messages body, as sent in `params`
    expect(started.rawRequests.map((raw) => JSON.parse(raw))).toEqual(create.http.body.requests.map((request: any) => request.params))
  })

  it("an answer that is not a message batch fails the creation, without quoting it", async () => {
    const { transport } = answering({ [create.http.url]: JSON.stringify({ echoed: apiKey }) })
    const call = { request: create.calls[0].request, apiKey, extraBody: [], extraHeaders: [], modelName: "claude", providerName: "anthropic", qualifiedName }
    const result = await Effect.runPromise(Effect.result(Effect.provideService(client.batch!.start([{ id: "a", call }]), HttpTransport, transport)))
    expect(Result.isFailure(result) && result.failure.message).toBe("Anthropic's answer to the creation of a message batch is not a message batch")
  })
})

describe("anthropic batch: polls", () => {
  for (const name of ["batch-in-progress.json", "batch-canceling.json"]) {
    it(`${name}: ${fixture(name).description} (pending), asked with a GET carrying the key and no content type`, async () => {
      const { result, sent } = await poll({ [statusUrl]: batchText(name) })
      expect(result).toEqual(Result.succeed({ status: "pending" }))
      expect(sent).toHaveLength(1)
      expect(sent[0].method).toBe("GET")
      expect(sent[0].headers).toEqual({ "anthropic-version": "2023-06-01", "x-api-key": apiKey })
    })
  }

  it("batch-ended-mixed.json with results-mixed.jsonl: each id once, in submission order, the answer read as a single call's", async () => {
    const expected = fixture("results-mixed.json")
    const batch = fixture("batch-ended-mixed.json").batch
    const { result, sent } = await poll({ [statusUrl]: JSON.stringify(batch), [batch.results_url]: text("results-mixed.jsonl") })
    expect(sent.map((call) => [call.method, call.url])).toEqual([["GET", statusUrl], ["GET", batch.results_url]])
    // the results file may be far larger than an answer
    expect(sent[1].maxResponseBytes).toBeGreaterThanOrEqual(256 * 1024 * 1024)
    expect(sent[1].headers["x-api-key"]).toBe(apiKey)
    const outcome = Result.getOrThrow(result)
    if (outcome.status !== "completed") throw new Error(`completed expected, got ${outcome.status}`)
    expect(outcome.results.map((item) => item.id)).toEqual(ids)
    const [answered, ...unanswered] = outcome.results
    expect(answered).toEqual({ id: ids[0], ok: true, response: { ...expected.parsed, rawRequest: "", rawResponse: expected.poll.results[0].body } })
    expect(unanswered).toEqual(expected.poll.results.slice(1))
  })

  it("the hooks read results-mixed.jsonl as recorded in results-mixed.json", () => {
    const expected = fixture("results-mixed.json")
    expect(readResults(text("results-mixed.jsonl"), expected.ids)).toEqual(expected.poll)
  })

  for (const [name, reason] of [
    ["batch-ended-all-expired.json", "the batch expired before any of its requests ran (0 cancelled, 4 expired)"],
    ["batch-ended-all-canceled.json", "the batch was cancelled before any of its requests ran (4 cancelled, 0 expired)"]
  ] as const) {
    it(`${name}: ${fixture(name).description} (failed, from the counts)`, async () => {
      const { result, sent } = await poll({ [statusUrl]: batchText(name) })
      expect(result).toEqual(Result.succeed({ status: "failed", message: reason }))
      expect(sent).toHaveLength(1)
    })
  }

  it("batch-ended-all-errored.json with results-all-errored.jsonl: every request refused for one reason fails the batch with it", async () => {
    const batch = fixture("batch-ended-all-errored.json").batch
    const { result } = await poll({ [statusUrl]: JSON.stringify(batch), [batch.results_url]: text("results-all-errored.jsonl") })
    expect(result).toEqual(Result.succeed({
      status: "failed",
      message: "every request of the batch was refused: invalid_request_error: model: claude-retired-1 is not available in the Message Batches API"
    }))
  })
})

describe("anthropic batch: results files", () => {
  const succeeded = (id: string) => JSON.stringify({ custom_id: id, result: { type: "succeeded", message: { content: [] } } })
  const errored = (id: string, message: string) =>
    JSON.stringify({ custom_id: id, result: { type: "errored", error: { type: "error", error: { type: "invalid_request_error", message } } } })

  it("a request missing from the file, or answered twice, is answered once; lines of other ids are ignored", () => {
    const read = readResults([succeeded("b"), succeeded("x"), errored("b", "late"), ""].join("\r\n"), ["a", "b"])
    expect(read).toEqual({
      status: "completed",
      results: [
        { id: "a", ok: false, message: "the batch's results have no answer for this request" },
        { id: "b", ok: true, body: JSON.stringify({ content: [] }) }
      ]
    })
  })

  it("requests refused for different reasons, or refused and expired, complete the batch with each reason", () => {
    const different = readResults([errored("a", "one"), errored("b", "two")].join("\n"), ["a", "b"])
    expect(different).toEqual({
      status: "completed",
      results: [
        { id: "a", ok: false, message: "Anthropic refused this request: invalid_request_error: one" },
        { id: "b", ok: false, message: "Anthropic refused this request: invalid_request_error: two" }
      ]
    })
    const expired = readResults([errored("a", "one"), JSON.stringify({ custom_id: "b", result: { type: "expired" } })].join("\n"), ["a", "b"])
    expect(expired).toMatchObject({ status: "completed" })
  })

  it("a file without any request run fails the batch; a result type newer than the codec, or a success without its message, is the request's failure", () => {
    const none = readResults(JSON.stringify({ custom_id: "a", result: { type: "canceled" } }), ["a"])
    expect(none).toEqual({ status: "failed", message: "the batch ended without any of its requests run (each was cancelled, expired or absent from its results)" })
    const newer = readResults(
      [succeeded("a"), JSON.stringify({ custom_id: "b", result: { type: "deferred" } }), JSON.stringify({ custom_id: "c", result: { type: "succeeded" } })].join("\n"),
      ["a", "b", "c"]
    )
    expect(newer).toMatchObject({
      status: "completed",
      results: [
        { ok: true },
        { id: "b", ok: false, message: "the batch ended with a result of type \"deferred\" for this request" },
        { id: "c", ok: false, message: "the batch's result for this request succeeded without a message" }
      ]
    })
  })

  it("a line that is not a result fails the poll (the next poll reads the file again)", async () => {
    const batch = fixture("batch-ended-mixed.json").batch
    const { result } = await poll({ [statusUrl]: JSON.stringify(batch), [batch.results_url]: `${succeeded(ids[0])}\n{"custom_id":` })
    expect(Result.isFailure(result) && result.failure).toBeInstanceOf(ProviderFailure)
    expect(Result.isFailure(result) && result.failure.message).toBe("line 2 of the batch's results is not a result of a message batch")
  })
})

describe("anthropic batch: where the credential goes", () => {
  it("a results_url on another host is read at the configured host's results path instead", async () => {
    const batch = { ...fixture("batch-ended-mixed.json").batch, results_url: "https://elsewhere.example/v1/files/results.jsonl" }
    const own = `${statusUrl}/results`
    const { result, sent } = await poll({ [statusUrl]: JSON.stringify(batch), [own]: text("results-mixed.jsonl") })
    expect(sent.map((call) => call.url)).toEqual([statusUrl, own])
    expect(Result.getOrThrow(result).status).toBe("completed")
  })

  it("an ended batch without results_url (archived) fails; an unknown processing_status or a handle without ids fails the poll", async () => {
    const archived = { ...fixture("batch-ended-mixed.json").batch, results_url: null, archived_at: "2025-11-14T19:02:10Z" }
    expect((await poll({ [statusUrl]: JSON.stringify(archived) })).result).toEqual(Result.succeed({
      status: "failed",
      message: `the results of message batch ${handle.providerBatchId} are no longer available (archived)`
    }))
    const unknown = { ...archived, processing_status: "paused" }
    const { result } = await poll({ [statusUrl]: JSON.stringify(unknown) })
    expect(Result.isFailure(result) && result.failure.message).toContain("unknown processing_status \"paused\"")
    const withoutIds = await poll({ [statusUrl]: batchText("batch-in-progress.json") }, { ...handle, data: {} as any })
    expect(Result.isFailure(withoutIds.result)).toBe(true)
    expect(withoutIds.sent).toHaveLength(0)
  })

  it("the codec's hooks are the provider type's batch", () => {
    expect(anthropicCodec.batch).toBe(anthropicBatch)
  })
})
