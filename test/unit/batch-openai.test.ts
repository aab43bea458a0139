/**
 * OpenAI's Batch API hooks (`openai/batch.ts`) on recorded fixtures (`openai/fixtures/batch/`,
 * `azure/fixtures/batch/`), through the runner with an in-memory transport: the input file as
 * uploaded (one line per request, the body as for a single call), the batch created on it, the
 * statuses that mean "still running", and what each ending's output and error files read as.
 */
import { readFileSync } from "node:fs"
import * as Effect from "effect/Effect"
import { describe, expect, it } from "vitest"
import type { ModelRequest } from "../../src/inference/types.ts"
import { azureProvider } from "../../src/providers/azure/index.ts"
import { batchResults } from "../../src/providers/openai/batchFiles.ts"
import { openAiProvider } from "../../src/providers/openai/index.ts"
import type { BatchClient, BatchOutcome, ProviderCall, ProviderDefinition } from "../../src/providers/types.ts"
import { qualifiedProviderName } from "../../src/providers/types.ts"
import { type HttpCall, type HttpReply, HttpTransport } from "../../src/transport.ts"
import { downloadOf } from "../support/providerStreams.ts"

const ids = ["0192f0c8-5a3e-7d21-9b4f-1c2d3e4f5a60", "0192f0c8-5a3e-7d21-9b4f-1c2d3e4f5a61", "0192f0c8-5a3e-7d21-9b4f-1c2d3e4f5a62"]
const [a, b, c] = ids
const key = "sk-unit-batch-key"
const base = "https://api.openai.test/v1"

const fixture = (folder: string, name: string) =>
  readFileSync(new URL(`../../src/providers/${folder}/fixtures/batch/${name}`, import.meta.url), "utf8")
const openAi = (name: string) => fixture("openai", name)

const request = (text: string): ModelRequest => ({
  system: "Be brief.",
  messages: [{ role: "user", content: [{ type: "text", text }] }],
  params: { max_tokens: 50 },
  functionType: "chat",
  jsonMode: "off",
  providerTools: []
})

const call = (text: string, over: Partial<ProviderCall> = {}): ProviderCall => ({
  request: request(text),
  apiKey: key,
  extraBody: [],
  extraHeaders: [],
  modelName: "m",
  providerName: "p",
  qualifiedName: qualifiedProviderName("m", "p"),
  ...over
})

const clientOf = (definition: ProviderDefinition, settings: Record<string, unknown>, modelName = "gpt-4o-mini"): BatchClient =>
  definition.make({
    name: "p",
    type: definition.type,
    modelName,
    settings,
    credential: { kind: "static", value: key },
    extraBody: [],
    extraHeaders: [],
    timeouts: {}
  }).batch!

/** A provider in memory: each request answered by `METHOD url` (a text, or a reply), everything sent recorded. */
const provider = (routes: Record<string, string | HttpReply | Array<string>>) => {
  const sent: Array<HttpCall> = []
  const post = (http: HttpCall) =>
    Effect.sync((): HttpReply => {
      sent.push(http)
      const route = routes[`${http.method ?? "POST"} ${http.url}`]
      const next = Array.isArray(route) ? route.shift() : route
      if (next === undefined) return { status: 404, text: `{"error": {"message": "no route for ${http.method} ${http.url}"}}` }
      return typeof next === "string" ? { status: 200, text: next } : next
    })
  // result files are downloaded a line at a time, in small reads here
  const transport = HttpTransport.of({ post, postStream: () => Effect.die("no stream"), download: downloadOf(post) })
  const run = <A, E>(effect: Effect.Effect<A, E, HttpTransport>) => Effect.runPromise(Effect.provideService(effect, HttpTransport, transport))
  return { sent, run }
}

/** the file part of a multipart upload */
const uploadedFile = (upload: HttpCall) => {
  const boundary = /boundary=(.+)$/.exec(upload.headers["content-type"])![1]
  const parts = upload.body.split(`--${boundary}`)
  const file = parts.find((part) => part.includes('name="file"'))!
  const [head, content] = file.split("\r\n\r\n")
  return { head, content: content.slice(0, -2), purpose: parts.find((part) => part.includes('name="purpose"'))!.split("\r\n\r\n")[1].slice(0, -2) }
}

const handle = { providerBatchId: "batch_6750a1b2c3d4e5f60718293a", data: { input_file_id: "file-9GaU4Rk7AdbZ3x5JfTvNxQ", custom_ids: ids } }
const pollCall = { apiKey: key, qualifiedName: qualifiedProviderName("m", "p"), extraHeaders: [] }
const batchUrl = `GET ${base}/batches/${handle.providerBatchId}`
const content = (fileId: string) => `GET ${base}/files/${fileId}/content`

