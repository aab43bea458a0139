/**
 * The Gemini batch hooks on recorded fixtures (src/providers/gemini/fixtures/batch/): what each
 * step sends (the Gemini API's inline batch; Vertex AI's JSONL upload to Cloud Storage and its
 * batch prediction job) and what each state of a batch reads as (pending, failed, completed
 * with answers, per-request errors and the requests a batch ended without answering).
 */
import * as fs from "node:fs"
import * as path from "node:path"
import * as Effect from "effect/Effect"
import { describe, expect, it } from "vitest"
import type { BatchDownload, BatchExchange, BatchExchangeRequest, BatchHandle, BatchItem, BatchPoll } from "../../src/providers/codec.ts"
import { TextBody } from "../../src/providers/codec.ts"
import { aiStudioCodec, vertexCodec } from "../../src/providers/gemini/index.ts"
import { parseGeminiResponse } from "../../src/providers/gemini/response.ts"
import { inputLine } from "../../src/providers/gemini/vertexBatch.ts"
import { ProviderFailure } from "../../src/providers/failure.ts"

const fixtures = path.join(import.meta.dirname, "../../src/providers/gemini/fixtures/batch")
const text = (name: string) => fs.readFileSync(path.join(fixtures, name), "utf8")
const fixture = (name: string) => JSON.parse(text(name))
const items: ReadonlyArray<BatchItem> = fixture("items.json").items
const [a, b] = items.map((item) => item.id)

/** An exchange (and a download, a line at a time) answering from `replies` in order, recording what it was asked. */
const exchangeOf = (replies: ReadonlyArray<string | ProviderFailure>) => {
  const sent: Array<BatchExchangeRequest> = []
  const exchange: BatchExchange = (request) => {
    sent.push(request)
    const reply = replies[sent.length - 1]
    if (reply === undefined) return Effect.fail(new ProviderFailure({ message: `unexpected request ${request.method} ${request.url}`, timedOut: false }))
    return reply instanceof ProviderFailure ? Effect.fail(reply) : Effect.succeed(reply)
  }
  const download: BatchDownload = (request, each) =>
    Effect.flatMap(exchange(request), (text) => {
      const lines = text.split("\n")
      for (let index = 0; index < lines.length; index++) {
        const stop = each(lines[index], index + 1)
        if (stop !== undefined) return Effect.fail(stop)
      }
      return Effect.void
    })
  return { exchange, download, sent }
}

const run = <A>(effect: Effect.Effect<A, ProviderFailure>) => Effect.runPromise(effect)
const failureOf = <A>(effect: Effect.Effect<A, ProviderFailure>) => Effect.runPromise(Effect.flip(effect))

const studioTarget = aiStudioCodec.target({ api_base: "https://studio.test/v1beta" }, "gemini-2.5-flash")
const studio = aiStudioCodec.batch!
const studioHandle: BatchHandle = { providerBatchId: "batches/123456abcdef", data: { ids: [a, b] } }
const studioPoll = (reply: string) => {
  const { exchange, download, sent } = exchangeOf([reply])
  return run(studio.poll(studioTarget, studioHandle, exchange, download)).then((poll) => ({ poll, sent }))
}

const completed = (poll: BatchPoll) => {
  if (poll.status !== "completed") throw new Error(`expected a completed poll, got ${JSON.stringify(poll)}`)
  return poll.results
}

