/**
 * Fake Gemini batch APIs (`FakeBatchProvider`, test/support/fakeBatch.ts), local HTTP servers
 * speaking Google's wire formats:
 * - the Gemini API (`startAiStudioBatchFake`): `POST /v1beta/models/<m>:batchGenerateContent`
 *   with inline requests (`{request, metadata: {key}}`) answers a long-running operation
 *   `batches/<id>`; `GET /v1beta/batches/<id>` answers it again, `metadata.state`
 *   `BATCH_STATE_*`, and once ended `response.inlinedResponses.inlinedResponses` (the
 *   `metadata.key` of each request, its `GenerateContentResponse` or a `google.rpc.Status`
 *   `error`), or the operation's `error` when it failed; the key in `x-goog-api-key`.
 * - Vertex AI (`startVertexBatchFake`): an OAuth2 token endpoint (`POST /token`, the JWT bearer
 *   grant signed by the service account's key), Cloud Storage's JSON API (upload with
 *   `uploadType=media`, list by prefix, download with `alt=media`) and
 *   `/v1/projects/<p>/locations/<l>/batchPredictionJobs` (create, get): the job reads its JSONL
 *   input from the fake bucket and, once ended, writes `predictions.jsonl` under
 *   `<outputUriPrefix>prediction-model-<time>/`, lines in reverse order (Vertex keeps no order),
 *   each with the `request` as read and its `response`, or a `status` when it failed.
 * Every request needs the credential (Google's 401/403 otherwise); models other than `gemini-*`
 * are not found (404). Expired and cancelled batches
 * keep the answers of the requests that ran (the even ones); the others have none.
 */
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { jwtVerify } from "jose"
import { defaultAnswer, type FakeBatchEnding, type FakeBatchProvider } from "./fakeBatch.ts"
import { geminiAnswer } from "./fakeGemini.ts"
import { serviceAccountJson, serviceAccountKeys } from "./serviceAccount.ts"

interface Reply {
  readonly status: number
  readonly body: string
  readonly contentType?: string
}

const json = (body: unknown, status = 200): Reply => ({ status, body: JSON.stringify(body), contentType: "application/json; charset=UTF-8" })

/** Google's API error (`{"error": {"code", "message", "status"}}`) */
const googleError = (code: number, status: string, message: string): Reply => json({ error: { code, message, status } }, code)

interface Incoming {
  readonly method: string
  readonly path: string
  readonly query: URLSearchParams
  readonly headers: http.IncomingHttpHeaders
  readonly text: string
}

interface FakeBatch {
  readonly id: string
  readonly requests: Array<{ readonly id: string; readonly body: any }>
  readonly ending: FakeBatchEnding
  polls: number
  inFlight: number
}