const answered = (text: string) => ({
  output: [{ type: "text", text }],
  usage: { input_tokens: 14, output_tokens: 3, cached_input_tokens: 0 },
  finishReason: "stop"
})

const withStatus = (batch: string, status: string) => JSON.stringify({ ...JSON.parse(batch), status })

describe("openai batch: start", () => {
  const client = clientOf(openAiProvider, { api_base: base })

  it("uploads one line per request (custom_id, POST, /v1/chat/completions, the single call's body), then creates a 24h batch on the file", async () => {
    const { sent, run } = provider({ [`POST ${base}/files`]: openAi("file.json"), [`POST ${base}/batches`]: openAi("created.json") })
    const started = await run(client.start(ids.map((id, index) => ({ id, call: call(`Hi ${"ABC"[index]}`) }))))
    expect(sent.map((http) => `${http.method} ${http.url}`)).toEqual([`POST ${base}/files`, `POST ${base}/batches`])
    const upload = uploadedFile(sent[0])
    expect(sent[0].headers["content-type"]).toMatch(/^multipart\/form-data; boundary=/)
    expect(upload.purpose).toBe("batch")
    expect(upload.head).toContain(`filename="batch_${a}.jsonl"`)
    expect(upload.content).toBe(openAi("input.jsonl"))
    expect(JSON.parse(sent[1].body)).toEqual({ input_file_id: "file-9GaU4Rk7AdbZ3x5JfTvNxQ", endpoint: "/v1/chat/completions", completion_window: "24h" })
    for (const http of sent) expect(http.headers.authorization).toBe(`Bearer ${key}`)
    expect(started.handle).toEqual(handle)
    // the raw request of each inference is its line's body
    expect(started.rawRequests.map((raw) => JSON.parse(raw))).toEqual(openAi("input.jsonl").trim().split("\n").map((line) => JSON.parse(line).body))
  })

  it("sends Responses API lines (/v1/responses) for a provider in responses mode", async () => {
    const responses = clientOf(openAiProvider, { api_base: base, api_type: "responses" })
    const { sent, run } = provider({ [`POST ${base}/files`]: openAi("file.json"), [`POST ${base}/batches`]: openAi("created.json") })
    await run(responses.start([{ id: a, call: call("Hi A") }]))
    expect(uploadedFile(sent[0]).content).toBe(fixture("openai/responses", "input.jsonl"))
    expect(JSON.parse(sent[1].body).endpoint).toBe("/v1/responses")
  })

  it("fails with OpenAI's message when the upload is refused, without creating a batch", async () => {
    const refusal = { status: 400, text: JSON.stringify({ error: { message: "Invalid file format for Batch API. Must be .jsonl", type: "invalid_request_error", param: null, code: null } }) }
    const { sent, run } = provider({ [`POST ${base}/files`]: refusal })
    const failure = await run(Effect.flip(client.start([{ id: a, call: call("Hi") }])))
    expect(failure).toMatchObject({ status: 400, message: "HTTP 400: Invalid file format for Batch API. Must be .jsonl" })
    expect(sent).toHaveLength(1)
  })
})