describe("google_ai_studio_gemini batches (inline requests)", () => {
  it("start: one batchGenerateContent with each body as built and its id as metadata.key; the operation's name is the batch id", async () => {
    const { exchange, sent } = exchangeOf([text("ai-studio/created.json")])
    const handle = await run(studio.start(studioTarget, items, exchange))
    expect(sent).toEqual([{ method: "POST", url: "https://studio.test/v1beta/models/gemini-2.5-flash:batchGenerateContent", body: fixture("ai-studio/create-request.json") }])
    expect(handle).toEqual({ providerBatchId: "batches/123456abcdef", data: { ids: [a, b] } })
  })

  it("start: an answer without a batch name fails the start", async () => {
    const { exchange } = exchangeOf([JSON.stringify({ done: false })])
    expect((await failureOf(studio.start(studioTarget, items, exchange))).message).toContain("without naming it")
  })

  it("poll: GET <api_base><batch name>; pending and running are pending", async () => {
    const { poll, sent } = await studioPoll(text("ai-studio/running.json"))
    expect(poll).toEqual({ status: "pending" })
    expect(sent[0]).toMatchObject({ method: "GET", url: "https://studio.test/v1beta/batches/123456abcdef" })
    expect((await studioPoll(text("ai-studio/created.json"))).poll).toEqual({ status: "pending" })
  })

  it("poll: a succeeded batch's answers by key, a per-request error with its code", async () => {
    const results = completed((await studioPoll(text("ai-studio/succeeded.json"))).poll)
    expect(results.map((result) => result.id)).toEqual([a, b])
    const [answered, refused] = results
    if (!answered.ok) throw new Error("expected an answer")
    expect(parseGeminiResponse(answered.body)).toMatchObject({ output: [{ type: "text", text: "4" }], usage: { input_tokens: 9, output_tokens: 3 } })
    expect(refused).toEqual({ id: b, ok: false, message: "Request contains an invalid argument. (code 3)" })
  })

  it("poll: answers without keys are matched by position; ids the batch does not have are dropped; a missing answer is said so", async () => {
    const operation = fixture("ai-studio/succeeded.json")
    const answer = operation.response.inlinedResponses.inlinedResponses[0].response
    operation.response.inlinedResponses.inlinedResponses = [{ response: answer }, { response: answer, metadata: { key: "someone-else" } }]
    const results = completed((await studioPoll(JSON.stringify(operation))).poll)
    expect(results[0]).toMatchObject({ id: a, ok: true })
    expect(results[1]).toEqual({ id: b, ok: false, message: "the provider's batch finished without an answer to this request" })
  })

  it("poll: a failed batch fails with the operation's error", async () => {
    expect((await studioPoll(text("ai-studio/failed.json"))).poll).toEqual({
      status: "failed",
      message: "the provider's batch failed: Invalid batch input: the requests could not be parsed. (code 3)"
    })
  })

  it("poll: an expired batch without answers fails; a cancelled one keeps what ran, the rest said cancelled", async () => {
    expect((await studioPoll(text("ai-studio/expired.json"))).poll).toEqual({ status: "failed", message: "the batch expired before any request ran" })
    const results = completed((await studioPoll(text("ai-studio/cancelled.json"))).poll)
    expect(results[0]).toEqual({ id: a, ok: false, message: "the batch was cancelled on the provider's side before this request ran" })
    expect(results[1]).toMatchObject({ id: b, ok: true })
  })

  it("poll: a handle without its ids fails rather than losing requests", async () => {
    const { exchange, download } = exchangeOf([text("ai-studio/succeeded.json")])
    const failure = await failureOf(studio.poll(studioTarget, { providerBatchId: "batches/x", data: {} }, exchange, download))
    expect(failure.message).toContain("lacks the ids")
  })
})

const storage = {
  storage_type: "cloud_storage",
  input_uri_prefix: "gs://gateway-batches/input",
  output_uri_prefix: "gs://gateway-batches/output/",
  storage_api_base: "https://storage.test"
}
const vertexTarget = vertexCodec.target(
  { project_id: "proj", location: "us-central1", model_id: "gemini-2.5-flash", api_base: "https://vertex.test/v1/", batch: storage },
  ""
)
const vertex = vertexCodec.batch!
const jobName = "projects/123456789/locations/us-central1/batchPredictionJobs/4567"
const vertexHandle: BatchHandle = { providerBatchId: jobName, data: { ids: [a, b] } }
const outputFolder = "output/prediction-model-2025-07-01T10:00:00.123456Z"
const vertexPoll = (replies: ReadonlyArray<string | ProviderFailure>) => {
  const { exchange, download, sent } = exchangeOf(replies)
  return run(vertex.poll(vertexTarget, vertexHandle, exchange, download)).then((poll) => ({ poll, sent }))
}
const finished = (job: string) => [text(job), text("vertex/listing.json"), text("vertex/predictions.jsonl")]