/** The knobs, the records and the server every fake here shares. */
const startFake = async (route: (request: Incoming, fake: Shared) => Promise<Reply>, basePath: string) => {
  const batches: Array<FakeBatch> = []
  const requests: Array<{ method: string; path: string; headers: Readonly<Record<string, string | Array<string> | undefined>> }> = []
  const sockets = new Set<import("node:net").Socket>()
  const shared: Shared = {
    url: "",
    origin: "",
    ending: "complete",
    pollsUntilDone: 1,
    outage: false,
    refuseCreation: false,
    answer: (_id, body) => defaultAnswer(firstUserText(body)),
    batches,
    requests,
    maxConcurrentPolls: 0,
    pollDelayMs: 0,
    reset() {
      batches.length = 0
      requests.length = 0
      this.ending = "complete"
      this.pollsUntilDone = 1
      this.outage = false
      this.refuseCreation = false
      this.answer = (_id, body) => defaultAnswer(firstUserText(body))
      this.maxConcurrentPolls = 0
      this.pollDelayMs = 0
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy()
        server.close(() => resolve())
      })
  }
  const server = http.createServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (chunk) => chunks.push(chunk))
    req.on("end", () => {
      const raw = req.url ?? "/"
      requests.push({ method: req.method ?? "", path: raw, headers: req.headers })
      const parsed = new URL(raw, "http://fake")
      const incoming = { method: req.method ?? "", path: parsed.pathname, query: parsed.searchParams, headers: req.headers, text: Buffer.concat(chunks).toString("utf8") }
      void route(incoming, shared).then((reply) => {
        res.writeHead(reply.status, { "content-type": reply.contentType ?? "application/json; charset=UTF-8" })
        res.end(reply.body)
      })
    })
  })
  server.on("connection", (socket) => {
    sockets.add(socket)
    socket.on("close", () => sockets.delete(socket))
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  shared.origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  shared.url = `${shared.origin}${basePath}`
  return shared
}

interface Shared extends FakeBatchProvider {
  url: string
  origin: string
  readonly batches: Array<FakeBatch>
  maxConcurrentPolls: number
}

const firstUserText = (body: any): string | undefined => {
  const contents = Array.isArray(body?.contents) ? body.contents : []
  for (const content of contents) {
    if (content?.role !== "user") continue
    const text = (Array.isArray(content.parts) ? content.parts : []).find((part: any) => typeof part?.text === "string")?.text
    if (text !== undefined) return text
  }
  return undefined
}

/** one status request of a batch: counted, delayed, and whether the batch ended with it */
const polled = async (fake: Shared, batch: FakeBatch): Promise<boolean> => {
  batch.inFlight++
  fake.maxConcurrentPolls = Math.max(fake.maxConcurrentPolls, batch.inFlight)
  if (fake.pollDelayMs > 0) await new Promise((resolve) => setTimeout(resolve, fake.pollDelayMs))
  batch.inFlight--
  batch.polls++
  return batch.polls > fake.pollsUntilDone
}

/** which requests of an ended batch have an answer (expired and cancelled batches ran the even ones only) */
const ran = (ending: FakeBatchEnding, index: number) => (ending === "expire" || ending === "cancel" ? index % 2 === 0 : ending !== "fail")

/** the per-request error of a partial batch: what Gemini says of a request it refuses */
const requestError = { code: 3, message: "Request contains an invalid argument." }

const parseBody = (text: string): any => {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

export interface AiStudioBatchFake extends FakeBatchProvider {
  readonly apiKey: string
}

const aiStudioBatchState: Readonly<Record<FakeBatchEnding, string>> = {
  complete: "BATCH_STATE_SUCCEEDED",
  partial: "BATCH_STATE_SUCCEEDED",
  fail: "BATCH_STATE_FAILED",
  expire: "BATCH_STATE_EXPIRED",
  cancel: "BATCH_STATE_CANCELLED"
}

export const startAiStudioBatchFake = async (options: { readonly apiKey?: string } = {}): Promise<AiStudioBatchFake> => {
  const apiKey = options.apiKey ?? "AIza-fake-batch-key"
  let created = 0
  const operation = (batch: FakeBatch, model: string, state: string, extra: Record<string, unknown> = {}) => ({
    name: batch.id,
    metadata: {
      "@type": "type.googleapis.com/google.ai.generativelanguage.v1main.GenerateContentBatch",
      model,
      displayName: `batch ${batch.id}`,
      createTime: "2025-07-01T10:00:00.000000Z",
      updateTime: "2025-07-01T10:00:01.000000Z",
      batchStats: { requestCount: String(batch.requests.length), pendingRequestCount: String(batch.requests.length) },
      state,
      name: batch.id
    },
    ...extra
  })
  const models = new Map<string, string>()
  const fake = await startFake(async (request, fake) => {
    const key = request.headers["x-goog-api-key"]
    if (key === undefined) {
      return googleError(403, "PERMISSION_DENIED", "Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API.")
    }
    if (key !== apiKey) return googleError(400, "INVALID_ARGUMENT", "API key not valid. Please pass a valid API key.")
    const create = /^\/v1beta\/models\/([^/:]+):batchGenerateContent$/.exec(request.path)
    if (create !== null && request.method === "POST") {
      if (fake.refuseCreation) return googleError(500, "INTERNAL", "An internal error has occurred. Please retry or report in https://developers.generativeai.google/guide/troubleshooting")
      if (!create[1].startsWith("gemini-")) {
        return googleError(404, "NOT_FOUND", `models/${create[1]} is not found for API version v1beta, or is not supported for batchGenerateContent. Call ListModels to see the list of available models and their supported methods.`)
      }
      const body = parseBody(request.text)
      // the API takes the JSON names of the proto fields, and their proto names too
      const batch = body?.batch
      const displayName = batch?.displayName ?? batch?.display_name
      const inline = (batch?.inputConfig ?? batch?.input_config)?.requests?.requests
      if (typeof displayName !== "string" || displayName === "") return googleError(400, "INVALID_ARGUMENT", "* GenerateContentBatch.display_name: display_name is required")
      if (!Array.isArray(inline) || inline.length === 0) return googleError(400, "INVALID_ARGUMENT", "* BatchGenerateContentRequest.batch.input_config: requests must not be empty")
      for (const entry of inline) {
        if (!Array.isArray(entry?.request?.contents) || entry.request.contents.length === 0) {
          return googleError(400, "INVALID_ARGUMENT", "* GenerateContentRequest.contents: contents is not specified")
        }
      }
      const record: FakeBatch = {
        id: `batches/fake-batch-${++created}`,
        requests: inline.map((entry: any, index: number) => ({ id: typeof entry?.metadata?.key === "string" ? entry.metadata.key : String(index), body: entry.request })),
        ending: fake.ending,
        polls: 0,
        inFlight: 0
      }
      fake.batches.push(record)
      models.set(record.id, `models/${create[1]}`)
      return json(operation(record, `models/${create[1]}`, "BATCH_STATE_PENDING"))
    }
    const get = /^\/v1beta\/(batches\/[^/:]+)$/.exec(request.path)
    if (get !== null && request.method === "GET") {
      if (fake.outage) return googleError(503, "UNAVAILABLE", "The service is currently unavailable.")
      const batch = fake.batches.find((candidate) => candidate.id === get[1])
      if (batch === undefined) return googleError(404, "NOT_FOUND", `Requested entity was not found.`)
      const model = models.get(batch.id)!
      if (!(await polled(fake, batch))) return json(operation(batch, model, "BATCH_STATE_RUNNING"))
      if (batch.ending === "fail") {
        return json(operation(batch, model, "BATCH_STATE_FAILED", { done: true, error: { code: 3, message: "The batch input is invalid: it could not be parsed." } }))
      }
      const inlinedResponses = batch.requests.flatMap((entry, index): Array<Record<string, unknown>> => {
        if (!ran(batch.ending, index)) return []
        if (batch.ending === "partial" && index % 2 === 1) return [{ error: requestError, metadata: { key: entry.id } }]
        return [{ response: geminiAnswer([{ text: fake.answer(entry.id, entry.body) }]), metadata: { key: entry.id } }]
      })
      const output = { inlinedResponses: { inlinedResponses } }
      return json({
        ...operation(batch, model, aiStudioBatchState[batch.ending]),
        done: true,
        response: { "@type": "type.googleapis.com/google.ai.generativelanguage.v1main.GenerateContentBatchOutput", ...output }
      })
    }
    return googleError(404, "NOT_FOUND", `no such method: ${request.method} ${request.path}`)
  }, "/v1beta/")
  return Object.assign(fake, { apiKey })
}

export interface VertexBatchFake extends FakeBatchProvider {
  /** Cloud Storage's JSON API address (`storage_api_base`) */
  readonly storageBase: string
  /** the service account's key file (JSON), its token_uri this server's */
  readonly serviceAccount: string
  /** the objects in the fake Cloud Storage, by `<bucket>/<name>` */
  readonly objects: Map<string, string>
}

const vertexJobState: Readonly<Record<FakeBatchEnding, string>> = {
  complete: "JOB_STATE_SUCCEEDED",
  partial: "JOB_STATE_SUCCEEDED",
  fail: "JOB_STATE_FAILED",
  expire: "JOB_STATE_EXPIRED",
  cancel: "JOB_STATE_CANCELLED"
}

/** Cloud Storage's error shape (its JSON API predates `status`) */
const storageError = (code: number, message: string, reason: string): Reply => json({ error: { code, message, errors: [{ message, domain: "global", reason }] } }, code)

export const startVertexBatchFake = async (): Promise<VertexBatchFake> => {
  const { privateKey, publicKey } = serviceAccountKeys()
  const clientEmail = "batch-test@fake-project.iam.gserviceaccount.com"
  const tokens = new Set<string>()
  const objects = new Map<string, string>()
  const jobs = new Map<string, Record<string, any>>()
  let created = 0

  const issueToken = async (text: string, origin: string): Promise<Reply> => {
    const form = new URLSearchParams(text)
    if (form.get("grant_type") !== "urn:ietf:params:oauth:grant-type:jwt-bearer") {
      return json({ error: "unsupported_grant_type", error_description: "Invalid grant_type" }, 400)
    }
    try {
      const { payload } = await jwtVerify(form.get("assertion") ?? "", publicKey, { issuer: clientEmail, audience: `${origin}/token` })
      if (payload.scope !== "https://www.googleapis.com/auth/cloud-platform") throw new Error("scope")
    } catch {
      return json({ error: "invalid_grant", error_description: "Invalid JWT Signature." }, 400)
    }
    const token = `ya29.batch-${tokens.size + 1}`
    tokens.add(token)
    return json({ access_token: token, expires_in: 3599, token_type: "Bearer" })
  }

  const authorized = (request: Incoming) => {
    const authorization = request.headers.authorization ?? ""
    return authorization.startsWith("Bearer ") && tokens.has(authorization.slice("Bearer ".length))
  }

  const storage = (request: Incoming, fake: Shared): Reply => {
    const upload = /^\/upload\/storage\/v1\/b\/([^/]+)\/o$/.exec(request.path)
    if (upload !== null && request.method === "POST") {
      if (request.query.get("uploadType") !== "media") return storageError(400, "Upload requests must include an uploadType URL parameter and a URL-encoded name.", "invalid")
      const name = request.query.get("name")
      if (name === null || name === "") return storageError(400, "Required", "required")
      const bucket = decodeURIComponent(upload[1])
      objects.set(`${bucket}/${name}`, request.text)
      return json({
        kind: "storage#object",
        id: `${bucket}/${name}/1`,
        name,
        bucket,
        generation: "1",
        contentType: request.headers["content-type"] ?? "application/octet-stream",
        size: String(Buffer.byteLength(request.text))
      })
    }
    if (fake.outage) return storageError(503, "We encountered an internal error. Please try again.", "backendError")
    const object = /^\/storage\/v1\/b\/([^/]+)\/o\/(.+)$/.exec(request.path)
    if (object !== null && request.method === "GET") {
      const bucket = decodeURIComponent(object[1])
      const name = decodeURIComponent(object[2])
      const content = objects.get(`${bucket}/${name}`)
      if (content === undefined) return storageError(404, `No such object: ${bucket}/${name}`, "notFound")
      if (request.query.get("alt") !== "media") return json({ kind: "storage#object", name, bucket, size: String(Buffer.byteLength(content)) })
      return { status: 200, body: content, contentType: "application/octet-stream" }
    }
    const list = /^\/storage\/v1\/b\/([^/]+)\/o$/.exec(request.path)
    if (list !== null && request.method === "GET") {
      const bucket = decodeURIComponent(list[1])
      const prefix = request.query.get("prefix") ?? ""
      const items = [...objects.keys()]
        .filter((key) => key.startsWith(`${bucket}/${prefix}`))
        .map((key) => ({ kind: "storage#object", name: key.slice(bucket.length + 1), bucket }))
      return json(items.length === 0 ? { kind: "storage#objects" } : { kind: "storage#objects", items })
    }
    return storageError(404, "Not Found", "notFound")
  }

  /** the job's output, written once when it ends: the requests that ran, in reverse order */
  const writeOutput = (job: Record<string, any>, batch: FakeBatch, fake: Shared) => {
    const prefix = /^gs:\/\/([^/]+)\/?(.*)$/.exec(job.outputConfig.gcsDestination.outputUriPrefix)!
    const folder = prefix[2] === "" || prefix[2].endsWith("/") ? prefix[2] : `${prefix[2]}/`
    const directory = `${folder}prediction-model-2025-07-01T10:00:00.000000Z`
    const lines = batch.requests.flatMap((entry, index) => {
      if (!ran(batch.ending, index)) return []
      const base = { processed_time: "2025-07-01T10:05:00.000+00:00", request: entry.body }
      if (batch.ending === "partial" && index % 2 === 1) {
        return [JSON.stringify({
          status: `Bad Request: ${JSON.stringify({ error: { code: 400, message: requestError.message, status: "INVALID_ARGUMENT" } })}`,
          ...base
        })]
      }
      return [JSON.stringify({ status: "", ...base, response: geminiAnswer([{ text: fake.answer(entry.id, entry.body) }]) })]
    })
    objects.set(`${prefix[1]}/${directory}/predictions.jsonl`, lines.reverse().join("\n") + "\n")
    job.outputInfo = { gcsOutputDirectory: `gs://${prefix[1]}/${directory}` }
  }

  const vertex = async (request: Incoming, fake: Shared): Promise<Reply> => {
    const collection = /^\/v1\/projects\/([^/]+)\/locations\/([^/]+)\/batchPredictionJobs$/.exec(request.path)
    if (collection !== null && request.method === "POST") {
      if (fake.refuseCreation) return googleError(500, "INTERNAL", "Internal error encountered.")
      const body = parseBody(request.text)
      if (typeof body?.displayName !== "string" || body.displayName === "") return googleError(400, "INVALID_ARGUMENT", "List of found errors:\t1.Field: batch_prediction_job.display_name; Message: Required field is not set.")
      if (typeof body.model !== "string" || !body.model.startsWith("publishers/google/models/")) {
        return googleError(400, "INVALID_ARGUMENT", `Invalid model: ${body.model}`)
      }
      if (!body.model.startsWith("publishers/google/models/gemini-")) {
        return googleError(404, "NOT_FOUND", `Publisher Model \`projects/${collection[1]}/locations/${collection[2]}/${body.model}\` not found.`)
      }
      const input = body.inputConfig
      const uri = input?.gcsSource?.uris?.[0]
      if (input?.instancesFormat !== "jsonl" || typeof uri !== "string") return googleError(400, "INVALID_ARGUMENT", "inputConfig must be jsonl from gcsSource")
      if (body.outputConfig?.predictionsFormat !== "jsonl" || !String(body.outputConfig?.gcsDestination?.outputUriPrefix).startsWith("gs://")) {
        return googleError(400, "INVALID_ARGUMENT", "outputConfig must be jsonl to gcsDestination")
      }
      const content = objects.get(uri.slice("gs://".length))
      if (content === undefined) return googleError(400, "FAILED_PRECONDITION", `Failed to read the input file ${uri}: not found`)
      const lines = content.split("\n").filter((line) => line.trim() !== "").map((line) => parseBody(line))
      if (lines.some((line) => typeof line?.request !== "object")) return googleError(400, "INVALID_ARGUMENT", `Each line of ${uri} must hold a request`)
      const name = `projects/${collection[1]}/locations/${collection[2]}/batchPredictionJobs/${1000 + ++created}`
      const batch: FakeBatch = {
        id: name,
        requests: lines.map((line, index) => ({ id: line.request.labels?.gateway_inference_id ?? String(index), body: line.request })),
        ending: fake.ending,
        polls: 0,
        inFlight: 0
      }
      fake.batches.push(batch)
      const job = {
        name,
        displayName: body.displayName,
        model: body.model,
        inputConfig: body.inputConfig,
        outputConfig: body.outputConfig,
        state: "JOB_STATE_PENDING",
        createTime: "2025-07-01T10:00:00.000000Z",
        updateTime: "2025-07-01T10:00:00.000000Z"
      }
      jobs.set(name, job)
      return json(job)
    }
    const one = /^\/v1\/(projects\/[^/]+\/locations\/[^/]+\/batchPredictionJobs\/[^/]+)$/.exec(request.path)
    if (one !== null && request.method === "GET") {
      if (fake.outage) return googleError(503, "UNAVAILABLE", "The service is currently unavailable.")
      const job = jobs.get(one[1])
      const batch = fake.batches.find((candidate) => candidate.id === one[1])
      if (job === undefined || batch === undefined) return googleError(404, "NOT_FOUND", `The BatchPredictionJob does not exist.`)
      if (!(await polled(fake, batch))) return json({ ...job, state: "JOB_STATE_RUNNING" })
      if (job.state === "JOB_STATE_PENDING") {
        job.state = vertexJobState[batch.ending]
        if (batch.ending === "fail") job.error = { code: 3, message: "Failed to parse the input file: the JSONL is invalid." }
        else writeOutput(job, batch, fake)
      }
      return json(job)
    }
    return googleError(404, "NOT_FOUND", `no such method: ${request.method} ${request.path}`)
  }

  const fake = await startFake(async (request, fake) => {
    if (request.method === "POST" && request.path === "/token") return issueToken(request.text, fake.origin)
    const isStorage = request.path.startsWith("/storage/") || request.path.startsWith("/upload/storage/")
    if (!authorized(request)) {
      return isStorage
        ? storageError(401, "Invalid Credentials", "authError")
        : googleError(401, "UNAUTHENTICATED", "Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential.")
    }
    return isStorage ? storage(request, fake) : vertex(request, fake)
  }, "/v1/")
  const serviceAccount = serviceAccountJson(privateKey, {
    projectId: "fake-project",
    keyId: "fake-batch-key-1",
    clientEmail,
    clientId: "2",
    tokenUri: `${fake.origin}/token`
  })
  const reset = fake.reset.bind(fake)
  return Object.assign(fake, {
    storageBase: `${fake.origin}/`,
    serviceAccount,
    objects,
    reset: () => {
      reset()
      objects.clear()
      jobs.clear()
    }
  })
}

/** What a test gateway needs to use a fake: its TOML (a model and its provider) and the environment holding the credential. */
export interface FakeBatchGatewayConfig {
  readonly toml: string
  readonly env: Readonly<Record<string, string>>
}

/** `[models.<model>]` on the fake Gemini API, the key in the environment variable `envVar` */
export const aiStudioBatchGatewayConfig = (
  fake: AiStudioBatchFake,
  options: { readonly model?: string; readonly envVar?: string } = {}
): FakeBatchGatewayConfig => {
  const model = options.model ?? "gemini_batch"
  const envVar = options.envVar ?? "GEMINI_BATCH_FAKE_API_KEY"
  return {
    toml: `
[models.${model}]
routing = ["google_ai_studio_gemini"]
[models.${model}.providers.google_ai_studio_gemini]
type = "google_ai_studio_gemini"
model_name = "gemini-2.5-flash"
api_base = "${fake.url}"
api_key_location = "env::${envVar}"
`,
    env: { [envVar]: fake.apiKey }
  }
}

/** `[models.<model>]` on the fake Vertex AI, its batches in the fake bucket, the service account's JSON in `envVar` */
export const vertexBatchGatewayConfig = (
  fake: VertexBatchFake,
  options: { readonly model?: string; readonly envVar?: string } = {}
): FakeBatchGatewayConfig => {
  const model = options.model ?? "vertex_batch"
  const envVar = options.envVar ?? "VERTEX_BATCH_FAKE_CREDENTIALS"
  return {
    toml: `
[models.${model}]
routing = ["gcp_vertex_gemini"]
[models.${model}.providers.gcp_vertex_gemini]
type = "gcp_vertex_gemini"
model_id = "gemini-2.5-flash"
project_id = "fake-project"
location = "us-central1"
api_base = "${fake.url}"
credential_location = "env::${envVar}"
batch = { storage_type = "cloud_storage", input_uri_prefix = "gs://gateway-batches/input/", output_uri_prefix = "gs://gateway-batches/output/", storage_api_base = "${fake.storageBase}" }
`,
    env: { [envVar]: fake.serviceAccount }
  }
}