describe("openai batch: poll", () => {
  const client = clientOf(openAiProvider, { api_base: base })
  const poll = (routes: Record<string, string | HttpReply>) => {
    const { sent, run } = provider(routes)
    return { sent, outcome: run(client.poll(handle, pollCall)) }
  }

  it.each(["validating", "in_progress", "finalizing", "cancelling"])("reads %s as pending", async (status) => {
    const { sent, outcome } = poll({ [batchUrl]: withStatus(openAi("in-progress.json"), status) })
    expect(await outcome).toEqual({ status: "pending" })
    expect(sent).toHaveLength(1)
  })

  it("reads a completed batch's output and error files: answers parsed as single calls, a request's error with its status", async () => {
    const { sent, outcome } = poll({
      [batchUrl]: openAi("completed.json"),
      [content("file-Output7Yh2cQ1ZpW")]: openAi("output.jsonl"),
      [content("file-Errors3Lk8vB6TqM")]: openAi("errors.jsonl")
    })
    const polled = await outcome as Extract<BatchOutcome, { status: "completed" }>
    expect(polled.status).toBe("completed")
    expect(polled.results.map((result) => result.id)).toEqual(ids)
    expect(polled.results[0]).toMatchObject({ ok: true, response: answered("Hello there, A.") })
    expect(polled.results[2]).toMatchObject({ ok: true, response: answered("Hello there, C.") })
    expect(polled.results[1]).toEqual({
      id: b,
      ok: false,
      message: "HTTP 400: This model's maximum context length is 128000 tokens. However, your messages resulted in 130001 tokens. Please reduce the length of the messages."
    })
    // the raw response of an answer is the body of its line
    const line = openAi("output.jsonl").split("\n").map((text) => text === "" ? undefined : JSON.parse(text)).find((parsed) => parsed?.custom_id === a)
    expect(JSON.parse((polled.results[0] as any).response.rawResponse)).toEqual(line.response.body)
    expect(sent.every((http) => http.method === "GET" && http.headers.authorization === `Bearer ${key}`)).toBe(true)
    expect(sent[1].maxResponseBytes).toBeGreaterThan(32 * 1024 * 1024)
  })

  it("reads an expired batch as completed: what ran answered, the others with OpenAI's expiry error", async () => {
    const polled = await poll({
      [batchUrl]: openAi("expired.json"),
      [content("file-Output5Rt9wE2XnK")]: openAi("output-partial.jsonl"),
      [content("file-Expired4Gm7sD1VbJ")]: openAi("expired-errors.jsonl")
    }).outcome
    expect(polled).toMatchObject({
      status: "completed",
      results: [
        { id: a, ok: true, response: answered("Hello there, A.") },
        { id: b, ok: false, message: "This request could not be executed before the completion window expired. (batch_expired)" },
        { id: c, ok: false, message: "This request could not be executed before the completion window expired. (batch_expired)" }
      ]
    })
  })

  it("reads a batch cancelled on OpenAI's side as completed, the requests that did not run with the cancellation", async () => {
    const polled = await poll({
      [batchUrl]: openAi("cancelled.json"),
      [content("file-Output5Rt9wE2XnK")]: openAi("output-partial.jsonl"),
      [content("file-Cancelled8Pq3zN5HcF")]: openAi("cancelled-errors.jsonl")
    }).outcome
    expect(polled).toMatchObject({
      status: "completed",
      results: [
        { id: a, ok: true },
        { id: b, ok: false, message: "This request was not executed because the batch was cancelled. (batch_cancelled)" },
        { id: c, ok: false, message: "This request was not executed because the batch was cancelled. (batch_cancelled)" }
      ]
    })
  })

  it("reads an expired batch in which nothing ran as failed", async () => {
    const expired = JSON.stringify({ ...JSON.parse(openAi("expired.json")), output_file_id: null })
    const polled = await poll({ [batchUrl]: expired, [content("file-Expired4Gm7sD1VbJ")]: openAi("expired-errors.jsonl") }).outcome
    expect(polled).toEqual({ status: "failed", message: "the provider's batch expired before any request ran" })
  })

  it("reads a failed batch with each of OpenAI's reasons and the line it is about", async () => {
    const { sent, outcome } = poll({ [batchUrl]: openAi("failed.json") })
    expect(await outcome).toEqual({
      status: "failed",
      message: "the provider's batch failed: invalid_json_line: This line is not parseable as valid JSON. (line 2); " +
        "duplicate_custom_id: The custom_id for this request is a duplicate of another request. (line 3)"
    })
    expect(sent).toHaveLength(1)
  })

  it("fails the poll with the status of an answer outside 2xx (an outage), and says why the batch object is unreadable", async () => {
    const outage = { status: 503, text: JSON.stringify({ error: { message: "The server is overloaded or not ready yet.", type: "server_error" } }) }
    await expect(poll({ [batchUrl]: outage }).outcome).rejects.toMatchObject({ status: 503, message: "HTTP 503: The server is overloaded or not ready yet." })
    await expect(poll({ [batchUrl]: "<html>gateway timeout</html>" }).outcome).rejects.toMatchObject({
      message: "the provider's answer is not a batch object: <html>gateway timeout</html>"
    })
  })

  it("refuses a handle it did not make", async () => {
    const { run } = provider({})
    await expect(run(client.poll({ providerBatchId: "batch_x", data: { other: 1 } }, pollCall))).rejects.toMatchObject({
      message: "the stored handle of batch batch_x is not an OpenAI batch's"
    })
  })
})

describe("openai batch: reading result files", () => {
  const output = openAi("output.jsonl")

  it("answers every submitted id once, in order: a request without a line with the ending's explanation, a second line of an id and others' lines ignored", () => {
    const stray = `{"id": "batch_req_x", "custom_id": "not-submitted", "response": {"status_code": 200, "request_id": "r", "body": {}}, "error": null}\nnot json\n`
    const polled = batchResults("completed", [a, b, c], [output + stray, output])
    expect(polled).toMatchObject({
      status: "completed",
      results: [{ id: a, ok: true }, { id: b, ok: false, message: "the provider's batch completed without an answer to this request" }, { id: c, ok: true }]
    })
  })

  it("explains requests missing from an expired or cancelled batch's files", () => {
    const partial = openAi("output-partial.jsonl")
    expect(batchResults("expired", [a, b], [partial])).toMatchObject({
      results: [{ ok: true }, { id: b, ok: false, message: "the provider's batch expired before this request ran" }]
    })
    expect(batchResults("cancelled", [a, b], [partial])).toMatchObject({
      results: [{ ok: true }, { id: b, ok: false, message: "the provider's batch was cancelled before this request ran" }]
    })
  })

  it("fails a batch that ended without a result: completed with no line, cancelled before anything ran", () => {
    expect(batchResults("completed", [a], [])).toEqual({ status: "failed", message: "the provider's batch completed without any result" })
    expect(batchResults("cancelled", [b, c], [openAi("cancelled-errors.jsonl")])).toEqual({
      status: "failed",
      message: "the provider's batch was cancelled before any request ran"
    })
  })

  it("counts a request the model refused as run: a completed batch of refusals is completed", () => {
    expect(batchResults("expired", [b], [openAi("errors.jsonl")])).toMatchObject({ status: "completed", results: [{ id: b, ok: false }] })
  })
})