describe("gcp_vertex_gemini batches (batch prediction jobs through Cloud Storage)", () => {
  it("start: the JSONL uploaded under input_uri_prefix (each body as built, its id a label), then the job reading it", async () => {
    const { exchange, sent } = exchangeOf(["{}", text("vertex/created.json")])
    const handle = await run(vertex.start(vertexTarget, items, exchange))
    expect(sent[0]).toEqual({
      method: "POST",
      url: `https://storage.test/upload/storage/v1/b/gateway-batches/o?uploadType=media&name=${encodeURIComponent(`input/gateway-batch-${a}.jsonl`)}`,
      body: new TextBody("application/jsonl", text("vertex/input.jsonl"))
    })
    expect(sent[1]).toEqual({
      method: "POST",
      url: "https://vertex.test/v1/projects/proj/locations/us-central1/batchPredictionJobs",
      body: fixture("vertex/create-request.json")
    })
    expect(handle).toEqual({ providerBatchId: jobName, data: { ids: [a, b] } })
  })

  it("a request's own labels are kept beside the id", () => {
    expect(JSON.parse(inputLine("id-1", { contents: [], labels: { team: "search" } }))).toEqual({
      request: { contents: [], labels: { team: "search", gateway_inference_id: "id-1" } }
    })
  })

  it("poll: GET <api_base><job name>; queued, pending and running are pending", async () => {
    const { poll, sent } = await vertexPoll([text("vertex/running.json")])
    expect(poll).toEqual({ status: "pending" })
    expect(sent).toEqual([{ method: "GET", url: `https://vertex.test/v1/${jobName}` }])
    expect((await vertexPoll([JSON.stringify({ name: jobName, state: "JOB_STATE_QUEUED" })])).poll).toEqual({ status: "pending" })
  })

  it("poll: a succeeded job's predictions*.jsonl listed and read, answers matched by label whatever their order", async () => {
    const { poll, sent } = await vertexPoll(finished("vertex/succeeded.json"))
    expect(sent.slice(1).map((request) => request.url)).toEqual([
      `https://storage.test/storage/v1/b/gateway-batches/o?prefix=${encodeURIComponent(`${outputFolder}/`)}`,
      `https://storage.test/storage/v1/b/gateway-batches/o/${encodeURIComponent(`${outputFolder}/predictions.jsonl`)}?alt=media`
    ])
    const [answered, refused] = completed(poll)
    if (!answered.ok) throw new Error("expected an answer")
    expect(answered.id).toBe(a)
    expect(parseGeminiResponse(answered.body)).toMatchObject({ output: [{ type: "text", text: "4" }], usage: { input_tokens: 9, output_tokens: 3 } })
    expect(refused).toMatchObject({ id: b, ok: false })
    expect(!refused.ok && refused.message).toContain("Please use a valid role: user, model.")
  })

  it("poll: a partially succeeded job is read the same way", async () => {
    expect(completed((await vertexPoll(finished("vertex/partially-succeeded.json"))).poll).map((result) => result.ok)).toEqual([true, false])
  })

  it("poll: every page of the listing is read", async () => {
    const listing = fixture("vertex/listing.json")
    const first = JSON.stringify({ kind: "storage#objects", items: [listing.items[1]], nextPageToken: "page 2" })
    const second = JSON.stringify({ kind: "storage#objects", items: [listing.items[0]] })
    const { poll, sent } = await vertexPoll([text("vertex/succeeded.json"), first, second, text("vertex/predictions.jsonl")])
    expect(sent[2].url).toContain("&pageToken=page%202")
    expect(completed(poll)[0]).toMatchObject({ id: a, ok: true })
  })

  it("poll: a cancelled job keeps the answers it wrote; an unreadable line leaves its request unanswered", async () => {
    const lines = text("vertex/predictions.jsonl").split("\n")
    const { poll } = await vertexPoll([text("vertex/cancelled.json"), text("vertex/listing.json"), `${lines[1]}\n{"status": "", "request": \n`])
    expect(completed(poll)).toEqual([
      expect.objectContaining({ id: a, ok: true }),
      { id: b, ok: false, message: "the batch was cancelled on the provider's side before this request ran" }
    ])
  })

  it("poll: a failed job without output fails with its error; an expired one says it expired", async () => {
    expect((await vertexPoll([text("vertex/failed.json")])).poll).toEqual({
      status: "failed",
      message: `the provider's batch failed: Failed to import data. Not found: gs://gateway-batches/input/gateway-batch-${a}.jsonl (code 3)`
    })
    expect((await vertexPoll([text("vertex/expired.json")])).poll).toEqual({ status: "failed", message: "the batch expired before any request ran" })
  })

  it("a provider without batch settings, or naming a deployed endpoint, cannot start a batch: unsupported, saying what to set", async () => {
    const { exchange, sent } = exchangeOf([])
    const bare = vertexCodec.target({ project_id: "proj", location: "us-central1", model_id: "gemini-2.5-flash" }, "")
    const failure = await failureOf(vertex.start(bare, items, exchange))
    expect(failure.unsupported).toBe(true)
    expect(failure.message).toContain("[provider_types.gcp_vertex_gemini.batch]")
    const endpoint = vertexCodec.target({ project_id: "proj", location: "us-central1", endpoint_id: "42", batch: storage }, "")
    expect((await failureOf(vertex.start(endpoint, items, exchange))).message).toContain("model_id")
    expect(sent).toEqual([])
  })

  it("the default Cloud Storage address and the location's host", async () => {
    const target = vertexCodec.target({ project_id: "proj", location: "europe-west4", model_id: "gemini-2.5-pro", batch: { ...storage, storage_api_base: undefined } }, "")
    const { exchange, sent } = exchangeOf(["{}", text("vertex/created.json")])
    await run(vertex.start(target, items, exchange))
    expect(sent.map((request) => request.url.split("?")[0])).toEqual([
      "https://storage.googleapis.com/upload/storage/v1/b/gateway-batches/o",
      "https://europe-west4-aiplatform.googleapis.com/v1/projects/proj/locations/europe-west4/batchPredictionJobs"
    ])
  })
})