describe("azure batch", () => {
  const endpoint = "https://my-resource.openai.azure.com"
  const version = "api-version=2024-10-21"
  const azure = (name: string) => fixture("azure", name)
  const client = clientOf(azureProvider, { endpoint, deployment_id: "gpt-4o-mini-batch" }, "")
  const pending = { status: 201, text: azure("file-pending.json") }

  it("uploads lines to /chat/completions naming the deployment, waits until Azure has processed the file, then creates the batch", async () => {
    const { sent, run } = provider({
      [`POST ${endpoint}/openai/files?${version}`]: pending,
      [`GET ${endpoint}/openai/files/file-21006e70789246658b86a1fc205899a4?${version}`]: [azure("file-pending.json"), azure("file-processed.json")],
      [`POST ${endpoint}/openai/batches?${version}`]: azure("created.json")
    })
    // an edit of `model` does not reach Azure: a single call names the deployment in its URL, a batch line in its body
    const edited = call("Hi B", { extraBody: [{ pointer: "/model", value: "gpt-4o" }] })
    const started = await run(client.start([{ id: a, call: call("Hi A") }, { id: b, call: edited }]))
    expect(sent.map((http) => `${http.method} ${http.url}`)).toEqual([
      `POST ${endpoint}/openai/files?${version}`,
      `GET ${endpoint}/openai/files/file-21006e70789246658b86a1fc205899a4?${version}`,
      `GET ${endpoint}/openai/files/file-21006e70789246658b86a1fc205899a4?${version}`,
      `POST ${endpoint}/openai/batches?${version}`
    ])
    expect(uploadedFile(sent[0]).content).toBe(azure("input.jsonl"))
    expect(JSON.parse(sent[3].body)).toEqual({ input_file_id: "file-21006e70789246658b86a1fc205899a4", endpoint: "/chat/completions", completion_window: "24h" })
    for (const http of sent) {
      expect(http.headers["api-key"]).toBe(key)
      expect(http.headers.authorization).toBeUndefined()
    }
    expect(started.handle.providerBatchId).toBe("batch_fe3f047a-de39-4068-9008-346795bfc1db")
  })

  it("fails with Azure's reason when it cannot process the upload", async () => {
    const { sent, run } = provider({
      [`POST ${endpoint}/openai/files?${version}`]: pending,
      [`GET ${endpoint}/openai/files/file-21006e70789246658b86a1fc205899a4?${version}`]: azure("file-error.json")
    })
    await expect(run(client.start([{ id: a, call: call("Hi") }]))).rejects.toMatchObject({
      message: expect.stringContaining("the provider refused the uploaded batch file file-21006e70789246658b86a1fc205899a4 (status error): ")
    })
    expect(sent.some((http) => http.url.includes("/batches"))).toBe(false)
  })

  it("reads Azure's capitalised statuses as pending and its output (content filter results beside the choices) as answers", async () => {
    const batch = `GET ${endpoint}/openai/batches/batch_fe3f047a-de39-4068-9008-346795bfc1db?${version}`
    const azureHandle = { providerBatchId: "batch_fe3f047a-de39-4068-9008-346795bfc1db", data: { input_file_id: "file-21006e70789246658b86a1fc205899a4", custom_ids: [a, b] } }
    const running = provider({ [batch]: azure("created.json") })
    expect(await running.run(client.poll(azureHandle, pollCall))).toEqual({ status: "pending" })
    const done = provider({
      [batch]: azure("completed.json"),
      [`GET ${endpoint}/openai/files/file-f2ddaf43-b48b-46dd-b264-90da10c7a85b/content?${version}`]: azure("output.jsonl")
    })
    expect(await done.run(client.poll(azureHandle, pollCall))).toMatchObject({
      status: "completed",
      results: [
        { id: a, ok: true, response: { output: [{ type: "text", text: "Microsoft was founded on April 4, 1975, by Bill Gates and Paul Allen." }], usage: { input_tokens: 27, output_tokens: 17 } } },
        { id: b, ok: true, response: { output: [{ type: "text", text: "The first Xbox was released on November 15, 2001." }] } }
      ]
    })
  })
})
